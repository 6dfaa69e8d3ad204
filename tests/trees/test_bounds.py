"""What reading a file may take in is bounded, whoever made the file (``trees.formats.bounds``):

- a gzip file's decompressed bytes: ``BRANCHPOINT_MAX_DECOMPRESSED_BYTES`` (by default ten
  times ``BRANCHPOINT_MAX_UPLOAD_BYTES``);
- the longest line of JSONL or CSV, element of a JSON array or JSON document read whole:
  ``BRANCHPOINT_MAX_LINE_BYTES``;
- how deep a JSON value nests, a tree's own nesting aside: ``BRANCHPOINT_MAX_JSON_DEPTH``.

Past one, the file is refused with the line, the reason and the setting, in memory the
bounds set and not the file: a 300 KB gzip bomb that decompresses to 300 MB (one endless
line, as ``gzip < /dev/zero`` makes) grew a worker to 1.6 GB; now the API and the commands
refuse it holding a few megabytes. Peak memory is measured with ``tracemalloc``.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.imports.annotations import annotations_import
from annotation.projects.services import project_create
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items
from trees.formats import dialogue_csv, potato
from trees.formats.bounds import ReadBounds
from trees.formats.jsonstream import iter_documents
from trees.formats.records import FormatError, ImportIssue
from trees.models import AuditEntry, ConversationTree, Dataset
from trees.services import open_source, tree_import

MB = 1 << 20
SMALL = ReadBounds(max_line_bytes=100, max_json_depth=5, max_decompressed_bytes=1000)
ITEM = {"id": "c1", "tree": {"id": "r", "role": "user", "content": "hello"}}


def documents(data: bytes, bounds: ReadBounds = SMALL) -> list[tuple[int, Any]]:
    return list(iter_documents(io.BytesIO(data), bounds=bounds))


def refusal(read: Callable[[], Any]) -> str:
    with pytest.raises(FormatError) as caught:
        read()
    return str(caught.value.issue)


def gzip_of(block: bytes, copies: int) -> bytes:
    """``block`` ``copies`` times over, gzipped in little memory: the compressed block repeated
    (a full flush makes each copy independent of the one before)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(copies):
        crc = zlib.crc32(block, crc)
    size = len(block) * copies
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + piece * copies + packer.flush() + struct.pack("<II", crc, size & 0xFFFFFFFF)


# -- lines, elements, documents ----------------------------------------------------------------


def test_a_jsonl_line_longer_than_the_bound_stops_the_file_naming_it():
    data = b'{"id": "a"}\n{"id": "b"}\n{"id": "' + b"x" * 200 + b'"}\n'

    assert refusal(lambda: documents(data)) == (
        "line 3: the line is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_a_line_of_exactly_the_bound_is_read():
    line = b'{"id": "' + b"x" * 90 + b'"}'
    assert len(line) == 100

    assert documents(line + b"\n" + line + b"\n") == [(1, {"id": "x" * 90}), (2, {"id": "x" * 90})]


def test_an_endless_first_line_is_refused_once_past_the_bound():
    assert refusal(lambda: documents(b"0" * 5000)) == (
        "line 1: the line is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_an_array_element_longer_than_the_bound_stops_the_file_naming_its_line():
    data = b'[\n{"id": "a"},\n{"id": "' + b"x" * 500 + b'"}\n]'

    assert refusal(lambda: documents(data)) == (
        "line 3: the array element is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_a_long_array_of_short_elements_is_read_whatever_its_size():
    data = json.dumps([{"id": str(index)} for index in range(2000)]).encode()

    assert len(documents(data)) == 2000


def test_a_json_document_read_whole_is_bounded_too():
    data = b'{\n"id": "a",\n"pad": "' + b"x" * 500 + b'"\n}'

    assert refusal(lambda: documents(data)) == (
        "line 1: the JSON document is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_a_csv_row_longer_than_the_bound_stops_the_file_naming_its_row():
    rows = 'dialog_id,utterance_index,speaker,text\nd1,0,USER,hi\nd1,1,ASSISTANT,"' + "x" * 200 + '"\n'

    assert refusal(lambda: list(dialogue_csv.read(io.BytesIO(rows.encode()), bounds=SMALL))) == (
        "row 3: the row is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_a_csv_row_of_short_lines_in_one_quoted_cell_is_bounded_as_a_whole():
    cell = "\n".join(["short"] * 50)
    rows = f'dialog_id,utterance_index,speaker,text\nd1,0,USER,"{cell}"\n'

    assert refusal(lambda: list(dialogue_csv.read(io.BytesIO(rows.encode()), bounds=SMALL))) == (
        "row 2: the row is longer than 100 bytes (BRANCHPOINT_MAX_LINE_BYTES)"
    )


def test_a_csv_cell_with_a_nul_is_refused_by_row_and_column():
    rows = "dialog_id,utterance_index,speaker,text\nd1,0,USER,hi\x00there\n"

    [tree] = dialogue_csv.read(io.BytesIO(rows.encode()))

    assert [str(issue) for issue in tree.issues] == [
        "row 2: text: contains a NUL character (\\u0000), which cannot be stored"
    ]


def test_a_number_too_long_to_read_is_an_issue_on_its_line():
    long = b"1" * 5000
    data = b'{"a": ' + long + b'}\n{"b": 2}\n'

    assert [(line, str(value)) for line, value in documents(data, ReadBounds())] == [
        (1, "line 1: a number has more than 4,300 digits"),
        (2, "{'b': 2}"),
    ]
    assert refusal(lambda: documents(b'[{"a": ' + long + b"}]", ReadBounds())) == (
        "line 1: a number has more than 4,300 digits"
    )


# -- nesting ----------------------------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_a_document_nested_deeper_than_the_bound_is_an_issue_on_its_line_and_reading_goes_on():
    data = b"\n".join(json.dumps(value).encode() for value in ({"ok": nested(4)}, {"deep": nested(5)}, [1]))

    assert [(line, str(value)) for line, value in documents(data)] == [
        (1, "{'ok': [[[[1]]]]}"),
        (2, "line 2: nests arrays and objects more than 5 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)"),
        (3, "[1]"),
    ]


def test_the_depth_bound_holds_in_a_json_array_and_far_past_the_recursion_limit():
    array = b"[" + json.dumps({"deep": nested(6)}).encode() + b"]"
    far = b"[" * 100_000 + b"]" * 100_000

    [(_, issue)] = documents(array)
    assert isinstance(issue, ImportIssue) and "more than 5 levels deep" in issue.message
    assert "more than 5 levels deep" in str(documents(b"1\n" + far, ReadBounds(max_json_depth=5))[1][1])


def test_a_trees_own_nesting_is_bounded_by_its_depth_limit_not_the_json_depth():
    node: dict[str, Any] = {"id": "n0", "role": "user", "content": "x"}
    root = node
    for level in range(1, 40):
        child = {"id": f"n{level}", "role": "assistant" if level % 2 else "user", "content": "x"}
        node["children"] = [child]
        node = child
    data = json.dumps({"id": "deep", "tree": root}).encode()

    [tree] = potato.read(io.BytesIO(data), bounds=ReadBounds(max_json_depth=5))

    assert tree.ok, tree.issues
    assert len(tree.messages) == 40


@pytest.mark.django_db
def test_metadata_nested_deeper_than_the_bound_is_refused_by_the_import(settings: Any):
    settings.BRANCHPOINT_MAX_JSON_DEPTH = 5
    item = {**ITEM, "tree": {**ITEM["tree"], "tools": nested(5)}}
    data = json.dumps(item) + "\n" + json.dumps({**ITEM, "id": "c2", "extra": {"a": nested(5)}})

    report = tree_import(
        dataset=Dataset.objects.create(name="d"), source=io.BytesIO(data.encode()), format_name="potato"
    )

    assert [str(issue) for issue in report.errors] == [
        'line 1: tree: node "r"\'s metadata nests arrays and objects more than 5 levels deep '
        "(BRANCHPOINT_MAX_JSON_DEPTH)",
        "line 2: the item's metadata nests arrays and objects more than 5 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)",
    ]
    assert not ConversationTree.objects.exists()


# -- gzip -------------------------------------------------------------------------------------


def test_a_gzip_file_past_the_decompressed_bound_is_refused_naming_the_line_reached():
    data = gzip.compress(b'{"id": "a"}\n' * 200)

    assert refusal(lambda: list(iter_documents(open_source(io.BytesIO(data), SMALL), bounds=SMALL))) == (
        "line 84: the file is over 1,000 bytes once decompressed (BRANCHPOINT_MAX_DECOMPRESSED_BYTES)"
    )


def test_a_gzip_file_within_the_bound_is_read_whole():
    data = gzip.compress(b'{"id": "a"}\n' * 80)

    assert len(list(iter_documents(open_source(io.BytesIO(data), SMALL), bounds=SMALL))) == 80


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-12],  # cut short
        lambda data: data[:12] + b"\xff" * 8 + data[20:],  # its deflate stream broken
        lambda data: data[:-8] + b"\x00" * 8,  # a wrong checksum
    ],
    ids=["cut short", "broken inside", "wrong checksum"],
)
def test_a_damaged_gzip_file_is_an_issue_however_it_is_damaged(damage: Callable[[bytes], bytes]):
    data = damage(gzip.compress(json.dumps(ITEM).encode() * 20))

    assert refusal(lambda: list(iter_documents(open_source(io.BytesIO(data), ReadBounds())))).startswith(
        "the gzip file is damaged ("
    )


def test_the_decompressed_bound_is_ten_uploads_by_default():
    from django.conf import settings

    assert settings.BRANCHPOINT_MAX_DECOMPRESSED_BYTES == 10 * settings.BRANCHPOINT_MAX_UPLOAD_BYTES


# -- bombs, through the API and the commands, in little memory ---------------------------------


ENDLESS_LINE = gzip_of(bytes(MB), 300)  # 300 KB of gzip: 300 MB of zeros, no newline
MANY_LINES = gzip_of((json.dumps(ITEM) + "\n").encode() * (MB // (len(json.dumps(ITEM)) + 1)), 300)


@pytest.fixture
def tight(settings: Any) -> None:
    """Bounds a test can reach quickly; the bombs are hundreds of times past them."""
    settings.BRANCHPOINT_MAX_LINE_BYTES = MB // 4
    settings.BRANCHPOINT_MAX_DECOMPRESSED_BYTES = 2 * MB


def peak_while(action: Callable[[], Any]) -> tuple[Any, int]:
    """What ``action`` returns, and the most memory Python held meanwhile."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


BOMBS = [
    (ENDLESS_LINE, "line 1: the line is longer than 262,144 bytes (BRANCHPOINT_MAX_LINE_BYTES)"),
    (
        MANY_LINES,
        "line 29960: the file is over 2,097,152 bytes once decompressed (BRANCHPOINT_MAX_DECOMPRESSED_BYTES)",
    ),
]
BOMB_IDS = ["one endless line", "many lines"]


@pytest.fixture
def root_client(db: Any) -> Iterator[Client]:
    root = person("root", is_superuser=True, is_staff=True)
    dataset = dataset_with("bombed", potato_items("b", "B", 1))
    project_create(
        name="bombed",
        dataset=dataset,
        config_yaml="annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n",
    )
    client = Client()
    client.force_login(root)
    yield client


@pytest.mark.parametrize(("bomb", "message"), BOMBS, ids=BOMB_IDS)
@pytest.mark.parametrize("url", ["/api/v1/datasets/bombed/import", "/api/v1/projects/bombed/import"])
def test_a_gzip_bomb_uploaded_to_an_import_is_refused_in_little_memory(
    root_client: Client, tight: None, url: str, bomb: bytes, message: str
) -> None:
    fields = {"format": "potato"} if "datasets" in url else {}
    # Once, so that what the first request loads (modules, caches) is not counted.
    root_client.post(url, {**fields, "file": SimpleUploadedFile("warm.gz", gzip.compress(b"[]"))})
    entries, trees = AuditEntry.objects.count(), ConversationTree.objects.count()

    response, peak = peak_while(
        lambda: root_client.post(url, {**fields, "file": SimpleUploadedFile("bomb.jsonl.gz", bomb)})
    )

    assert peak < 12 * MB, f"{peak:,} bytes"
    assert response.status_code == 400
    first = response.json()["errors"][0]
    assert f"line {first['line']}: {first['message']}" == message
    assert (AuditEntry.objects.count(), ConversationTree.objects.count()) == (entries, trees)


@pytest.mark.parametrize(("bomb", "message"), BOMBS, ids=BOMB_IDS)
@pytest.mark.parametrize("command", ["import_trees", "import_annotations"])
def test_a_gzip_bomb_given_to_an_import_command_exits_2_in_little_memory(
    root_client: Client, tight: None, tmp_path: Any, command: str, bomb: bytes, message: str
) -> None:
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(bomb)
    args = (
        ["bombed-trees", str(path), "--format", "potato"]
        if command == "import_trees"
        else ["bombed", str(path)]
    )
    err = io.StringIO()

    def run() -> CommandError:
        with pytest.raises(CommandError) as caught:
            call_command(command, *args, stdout=io.StringIO(), stderr=err)
        return caught.value

    error, peak = peak_while(run)

    assert peak < 12 * MB, f"{peak:,} bytes"
    assert error.returncode == 2
    assert err.getvalue().splitlines()[0] == message


@pytest.mark.django_db
def test_an_annotation_import_refuses_a_record_nested_too_deeply(settings: Any) -> None:
    settings.BRANCHPOINT_MAX_JSON_DEPTH = 5
    project = project_create(
        name="p", dataset=dataset_with("p-trees", potato_items("p", "P", 1)),
        config_yaml="annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n",
    )  # fmt: skip
    record = {"id": "p-0", "user": "olga", "annotations": {"note": {"text": nested(3)}}}

    report = annotations_import(project=project, source=io.BytesIO(json.dumps(record).encode()))

    assert [str(issue) for issue in report.errors] == [
        "line 1: nests arrays and objects more than 5 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)"
    ]
