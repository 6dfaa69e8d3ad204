"""Open-Assistant's message rows as the Hugging Face hub's Parquet, read and written
without the database. The rules:

- a written file has the hub's schema (its 18 columns, in its order and types, and the
  ``huggingface`` features ``datasets`` reads), and reading then writing gives the same
  table;
- ``emojis`` and ``labels`` are kept as the hub's structs of lists (a database may
  reorder a mapping's keys, never a list), given to JSON as Open-Assistant's mappings
  where nothing is lost, and mappings from JSONL are written as structs;
- reading is bounded: the file a batch at a time, never whole; a file too large once
  decompressed, or a text over the line bound, is refused with its row;
- without pyarrow, Parquet is refused, naming the extra to install.
"""

from __future__ import annotations

import gzip
import io
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trees.formats import oasst_messages, oasst_parquet, oasst_rows
from trees.formats.bounds import ReadBounds
from trees.formats.records import FormatError, TreeRecord
from trees.services import open_source

FIXTURE = "oasst/en_10_trees.messages.parquet"


def read(data: bytes, **options) -> list[TreeRecord]:
    return list(oasst_messages.read(io.BufferedReader(io.BytesIO(data)), **options))


def parquet_of(trees: list[TreeRecord]) -> pa.Table:
    return pq.read_table(io.BytesIO(b"".join(oasst_messages.write(trees, layout="parquet"))))


def table_bytes(table: pa.Table, **options) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def hub_rows(*rows: dict) -> bytes:
    """A Parquet file in the hub's schema holding ``rows`` (missing columns null)."""
    schema = oasst_parquet.hub_schema()
    return table_bytes(
        pa.Table.from_pylist([{name: row.get(name) for name in schema.names} for row in rows], schema)
    )


def message(message_id: str, parent_id: str | None = None, **more) -> dict:
    role = "prompter" if parent_id is None else "assistant"
    found = {"message_id": message_id, "parent_id": parent_id, "text": message_id, "role": role}
    return found | {"message_tree_id": "t", "tree_state": "ready_for_export"} | more


def test_the_hub_file_reads_as_the_same_trees_as_the_jsonl_rows(fixture_path):
    from_parquet = read(fixture_path(FIXTURE).read_bytes())
    from_jsonl = read(fixture_path("oasst/en_10_trees.messages.jsonl").read_bytes())

    assert all(tree.ok for tree in from_parquet)
    shape = [[(m.external_id, m.parent_id, m.role, m.text, m.rank) for m in t.messages] for t in from_jsonl]
    assert [
        [(m.external_id, m.parent_id, m.role, m.text, m.rank) for m in t.messages] for t in from_parquet
    ] == shape
    assert [
        oasst_rows.emojis_from_struct(m.metadata["emojis"]) for t in from_parquet for m in t.messages
    ] == [m.metadata.get("emojis") for t in from_jsonl for m in t.messages]


def test_reading_then_writing_gives_the_same_table_in_the_hubs_schema(fixture_path):
    original = pq.read_table(fixture_path(FIXTURE))

    again = parquet_of(read(fixture_path(FIXTURE).read_bytes()))

    assert again.schema.equals(original.schema, check_metadata=True)
    assert again.to_pylist() == original.to_pylist()
    assert again.schema.names == [
        "message_id", "parent_id", "user_id", "created_date", "text", "role", "lang", "review_count",
        "review_result", "deleted", "rank", "synthetic", "model_name", "detoxify", "message_tree_id",
        "tree_state", "emojis", "labels",
    ]  # fmt: skip
    features = json.loads(again.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["emojis"] == {
        "feature": {
            "name": {"dtype": "string", "_type": "Value"},
            "count": {"dtype": "int32", "_type": "Value"},
        },
        "_type": "Sequence",
    }
    assert features["review_count"] == {"dtype": "int32", "_type": "Value"}


def test_the_jsonl_rows_write_the_hub_file(fixture_path):
    trees = read(fixture_path("oasst/en_10_trees.messages.jsonl").read_bytes())

    assert parquet_of(trees).to_pylist() == pq.read_table(fixture_path(FIXTURE)).to_pylist()


def test_the_hub_file_writes_the_jsonl_rows_with_its_nulls(fixture_path):
    trees = read(fixture_path(FIXTURE).read_bytes())
    jsonl = [
        json.loads(line) for line in fixture_path("oasst/en_10_trees.messages.jsonl").read_text().splitlines()
    ]

    rows = [json.loads(line) for line in "".join(oasst_messages.write(trees)).splitlines()]

    assert [list(row) for row in rows] == [list(pq.read_table(fixture_path(FIXTURE)).schema.names)] * len(
        rows
    )
    assert [{key: value for key, value in row.items() if value is not None} for row in rows] == jsonl


def test_emojis_and_labels_are_kept_as_structs_and_given_to_json_as_mappings():
    emojis = {"name": ["_skip_reply", "+1"], "count": [1, 10]}
    labels = {"name": ["spam", "quality"], "value": [0.0, 0.8333333333333334], "count": [3, 3]}
    data = hub_rows(
        message("a", emojis=emojis, labels=labels, detoxify=dict.fromkeys(oasst_parquet.DETOXIFY, 0.25)),
        message("b", "a", emojis={"name": [], "count": []}, labels=None),
    )

    [tree] = read(data)

    assert (tree.messages[0].metadata["emojis"], tree.messages[0].metadata["labels"]) == (emojis, labels)
    assert parquet_of([tree]).to_pylist() == pq.read_table(io.BytesIO(data)).to_pylist()
    as_json = [json.loads(line) for line in "".join(oasst_messages.write([tree])).splitlines()]
    assert [(row["emojis"], row["labels"]) for row in as_json] == [
        (
            {"_skip_reply": 1, "+1": 10},
            {"spam": {"value": 0.0, "count": 3}, "quality": {"value": 0.8333333333333334, "count": 3}},
        ),
        ({}, None),
    ]


def test_mappings_from_jsonl_are_written_as_structs():
    [tree] = read(hub_rows(message("a")), layout="parquet")
    tree.metadata.clear()  # as if from JSONL
    tree.messages[0].metadata |= {"emojis": {"+1": 2}, "labels": {"spam": {"value": 0.5, "count": 2}}}

    [row] = parquet_of([tree]).to_pylist()

    assert (row["emojis"], row["labels"]) == (
        {"name": ["+1"], "count": [2]},
        {"name": ["spam"], "value": [0.5], "count": [2]},
    )


def test_a_struct_that_is_no_mapping_is_given_to_json_as_it_is():
    twice = {"name": ["+1", "+1"], "count": [1, 2]}

    [tree] = read(hub_rows(message("a", emojis=twice)))

    assert json.loads("".join(oasst_messages.write([tree])))["emojis"] == twice
    assert parquet_of([tree]).to_pylist()[0]["emojis"] == twice


def test_a_value_not_of_its_columns_type_is_written_as_null():
    [tree] = read(hub_rows(message("a")))
    tree.messages[0].metadata |= {"emojis": "many", "created_date": 2023, "other": 1}

    [row] = parquet_of([tree]).to_pylist()

    assert (row["emojis"], row["created_date"], "other" in row) == (None, None, False)


def test_a_gzip_file_is_read_though_it_cannot_seek(fixture_path):
    packed = gzip.compress(fixture_path(FIXTURE).read_bytes())

    trees = list(oasst_messages.read(open_source(io.BytesIO(packed), ReadBounds())))

    assert sum(len(tree.messages) for tree in trees) == 106


def test_the_file_is_read_a_batch_at_a_time_never_whole(fixture_path, monkeypatch):
    sizes = []
    iter_batches = pq.ParquetFile.iter_batches

    def spied(self, *args, **kwargs):
        for batch in iter_batches(self, *args, **kwargs):
            sizes.append(batch.num_rows)
            yield batch

    def whole(*args, **kwargs):
        raise AssertionError("read whole")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spied)
    monkeypatch.setattr(pq.ParquetFile, "read", whole)
    monkeypatch.setattr(pq, "read_table", whole)
    monkeypatch.setattr(oasst_parquet, "BATCH_ROWS", 25)

    trees = read(fixture_path(FIXTURE).read_bytes())

    assert sizes == [25, 25, 25, 25, 6]
    assert sum(len(tree.messages) for tree in trees) == 106


def test_a_file_too_large_once_decompressed_is_refused(fixture_path):
    with pytest.raises(FormatError) as caught:
        read(fixture_path(FIXTURE).read_bytes(), bounds=ReadBounds(max_decompressed_bytes=10_000))

    assert str(caught.value.issue).startswith("the file is over 10,000 bytes once decompressed (")
    assert str(caught.value.issue).endswith("by its row groups; BRANCHPOINT_MAX_DECOMPRESSED_BYTES)")


def test_a_text_over_the_line_bound_is_refused_with_its_row():
    data = hub_rows(message("a"), message("b", "a", text="x" * 500))

    with pytest.raises(FormatError) as caught:
        read(data, bounds=ReadBounds(max_line_bytes=100))

    assert str(caught.value.issue) == "row 2: text: is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"


def test_problems_are_counted_in_rows():
    trees = read(hub_rows(message("a"), message("b", "x"), message("c", "a", text="nul\x00")))

    assert [str(issue) for tree in trees for issue in tree.issues] == [
        'row 2: parent_id: unknown parent "x" of message "b"',
        "row 3: text: contains a NUL character (\\u0000), which cannot be stored",
    ]
    assert trees[0].issues[0].as_dict()["row"] == 2


def test_a_nul_nested_in_a_struct_is_found():
    trees = read(hub_rows(message("a", emojis={"name": ["+1\x00"], "count": [1]})))

    assert [str(issue) for tree in trees for issue in tree.issues] == [
        "row 1: emojis.name[0]: contains a NUL character (\\u0000), which cannot be stored"
    ]


def test_values_nesting_past_the_bound_are_refused_row_by_row():
    labels = {"name": ["spam"], "value": [0.0], "count": [3]}
    trees = read(
        hub_rows(message("a"), message("b", "a", labels=labels)), bounds=ReadBounds(max_json_depth=2)
    )

    assert [str(issue) for tree in trees for issue in tree.issues] == [
        "row 2: labels.name: nests arrays and objects more than 2 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)"
    ]


def test_a_file_that_is_not_parquet_is_refused():
    with pytest.raises(FormatError) as caught:
        read(b'{"message_id": "a"}\n', layout="parquet")

    assert str(caught.value.issue).startswith("not a Parquet file (")


def test_without_pyarrow_parquet_is_refused_naming_the_extra(fixture_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)

    with pytest.raises(FormatError) as caught:
        read(fixture_path(FIXTURE).read_bytes())

    assert str(caught.value.issue) == (
        "Parquet needs pyarrow, which is not installed: pip install -e '.[parquet]' (Branchpoint's parquet extra)"
    )
    assert not oasst_parquet.available()
