"""Reading JSON items one at a time, with the line each one starts on."""

import gzip
import io
import json

import pytest

from trees.formats.jsonstream import _CHUNK, decode, encode, iter_documents
from trees.formats.records import FormatError, ImportIssue
from trees.services import open_source


def documents(data: bytes) -> list[tuple[int, object]]:
    return list(iter_documents(io.BytesIO(data)))


def messages(data: bytes) -> list[str]:
    return [str(value) for _, value in documents(data) if isinstance(value, ImportIssue)]


def format_error(data: bytes) -> str:
    with pytest.raises(FormatError) as caught:
        documents(data)
    return str(caught.value.issue)


def test_it_reads_a_json_array_one_element_at_a_time_with_the_line_each_starts_on():
    data = b'[\n  {"id": "a"},\n  {"id": "b",\n   "x": 1},\n  {"id": "c"}\n]\n'

    assert documents(data) == [(2, {"id": "a"}), (3, {"id": "b", "x": 1}), (5, {"id": "c"})]


def test_it_reads_a_single_pretty_printed_object_as_one_item():
    data = b'\n\n{\n  "id": "a",\n  "tree": {"id": "root"}\n}\n'

    assert documents(data) == [(3, {"id": "a", "tree": {"id": "root"}})]


def test_it_reads_jsonl_one_line_at_a_time_skipping_blank_lines():
    data = b'{"id": "a"}\n\n{"id": "b"}\r\n   \n{"id": "c"}'

    assert documents(data) == [(1, {"id": "a"}), (3, {"id": "b"}), (5, {"id": "c"})]


def test_it_reads_nothing_from_an_empty_file_or_one_of_blanks():
    assert documents(b"") == []
    assert documents(b" \n\t\n") == []
    assert documents(b"[]") == []
    assert documents(b"[\n]\n") == []


def test_it_skips_a_utf8_byte_order_mark():
    assert documents(b'\xef\xbb\xbf{"id": "a"}\n{"id": "b"}\n') == [(1, {"id": "a"}), (2, {"id": "b"})]
    assert documents(b'\xef\xbb\xbf[{"id": "a"}]') == [(1, {"id": "a"})]
    assert documents(b'\xef\xbb\xbf{\n"id": "a"\n}') == [(1, {"id": "a"})]


def test_it_reports_a_broken_jsonl_line_with_line_and_column_and_reads_on():
    data = b'{"id": "a"}\n{"id": "b",, "x": 1}\n{"id": "c"}\n'

    assert documents(data)[0] == (1, {"id": "a"})
    assert documents(data)[2] == (3, {"id": "c"})
    assert messages(data) == [
        "line 2: malformed JSON at column 12: Expecting property name enclosed in double quotes"
    ]


def test_it_reports_where_a_json_array_breaks_and_stops_there():
    data = b'[\n  {"id": "a"},\n  {"id": "b" "x": 1}\n]'

    assert format_error(data) == "line 3: malformed JSON at column 14: Expecting ',' delimiter"


def test_it_reports_a_missing_comma_between_array_elements():
    assert format_error(b'[{"id": "a"}\n {"id": "b"}]') == (
        "line 2: malformed JSON at column 2: expected ',' or ']' after an array element"
    )


def test_it_reports_an_array_that_is_not_closed():
    assert (
        format_error(b'[{"id": "a"},\n')
        == "line 2: malformed JSON at column 1: the array is not closed with ']'"
    )


def test_it_reports_where_a_single_object_breaks():
    assert format_error(b'{\n  "id": "a",\n  "tree": }\n}') == (
        "line 3: malformed JSON at column 11: Expecting value"
    )


def test_it_counts_columns_from_the_start_of_an_indented_first_line():
    assert messages(b'\n  {"id": }\n{"id": "b"}\n') == [
        "line 2: malformed JSON at column 10: Expecting value"
    ]
    assert format_error(b'\n  [{"id": }]') == "line 2: malformed JSON at column 11: Expecting value"
    assert format_error(b'\n  {"id": \n}') == "line 3: malformed JSON at column 1: Expecting value"
    assert format_error(b'\n  {"id": }') == "line 2: malformed JSON at column 10: Expecting value"


def test_it_counts_jsonl_lines_across_chunk_boundaries():
    filler = json.dumps({"text": "x" * 1000})
    count = 3 * _CHUNK // len(filler)
    data = "\n".join([filler] * count + ['{"id": "last"}', "{broken"]).encode()

    items = documents(data)

    assert len(items) == count + 2
    assert items[-2] == (count + 1, {"id": "last"})
    assert str(items[-1][1]) == (
        f"line {count + 2}: malformed JSON at column 2: Expecting property name enclosed in double quotes"
    )


def test_it_counts_array_lines_and_columns_across_chunk_boundaries():
    filler = json.dumps({"text": "x" * 1000})
    count = 3 * _CHUNK // len(filler)
    data = ("[\n" + ",\n".join([filler] * count + ['{"id": "last"}']) + ",\n  {oops}\n]").encode()

    with pytest.raises(FormatError) as caught:
        for line, value in iter_documents(io.BytesIO(data)):
            last = (line, value)

    assert last == (count + 2, {"id": "last"})
    assert str(caught.value.issue) == (
        f"line {count + 3}: malformed JSON at column 4: Expecting property name enclosed in double quotes"
    )


def test_it_counts_columns_on_one_long_line_across_chunk_boundaries():
    # A minified array: everything is on line 1.
    text = json.dumps([{"text": "x" * 1000}] * (3 * _CHUNK // 1000))
    text = text[:-1] + ", {oops}]"

    assert format_error(text.encode()) == (
        f"line 1: malformed JSON at column {text.index('{oops}') + 2}: "
        "Expecting property name enclosed in double quotes"
    )


def test_it_reads_jsonl_whose_first_line_is_longer_than_a_chunk():
    big = {"id": "a", "text": "x" * (2 * _CHUNK)}
    data = (json.dumps(big) + "\n" + '{"id": "b"}\n').encode()

    assert documents(data) == [(1, big), (2, {"id": "b"})]


def test_it_reads_an_element_cut_by_a_chunk_boundary_inside_a_multibyte_character():
    # "é" is two bytes in UTF-8; place one across the first chunk boundary.
    padding = "x" * (_CHUNK - len('[{"text": "') - 1)
    text = '[{"text": "' + padding + 'é"}, 12345]'

    assert documents(text.encode()) == [(1, {"text": padding + "é"}), (1, 12345)]


def test_it_keeps_integers_beyond_64_bits_exact():
    big = 2**64 + 1
    line = f'{{"id": {big}, "n": [{-(2**70)}, 1.5]}}'.encode()

    assert documents(line + b"\n") == [(1, {"id": big, "n": [-(2**70), 1.5]})]
    assert documents(b"[" + line + b"]") == [(1, {"id": big, "n": [-(2**70), 1.5]})]
    assert decode(encode({"id": big})) == {"id": big}


def test_it_reports_bytes_that_are_not_utf8_on_their_own_line():
    data = b'{"id": "a"}\n{"id": "caf\xe9"}\n{"id": "c"}\n'

    assert [value for _, value in documents(data) if not isinstance(value, ImportIssue)] == [
        {"id": "a"},
        {"id": "c"},
    ]
    assert messages(data) == ["line 2: not UTF-8 text (invalid continuation byte at byte 12)"]


def test_it_refuses_a_json_array_that_is_not_utf8():
    with pytest.raises(UnicodeDecodeError):
        documents(b'[{"id": "caf\xe9"}]')


def test_it_reads_gzip_through_the_import_source():
    data = gzip.compress(b'{"id": "a"}\n{"id": "b"}\n')

    assert list(iter_documents(open_source(io.BytesIO(data)))) == [(1, {"id": "a"}), (2, {"id": "b"})]


def test_it_reads_an_uncompressed_import_source_as_it_is():
    assert list(iter_documents(open_source(io.BytesIO(b'[{"id": "a"}]')))) == [(1, {"id": "a"})]


def test_it_parses_nesting_deeper_than_the_default_recursion_limit_when_asked():
    deep = "[" * 5000 + "]" * 5000

    assert next(iter_documents(io.BytesIO(deep.encode() + b"\n"), max_nesting=5000))[0] == 1


def test_it_reports_nesting_deeper_than_allowed():
    deep = ("[" * 200_000 + "]" * 200_000).encode()

    assert str(list(iter_documents(io.BytesIO(b"1\n" + deep)))[1][1]) == (
        "line 2: nests arrays and objects more than 100 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)"
    )
