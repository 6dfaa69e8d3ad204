"""import_trees and export_trees: thin commands over the services, with a
summary line, a progress bar on a terminal, and exit code 2 on bad input."""

import gzip
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.factories import DatasetFactory
from trees.models import ConversationTree, Dataset, Message

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def item(item_id: str, *reply_ids: str) -> dict:
    children = [{"id": reply, "role": "assistant", "content": "answer"} for reply in reply_ids]
    return {
        "id": item_id,
        "tree": {"id": "root", "role": "user", "content": "question", "children": children},
    }


def write_jsonl(path, *objects: dict):
    path.write_text("".join(json.dumps(one) + "\n" for one in objects))
    return path


def run(name: str, *args, **options) -> tuple[str, str]:
    out, err = io.StringIO(), options.pop("stderr", io.StringIO())
    call_command(name, *args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def failure(name: str, *args, **options) -> tuple[CommandError, str]:
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(name, *args, stdout=io.StringIO(), stderr=err, **options)
    return caught.value, err.getvalue()


def counts() -> tuple[int, int, int]:
    return Dataset.objects.count(), ConversationTree.objects.count(), Message.objects.count()


def test_import_creates_the_dataset_and_ends_with_a_summary_line(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1", "a", "b"), item("c2"))

    out, err = run("import_trees", "demo", str(path), "--format", "potato")

    assert out == "imported into demo: 2 trees created, 4 messages\n"
    assert err == ""
    assert list(Dataset.objects.get(name="demo").trees.values_list("external_id", flat=True)) == ["c1", "c2"]


def test_import_exits_with_code_2_listing_every_error_and_writes_nothing(tmp_path):
    bad = item("c2", "a", "a")
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"), bad, {"id": "c3"})

    error, err = failure("import_trees", "demo", str(path), "--format", "potato")

    assert error.returncode == 2
    assert str(error) == "nothing imported into demo: 2 errors in 3 items"
    assert err.splitlines() == [
        'line 2: tree.children[1]: duplicate node id "a" (first at tree.children[0])',
        'line 3: tree: missing "tree"',
    ]
    assert counts() == (0, 0, 0)


def test_import_keeps_an_existing_dataset_when_it_fails(tmp_path):
    DatasetFactory(name="demo")
    path = write_jsonl(tmp_path / "items.jsonl", {"id": "c1"})

    error, _ = failure("import_trees", "demo", str(path), "--format", "potato")

    assert error.returncode == 2
    assert counts() == (1, 0, 0)


def test_import_skips_invalid_items_when_asked_and_lists_them(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"), {"id": "c2"}, item("c3", "a"))

    out, err = run("import_trees", "demo", str(path), "--format", "potato", "--skip-invalid")

    assert out == "imported into demo: 2 trees created, 3 messages, 1 invalid item skipped\n"
    assert err == 'line 2: tree: missing "tree"\n'


def test_import_refuses_existing_items_unless_asked_to_replace_them(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1", "a"))
    run("import_trees", "demo", str(path), "--format", "potato")
    tree_id = ConversationTree.objects.get().pk
    write_jsonl(path, item("c1", "b", "c"))

    error, err = failure("import_trees", "demo", str(path), "--format", "potato")
    out, _ = run("import_trees", "demo", str(path), "--format", "potato", "--replace")

    assert error.returncode == 2
    assert err == 'line 1: item "c1" already exists in dataset "demo" (import with replace to overwrite it)\n'
    assert out == "imported into demo: 0 trees created, 1 replaced, 3 messages\n"
    assert ConversationTree.objects.get().pk == tree_id


def test_import_reads_gzip_and_oasst(tmp_path, fixture_path):
    path = tmp_path / "trees.jsonl.gz"
    path.write_bytes(gzip.compress(fixture_path("oasst/en_10_trees.jsonl").read_bytes()))

    out, _ = run("import_trees", "oasst", str(path), "--format", "oasst")

    assert out.startswith("imported into oasst: 10 trees created, ")
    assert ConversationTree.objects.count() == 10


def test_import_applies_limits_given_on_the_command_line(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1", "a", "b"))

    error, err = failure(
        "import_trees", "demo", str(path), "--format", "potato", "--max-text-chars", "5", "--max-nodes", "2"
    )

    assert error.returncode == 2
    assert err.splitlines() == [
        "line 1: tree: 3 nodes, over the limit of 2 per tree",
        'line 1: tree: text of node "root" is 8 characters, over the limit of 5',
        'line 1: tree.children[0]: text of node "a" is 6 characters, over the limit of 5',
        'line 1: tree.children[1]: text of node "b" is 6 characters, over the limit of 5',
    ]


def test_import_reads_a_configured_id_key_and_tree_key(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", {"cid": "c1", "conv": item("x")["tree"]})

    run("import_trees", "demo", str(path), "--format", "potato", "--id-key", "cid", "--tree-key", "conv")

    assert ConversationTree.objects.get().external_id == "c1"


def test_import_prints_the_report_as_json_when_asked(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"), {"id": "c2"})

    error, _ = failure("import_trees", "demo", str(path), "--format", "potato", "--json")
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("import_trees", "demo", str(path), "--format", "potato", "--json", stdout=out)

    report = json.loads(out.getvalue())
    assert error.returncode == 2
    assert report["committed"] is False
    assert report["errors"] == [
        {"line": 2, "path": "tree", "message": 'missing "tree"', "text": 'line 2: tree: missing "tree"'}
    ]


def test_import_exits_with_code_2_for_a_new_dataset_name_that_is_not_a_slug(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"))

    error, _ = failure("import_trees", "my data", str(path), "--format", "potato")

    assert error.returncode == 2
    assert str(error) == (
        'dataset name "my data": Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.'
    )
    assert counts() == (0, 0, 0)


def test_import_exits_with_code_2_for_a_file_it_cannot_read(tmp_path):
    error, _ = failure("import_trees", "demo", str(tmp_path / "missing.jsonl"), "--format", "potato")

    assert error.returncode == 2
    assert str(error) == f"cannot read {tmp_path / 'missing.jsonl'}: No such file or directory"
    assert counts() == (0, 0, 0)


def test_import_draws_a_progress_bar_on_a_terminal_only(tmp_path):
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"))

    _, drawn = run("import_trees", "demo", str(path), "--format", "potato", stderr=Terminal())
    _, plain = run("import_trees", "other", str(path), "--format", "potato")

    assert "[##############################] 100%  1 item" in drawn
    assert drawn.endswith("\r")
    assert plain == ""


def test_export_writes_a_file_and_ends_with_a_summary_line(tmp_path, fixture_path):
    run("import_trees", "oasst", str(fixture_path("oasst/en_10_trees.jsonl")), "--format", "oasst")
    target = tmp_path / "out.jsonl"

    out, _ = run("export_trees", "oasst", "--format", "oasst", "-o", str(target))

    assert out == f"exported 10 trees of oasst to {target}\n"
    original = fixture_path("oasst/en_10_trees.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in target.read_text().splitlines()] == [
        json.loads(line) for line in original
    ]


def test_export_writes_gzip_for_a_gz_name(tmp_path):
    run(
        "import_trees", "demo", str(write_jsonl(tmp_path / "in.jsonl", item("c1", "a"))), "--format", "potato"
    )
    target = tmp_path / "out.jsonl.gz"

    out, _ = run("export_trees", "demo", "--format", "potato", "-o", str(target))

    assert out == f"exported 1 tree of demo to {target}\n"
    assert json.loads(gzip.decompress(target.read_bytes())) == item("c1", "a") | {
        "tree": item("c1", "a")["tree"]
        | {"children": [{"id": "a", "role": "assistant", "content": "answer", "children": []}]}
    }


def test_export_writes_to_standard_output_with_the_summary_on_standard_error(tmp_path):
    lines = [
        {"id": "q", "parent_id": None, "tree_id": "t1", "role": "user", "text": "Hi"},
        {"id": "a", "parent_id": "q", "tree_id": "t1", "role": "assistant", "text": "Hello"},
    ]
    run("import_trees", "demo", str(write_jsonl(tmp_path / "in.jsonl", *lines)), "--format", "flat")

    out, err = run("export_trees", "demo", "--format", "flat")

    assert [json.loads(line) for line in out.splitlines()] == lines
    assert err == "exported 1 tree of demo\n"


def test_export_writes_a_potato_array_with_configured_keys(tmp_path):
    run("import_trees", "demo", str(write_jsonl(tmp_path / "in.jsonl", item("c1"))), "--format", "potato")

    out, _ = run(
        "export_trees",
        "demo",
        "--format",
        "potato",
        "--layout",
        "array",
        "--id-key",
        "cid",
        "--tree-key",
        "conv",
    )

    assert json.loads(out) == [{"cid": "c1", "conv": item("c1")["tree"] | {"children": []}}]


def test_export_exits_with_code_2_for_an_unknown_dataset():
    error, _ = failure("export_trees", "nowhere", "--format", "potato")

    assert error.returncode == 2
    assert str(error) == 'no dataset named "nowhere"'


# -- text that cannot be stored, and files past the bounds ---------------------------------------


def test_a_file_with_text_that_cannot_be_stored_exits_2_naming_the_line(tmp_path):
    """A lone surrogate (``\\ud800``) is JSON Python reads and no database stores: it was a
    traceback and exit code 1 on PostgreSQL."""
    path = tmp_path / "items.jsonl"
    bad = item("c2", "a")
    bad["tree"]["children"][0]["content"] = "half a pair \ud800"
    path.write_text(json.dumps(item("c1")) + "\n" + json.dumps(bad) + "\n")

    error, err = failure("import_trees", "demo", str(path), "--format", "potato")

    assert error.returncode == 2
    assert err.splitlines() == [
        "line 2: tree.children[0].content: contains a lone UTF-16 surrogate (\\ud800), "
        "which is not text and cannot be stored"
    ]
    assert counts() == (0, 0, 0)


def test_an_argument_that_is_not_text_exits_2_naming_it(tmp_path):
    """Python reads a byte the locale cannot decode from the command line as a lone surrogate."""
    path = write_jsonl(tmp_path / "items.jsonl", item("c1"))

    error, _ = failure("import_trees", "demo", str(path), "--format", "potato", "--id-key", "caf\udce9")

    assert (error.returncode, str(error)) == (
        2,
        "id-key: contains a lone UTF-16 surrogate (\\udce9), which is not text and cannot be stored",
    )
    assert counts() == (0, 0, 0)


def test_a_file_path_may_hold_any_bytes_the_file_system_allows(tmp_path):
    path = write_jsonl(tmp_path / "caf\udce9.jsonl", item("c1"))

    out, _ = run("import_trees", "demo", str(path), "--format", "potato")

    assert out == "imported into demo: 1 tree created, 1 message\n"
