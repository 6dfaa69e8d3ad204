"""Open-Assistant's message rows through the database and the commands. The rules:

- message rows → import → export give the same rows (the same values of the same types),
  in JSONL, JSONL.gz and the hub's Parquet;
- rows → trees → rows: importing the rows and exporting the oasst tree export gives
  the trees the rows were made from, and importing those trees and exporting rows gives
  the rows again;
- the commands choose Parquet by ``--layout parquet`` or a name ending in ``.parquet``,
  refuse a layout the format does not have (exit 2), and say what is wrong with a file.
"""

from __future__ import annotations

import gzip
import io
import json
import sys

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from tests.factories import DatasetFactory
from tests.trees.test_formats_oasst_messages import PROMPT, REPLY
from tests.trees.test_formats_oasst_parquet import hub_rows
from trees.models import ConversationTree, Message
from trees.services import tree_import, trees_export

pytestmark = pytest.mark.django_db

ROWS = "oasst/en_10_trees.messages.jsonl"
PARQUET = "oasst/en_10_trees.messages.parquet"


def imported(data: bytes, format_name: str = "oasst-messages", **options):
    dataset = DatasetFactory()
    report = tree_import(dataset=dataset, source=io.BytesIO(data), format_name=format_name, options=options)
    assert report.committed, [str(issue) for issue in report.errors]
    return dataset


def exported(dataset, format_name: str = "oasst-messages", **options) -> str | bytes:
    pieces = list(trees_export(dataset=dataset, format_name=format_name, options=options))
    return b"".join(pieces) if options.get("layout") == "parquet" else "".join(pieces)


def rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_jsonl_rows_come_back_the_same(fixture_path):
    data = fixture_path(ROWS).read_bytes()

    dataset = imported(data)

    assert rows(exported(dataset)) == rows(data.decode())
    assert Message.objects.filter(tree__dataset=dataset).count() == 106


def test_rows_with_every_field_and_nulls_come_back_the_same_values_and_types():
    given = [PROMPT, REPLY, REPLY | {"message_id": "r2", "rank": 1, "deleted": None, "emojis": {}}]

    again = rows(exported(imported("".join(json.dumps(row) + "\n" for row in given).encode())))

    assert again == given
    spam = again[0]["labels"]["spam"]
    assert (type(spam["value"]), type(spam["count"])) == (float, int)  # 0.0 stays a float


def test_gzip_rows_come_back_the_same_through_the_commands(fixture_path, tmp_path):
    packed = tmp_path / "rows.messages.jsonl.gz"
    packed.write_bytes(gzip.compress(fixture_path(ROWS).read_bytes()))
    out = tmp_path / "again.messages.jsonl.gz"

    run("import_trees", "oasst-rows", str(packed), "--format", "oasst-messages")
    run("export_trees", "oasst-rows", "--format", "oasst-messages", "-o", str(out))

    assert rows(gzip.decompress(out.read_bytes()).decode()) == rows(fixture_path(ROWS).read_text())


def test_parquet_rows_come_back_the_same_table(fixture_path):
    original = pq.read_table(fixture_path(PARQUET))

    again = pq.read_table(
        io.BytesIO(exported(imported(fixture_path(PARQUET).read_bytes()), layout="parquet"))
    )

    assert again.schema.equals(original.schema, check_metadata=True)
    assert again.to_pylist() == original.to_pylist()


def test_the_hubs_emojis_and_labels_keep_their_order_whatever_the_database():
    """PostgreSQL orders a JSON object's keys its own way: the hub's lists must not follow."""
    labels = {"name": ["toxicity", "spam", "quality"], "value": [0.25, 0.0, 0.75], "count": [4, 3, 3]}
    emojis = {"name": ["_skip_reply", "+1"], "count": [1, 10]}
    data = hub_rows(
        {"message_id": "a", "text": "q", "role": "prompter", "message_tree_id": "a", "labels": labels,
         "emojis": emojis, "tree_state": "ready_for_export"},
    )  # fmt: skip

    [row] = pq.read_table(io.BytesIO(exported(imported(data), layout="parquet"))).to_pylist()

    assert (row["labels"], row["emojis"]) == (labels, emojis)


def test_rows_export_the_trees_they_were_made_from(fixture_path):
    trees = exported(imported(fixture_path(ROWS).read_bytes()), "oasst")

    assert rows(trees) == rows(fixture_path("oasst/en_10_trees.jsonl").read_text())


def test_trees_export_the_rows_made_from_them(fixture_path):
    again = exported(imported(fixture_path("oasst/en_10_trees.jsonl").read_bytes(), "oasst"))

    assert rows(again) == rows(fixture_path(ROWS).read_text())


@pytest.mark.parametrize("source", [ROWS, PARQUET])
def test_rows_to_trees_to_rows_give_the_same_rows(fixture_path, source):
    data = fixture_path(source).read_bytes()
    layout = "parquet" if source.endswith(".parquet") else "jsonl"
    first = exported(imported(data), layout=layout)

    through_trees = exported(imported(exported(imported(data), "oasst").encode(), "oasst"), layout=layout)

    if layout == "parquet":
        assert (
            pq.read_table(io.BytesIO(through_trees)).to_pylist()
            == pq.read_table(io.BytesIO(first)).to_pylist()
        )
    else:
        assert rows(through_trees) == rows(first) == rows(data.decode())


def test_a_tree_state_is_the_trees():
    data = "".join(
        json.dumps(row) + "\n"
        for row in (
            {"message_id": "a", "text": "q", "role": "prompter", "message_tree_id": "a", "tree_state": "growing"},
            {"message_id": "b", "parent_id": "a", "text": "r", "role": "assistant", "message_tree_id": "a",
             "tree_state": "growing"},
        )
    ).encode()  # fmt: skip

    dataset = imported(data)

    assert ConversationTree.objects.get(dataset=dataset).state == "growing"
    assert rows(exported(dataset)) == rows(data.decode())


# The commands


def test_a_parquet_name_imports_parquet_and_a_parquet_name_exports_it(fixture_path, tmp_path):
    out = tmp_path / "again.parquet"

    assert run("import_trees", "hub", str(fixture_path(PARQUET)), "--format", "oasst-messages") == (
        "imported into hub: 10 trees created, 106 messages\n"
    )
    run("export_trees", "hub", "--format", "oasst-messages", "-o", str(out))

    assert pq.read_table(out).to_pylist() == pq.read_table(fixture_path(PARQUET)).to_pylist()


def test_the_layout_option_says_parquet_whatever_the_names(fixture_path, tmp_path):
    source = tmp_path / "rows.data"
    source.write_bytes(fixture_path(PARQUET).read_bytes())
    out = tmp_path / "rows.out"

    run("import_trees", "hub", str(source), "--format", "oasst-messages", "--layout", "parquet")
    run("export_trees", "hub", "--format", "oasst-messages", "--layout", "parquet", "-o", str(out))

    assert out.read_bytes()[:4] == b"PAR1"
    assert pq.read_table(out).num_rows == 106


def test_a_parquet_file_is_known_by_its_first_bytes(fixture_path, tmp_path):
    source = tmp_path / "rows.jsonl"
    source.write_bytes(fixture_path(PARQUET).read_bytes())

    assert "10 trees created" in run("import_trees", "hub", str(source), "--format", "oasst-messages")


def test_a_layout_the_format_does_not_have_is_refused(fixture_path, tmp_path):
    run("import_trees", "hub", str(fixture_path(ROWS)), "--format", "oasst-messages")

    with pytest.raises(CommandError) as exporting:
        run("export_trees", "hub", "--format", "flat", "--layout", "parquet", "-o", str(tmp_path / "x"))
    with pytest.raises(CommandError) as importing:
        run("import_trees", "hub2", str(fixture_path(ROWS)), "--format", "flat", "--layout", "jsonl")

    assert str(exporting.value) == "--layout parquet is not a layout of --format flat"
    assert str(importing.value) == "--layout is for --format oasst-messages"
    assert exporting.value.returncode == importing.value.returncode == 2


def test_exporting_parquet_without_pyarrow_is_refused_naming_the_extra(fixture_path, tmp_path, monkeypatch):
    run("import_trees", "hub", str(fixture_path(ROWS)), "--format", "oasst-messages")
    monkeypatch.setitem(sys.modules, "pyarrow", None)

    with pytest.raises(CommandError) as caught:
        run("export_trees", "hub", "--format", "oasst-messages", "-o", str(tmp_path / "x.parquet"))

    assert caught.value.returncode == 2
    assert "pip install -e '.[parquet]'" in str(caught.value)
    assert not (tmp_path / "x.parquet").exists()


def test_a_bad_file_is_refused_with_its_problems_located(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(
        '{"message_id": "a", "text": "q", "role": "prompter", "message_tree_id": "t"}\n'
        '{"message_id": "b", "parent_id": "x", "text": "r", "role": "assistant", "message_tree_id": "t"}\n'
    )
    err = io.StringIO()

    with pytest.raises(CommandError) as caught:
        call_command(
            "import_trees", "hub", str(path), "--format", "oasst-messages", stdout=io.StringIO(), stderr=err
        )

    assert err.getvalue() == 'line 2: parent_id: unknown parent "x" of message "b"\n'
    assert caught.value.returncode == 2
    assert ConversationTree.objects.count() == 0
