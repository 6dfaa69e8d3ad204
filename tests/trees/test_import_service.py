"""tree_import: every item checked before anything is kept, all or nothing
unless the caller asks to skip bad items, and existing items only replaced
when asked."""

import gzip
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.db import DataError

from tests.factories import ChainTreeFactory, DatasetFactory, UserFactory
from trees import services
from trees.models import ConversationTree, Dataset, Message
from trees.services import dataset_get_or_create, tree_import
from trees.validation import ImportLimits

pytestmark = pytest.mark.django_db


def item(item_id: str, *reply_ids: str, **extra) -> dict:
    return {
        "id": item_id,
        "tree": {
            "id": "root",
            "role": "user",
            "content": f"question of {item_id}",
            "children": [
                {"id": reply, "role": "assistant", "content": f"answer {reply}"} for reply in reply_ids
            ],
        },
        **extra,
    }


def jsonl(*items: dict) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(one) + "\n" for one in items).encode())


def run(dataset, source, format_name="potato", **options):
    return tree_import(dataset=dataset, source=source, format_name=format_name, **options)


def counts() -> tuple[int, int, int]:
    return Dataset.objects.count(), ConversationTree.objects.count(), Message.objects.count()


def errors(report) -> list[str]:
    return [str(issue) for issue in report.errors]


def test_it_imports_the_documented_item_keeping_node_ids(fixture_path):
    dataset = DatasetFactory(name="demo")

    report = run(dataset, fixture_path("potato/seed_conversation.json").open("rb"))

    assert report.committed
    assert report.summary() == "imported into demo: 1 tree created, 4 messages"
    tree = ConversationTree.objects.get(dataset=dataset)
    assert tree.external_id == "conv_001"
    assert sorted(
        tree.messages.values_list("external_id", "parent__external_id", "role", "depth", "position")
    ) == [
        ("resp_a", "root", "assistant", 1, 0),
        ("resp_b", "root", "assistant", 1, 1),
        ("root", None, "user", 0, 0),
        ("user_2", "resp_a", "user", 2, 0),
    ]


def test_it_keeps_item_and_node_metadata(fixture_path):
    dataset = DatasetFactory()
    source = item("c1", "a", ground_truth="a")
    source["tree"]["children"][0]["score"] = 4

    run(dataset, jsonl(source))

    tree = ConversationTree.objects.get()
    assert tree.metadata == {"ground_truth": "a"}
    assert tree.messages.get(external_id="a").metadata == {"score": 4}


def test_it_records_the_author_it_is_given():
    alice = UserFactory(username="alice")

    run(DatasetFactory(), jsonl(item("c1", "a")), author_id=alice.pk)

    assert set(Message.objects.values_list("author__username", flat=True)) == {"alice"}


def test_it_writes_nothing_when_any_item_is_bad_and_lists_every_problem():
    dataset = DatasetFactory(name="demo")
    before = counts()
    bad_role = item("c2", "a")
    bad_role["tree"]["children"][0]["role"] = "robot"
    duplicate = item("c4", "a", "a")

    report = run(dataset, jsonl(item("c1", "a"), bad_role, item("c3", "b"), duplicate, item("c1")))

    assert not report.committed
    assert counts() == before
    assert errors(report) == [
        'line 2: tree.children[0].role: unknown role "robot" '
        "(expected user, assistant, system (or bot, gpt, human, model, prompter))",
        'line 4: tree.children[1]: duplicate node id "a" (first at tree.children[0])',
        'line 5: duplicate item id "c1" (first at line 1)',
    ]
    assert (report.trees_created, report.messages, report.items_read) == (0, 0, 5)
    assert report.summary() == "nothing imported into demo: 3 errors in 5 items"


def test_it_imports_the_good_items_and_lists_every_bad_one_when_asked_to_skip():
    dataset = DatasetFactory(name="demo")
    missing_text = item("c2", "a")
    del missing_text["tree"]["children"][0]["content"]

    report = run(
        dataset,
        jsonl(item("c1", "a"), missing_text, item("c3", "b"), {"id": "c4"}, item("c5")),
        skip_invalid=True,
    )

    assert report.committed
    assert sorted(dataset.trees.values_list("external_id", flat=True)) == ["c1", "c3", "c5"]
    assert Message.objects.count() == 5
    assert errors(report) == [
        'line 2: tree.children[0]: missing text ("content" or "text")',
        'line 4: tree: missing "tree"',
    ]
    assert report.summary() == "imported into demo: 3 trees created, 5 messages, 2 invalid items skipped"


def test_it_refuses_an_item_the_dataset_already_has():
    dataset = DatasetFactory(name="demo")
    run(dataset, jsonl(item("c1", "a")))
    before = counts()

    report = run(dataset, jsonl(item("c2"), item("c1", "b")))

    assert not report.committed
    assert counts() == before
    assert errors(report) == [
        'line 2: item "c1" already exists in dataset "demo" (import with replace to overwrite it)'
    ]


def test_it_skips_an_existing_item_and_imports_the_rest_when_asked():
    dataset = DatasetFactory(name="demo")
    run(dataset, jsonl(item("c1", "a")))

    report = run(dataset, jsonl(item("c2"), item("c1", "b")), skip_invalid=True)

    assert report.committed
    assert report.summary() == "imported into demo: 1 tree created, 1 message, 1 invalid item skipped"
    assert set(dataset.trees.get(external_id="c1").messages.values_list("external_id", flat=True)) == {
        "root",
        "a",
    }


def test_it_lists_existing_items_even_after_other_errors(monkeypatch):
    monkeypatch.setattr(services, "BATCH_TREES", 2)
    dataset = DatasetFactory(name="demo")
    run(dataset, jsonl(item("c1"), item("c9")))

    report = run(dataset, jsonl({"id": "c2"}, item("c3"), item("c1"), item("c4"), item("c9")))

    assert errors(report) == [
        'line 1: tree: missing "tree"',
        'line 3: item "c1" already exists in dataset "demo" (import with replace to overwrite it)',
        'line 5: item "c9" already exists in dataset "demo" (import with replace to overwrite it)',
    ]


def test_it_replaces_an_existing_item_in_place_when_asked():
    dataset = DatasetFactory(name="demo")
    run(dataset, jsonl(item("c1", "a", "b", note="old")))
    tree_id = ConversationTree.objects.get().pk

    report = run(dataset, jsonl(item("c1", "z", note="new"), item("c2")), replace=True)

    assert report.committed
    assert report.summary() == "imported into demo: 1 tree created, 1 replaced, 3 messages"
    tree = ConversationTree.objects.get(external_id="c1")
    assert tree.pk == tree_id
    assert tree.metadata == {"note": "new"}
    assert sorted(tree.messages.values_list("external_id", flat=True)) == ["root", "z"]
    assert Message.objects.count() == 3


def test_it_leaves_other_datasets_alone():
    other = DatasetFactory(name="other")
    run(other, jsonl(item("c1", "a")))

    report = run(DatasetFactory(name="demo"), jsonl(item("c1", "b")))

    assert report.committed
    assert ConversationTree.objects.filter(external_id="c1").count() == 2
    assert set(other.trees.get().messages.values_list("external_id", flat=True)) == {"root", "a"}


def test_it_reads_gzip_input(fixture_path):
    dataset = DatasetFactory()
    data = fixture_path("oasst/en_10_trees.jsonl").read_bytes()

    report = run(dataset, io.BytesIO(gzip.compress(data)), "oasst")

    assert report.committed
    assert dataset.trees.count() == 10
    assert report.messages == Message.objects.count() > 10


def test_it_reports_a_damaged_gzip_file_and_writes_nothing(fixture_path):
    data = gzip.compress(fixture_path("oasst/en_10_trees.jsonl").read_bytes())
    dataset = DatasetFactory()
    before = counts()

    report = run(dataset, io.BytesIO(data[: len(data) // 2]), "oasst")

    assert not report.committed
    assert counts() == before
    assert errors(report) == [
        "the gzip file is damaged (Compressed file ended before the end-of-stream marker was reached)"
    ]


def test_it_reports_a_broken_json_array_and_writes_nothing():
    dataset = DatasetFactory(name="demo")
    before = counts()
    data = "[\n" + json.dumps(item("c1")) + ",\n" + '{"id": "c2", "tree": }\n]'

    report = run(dataset, io.BytesIO(data.encode()))

    assert not report.committed
    assert counts() == before
    assert errors(report) == ["line 3: malformed JSON at column 22: Expecting value"]
    assert report.summary() == "nothing imported into demo: 1 error in 1 item"


def test_it_reports_a_json_array_that_is_not_utf8_and_writes_nothing():
    dataset = DatasetFactory()
    before = counts()

    report = run(dataset, io.BytesIO(b'[{"id": "caf\xe9"}]'))

    assert not report.committed
    assert counts() == before
    assert errors(report) == ["the file is not UTF-8 text (invalid continuation byte)"]


def test_it_reports_a_jsonl_line_that_is_not_utf8_and_skips_it_when_asked():
    data = jsonl(item("c1")).getvalue() + b'{"id": "caf\xe9"}\n' + jsonl(item("c3")).getvalue()

    report = run(DatasetFactory(), io.BytesIO(data), skip_invalid=True)

    assert errors(report) == ["line 2: not UTF-8 text (invalid continuation byte at byte 12)"]
    assert sorted(ConversationTree.objects.values_list("external_id", flat=True)) == ["c1", "c3"]


def test_it_rolls_back_batches_already_written_when_a_later_item_is_bad(monkeypatch):
    monkeypatch.setattr(services, "BATCH_TREES", 2)
    dataset = DatasetFactory()
    before = counts()

    report = run(dataset, jsonl(*(item(f"c{n}", "a") for n in range(5)), {"id": "c5"}))

    assert not report.committed
    assert counts() == before
    assert report.trees_created == report.messages == 0
    assert errors(report) == ['line 6: tree: missing "tree"']


def test_it_applies_the_limits_it_is_given_and_writes_nothing_over_them():
    dataset = DatasetFactory()
    before = counts()
    long_text = item("c1", "a")
    long_text["tree"]["children"][0]["content"] = "x" * 101

    report = run(
        dataset, jsonl(long_text, item("c2", "a", "b")), limits=ImportLimits(max_text_chars=100, max_nodes=2)
    )

    assert counts() == before
    assert errors(report) == [
        'line 1: tree.children[0]: text of node "a" is 101 characters, over the limit of 100',
        "line 2: tree: 3 nodes, over the limit of 2 per tree",
    ]


def test_it_refuses_values_the_database_cannot_hold_before_writing_anything():
    dataset = DatasetFactory()
    before = counts()
    long_id = item("c1", "x" * 256)
    negative = item("c2", "a")
    negative["tree"]["review_count"] = -1

    report = run(dataset, jsonl(long_id, negative, item("c" * 256)))

    assert counts() == before
    assert errors(report) == [
        "line 1: tree.children[0]: node id is 256 characters, over the limit of 255",
        'line 2: tree: review_count of node "root" is -1, outside 0 to 2,147,483,647',
        "line 3: item id is 256 characters, over the limit of 255",
    ]


def test_it_takes_its_limits_from_settings_by_default(settings):
    settings.BRANCHPOINT_IMPORT_LIMITS = {"max_text_chars": 5, "max_depth": 10, "max_nodes": 10}

    report = run(DatasetFactory(), jsonl(item("c1")))

    assert errors(report) == ['line 1: tree: text of node "root" is 14 characters, over the limit of 5']


def test_it_counts_errors_beyond_those_it_lists(monkeypatch):
    monkeypatch.setattr(services, "MAX_REPORTED_ERRORS", 2)

    report = run(DatasetFactory(name="demo"), jsonl(*({"id": f"c{n}"} for n in range(5))))

    assert len(report.errors) == 2
    assert report.errors_not_shown == 3
    assert report.summary() == "nothing imported into demo: 5 errors in 5 items"
    assert report.as_dict()["errors"][0] == {
        "line": 1,
        "path": "tree",
        "message": 'missing "tree"',
        "text": 'line 1: tree: missing "tree"',
    }


def test_it_reads_flat_and_oasst_files(fixture_path):
    dataset = DatasetFactory()
    lines = [
        {"id": "q", "parent_id": None, "tree_id": "t1", "role": "user", "text": "Hi"},
        {"id": "a", "parent_id": "q", "tree_id": "t1", "role": "assistant", "text": "Hello"},
    ]

    run(dataset, jsonl(*lines), "flat")
    run(dataset, fixture_path("oasst/en_10_trees.jsonl").open("rb"), "oasst")

    assert dataset.trees.count() == 11
    assert dataset.trees.get(external_id="t1").messages.get(external_id="a").parent.external_id == "q"


def test_it_reports_progress_as_it_goes(monkeypatch):
    monkeypatch.setattr(services, "BATCH_TREES", 2)
    calls = []

    run(
        DatasetFactory(),
        jsonl(*(item(f"c{n}") for n in range(5))),
        progress=lambda items, _: calls.append(items),
    )

    assert calls == [2, 4, 5]


def test_it_refuses_an_unknown_format():
    with pytest.raises(
        ValueError,
        match='unknown format "brat" \\(expected one of potato, oasst, oasst-messages, flat, ccpe, ccpe-hf, csv\\)',
    ):
        run(DatasetFactory(), jsonl(item("c1")), "brat")


def test_it_keeps_ids_it_finds_in_existing_trees_from_factories():
    dataset = DatasetFactory(name="demo")
    ChainTreeFactory(dataset=dataset, external_id="c1")

    report = run(dataset, jsonl(item("c1")))

    assert errors(report) == [
        'line 1: item "c1" already exists in dataset "demo" (import with replace to overwrite it)'
    ]


def test_it_finds_or_creates_a_dataset_by_name():
    existing = DatasetFactory(name="demo")

    assert dataset_get_or_create("demo") == existing
    assert dataset_get_or_create("new-one").name == "new-one"
    assert Dataset.objects.count() == 2


def test_it_refuses_to_create_a_dataset_whose_name_is_not_a_slug():
    with pytest.raises(ValidationError) as caught:
        dataset_get_or_create("my data")

    assert caught.value.messages == [
        "Enter a valid “slug” consisting of letters, numbers, underscores or hyphens."
    ]
    assert Dataset.objects.count() == 0


def test_text_no_database_stores_is_refused_with_its_line_and_path_and_nothing_is_kept():
    """A NUL in metadata, or a lone surrogate anywhere, is JSON Python reads: PostgreSQL
    refused the first (and psycopg could not send the second) at the end of the import."""
    dataset = DatasetFactory(name="demo")
    before = counts()
    tree = {"id": "root", "role": "user", "content": "hi"}
    lines = [{"id": "c1", "tree": tree}, {"id": "c2", "note": "a\u0000b", "tree": tree}]
    lines.append({"id": "c3", "tree": {**tree, "content": "\udfff"}})

    report = run(dataset, io.BytesIO("\n".join(json.dumps(line) for line in lines).encode()))

    assert errors(report) == [
        "line 2: note: contains a NUL character (\\u0000), which cannot be stored",
        "line 3: tree.content: contains a lone UTF-16 surrogate (\\udfff), which is not text and cannot be stored",
    ]
    assert counts() == before


def test_what_the_database_still_refuses_is_reported_with_its_lines_and_nothing_is_kept(monkeypatch):
    """Should a value pass every check and the database refuse it anyway, the import says
    where instead of failing."""

    def refuse(*args, **kwargs):
        raise DataError("value out of range\nDETAIL: more")

    monkeypatch.setattr("trees.services.trees_store", refuse)
    dataset = DatasetFactory(name="demo")
    before = counts()

    report = run(dataset, jsonl(item("c1"), item("c2")))

    assert not report.committed
    assert errors(report) == ["line 1: the database refused the items on lines 1 to 2: value out of range"]
    assert counts() == before
