"""CSV for people, who open it in a spreadsheet: no cell runs as a formula.

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some,
a tab or a carriage return) as a formula, which can fetch URLs, run commands or
leak other cells — and the values in our reports are what other people typed:
tree ids, metadata, model names. Following OWASP's rule ("CSV Injection"), such a
cell gets a leading ``'``, which spreadsheets show as text and hide. Numbers are
left alone: a negative score is a number, not a formula.

This is for files meant to be read (reports, results). A data format that must
round-trip exact values (the dataset CSV, ``trees.formats.dialogue_csv``) does not
use it; docs/security.md says so.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: Any) -> Any:
    """``value``, with a ``'`` in front when it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _Line:
    """A file-like object whose ``write`` returns the line, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


def spreadsheet_lines(rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """``rows`` as CSV lines (``\\r\\n``-terminated, as spreadsheets expect), every cell neutralised."""
    writer = csv.writer(_Line())
    for row in rows:
        yield writer.writerow([spreadsheet_cell(value) for value in row])
