"""Dialogues as CSV, one row per utterance: ``dialog_id,utterance_index,speaker,text``.

The first row names the columns; which column holds the dialogue id, the
index, the speaker and the text is an option (those names by default), and
any further column goes to each message's metadata as text. Each dialogue
becomes a linear tree ordered by the index column, whose node ids are the
indexes. Speakers map to roles through a table (``DEFAULT_SPEAKERS``: USER
and ASSISTANT, user and assistant, human and bot) that an import may extend.

A dialogue's rows must be together (sort the file by dialogue first): the
reader holds one dialogue at a time, however long the file. Problems name
the row as a spreadsheet numbers it, the header being row 1 —

    row 7: utterance_index: "3a" is not an integer

Writing gives the same columns back (each speaker as the CSV it came from
wrote it, ``USER`` or ``Agent``; the role's name for messages from another
format), plus the metadata keys the first dialogue's messages carry; keys first met in a later
dialogue have no column and are left out. Values are written exactly as they
are, those starting with ``=``, ``+``, ``-`` or ``@`` too: this is a data format
that must read back the same, not a report (which neutralises such cells,
``trees.formats.spreadsheet``); open it in a spreadsheet as text only
(docs/security.md).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from trees import vocabulary
from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds, line_too_long
from trees.formats.ccpe import SEGMENTS_KEY
from trees.formats.dialogues import chain, dialogue, utterance_index
from trees.formats.jsonstream import encode
from trees.formats.records import (
    CSV,
    SPEAKER_AS_WRITTEN,
    FormatError,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    spelled_role,
    visible_metadata,
)
from trees.storable import unstorable

NAME = "csv"
FILE = CSV
DEFAULT_SPEAKERS: dict[str, str] = {
    "USER": vocabulary.USER,
    "ASSISTANT": vocabulary.ASSISTANT,
    "user": vocabulary.USER,
    "assistant": vocabulary.ASSISTANT,
    "human": vocabulary.USER,
    "bot": vocabulary.ASSISTANT,
}


@dataclass(frozen=True)
class Columns:
    """Which columns hold what (their header names)."""

    dialog: str = "dialog_id"
    index: str = "utterance_index"
    speaker: str = "speaker"
    text: str = "text"

    def required(self) -> list[str]:
        return [self.dialog, self.index, self.speaker, self.text]


def speaker_table(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The default speaker table with ``extra`` entries added (or overriding)."""
    return DEFAULT_SPEAKERS | dict(extra or {})


def _issue(row: int, path: str, message: str) -> ImportIssue:
    return ImportIssue(row, path, message, "row")


@dataclass
class _Row:
    number: int
    index: int | None
    speaker: str | None
    text: str
    metadata: dict[str, str]


class _Lines:
    """The lines of the text, for ``csv.reader``: none longer than ``limit`` characters, nor
    a row (whose quoted cells may span lines) longer than that together."""

    def __init__(self, text: io.TextIOWrapper, limit: int):
        self._readline = text.readline
        self._limit = limit
        self.row_chars = 0  # read since the last row began; the reader resets it

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        line = self._readline(self._limit + 1)
        if not line:
            raise StopIteration
        self.row_chars += len(line)
        if self.row_chars > self._limit + 1 or (len(line) > self._limit and not line.endswith("\n")):
            raise _TooLong
        return line


class _TooLong(Exception):
    pass


def read(
    stream: IO[bytes],
    *,
    dialog_column: str = "dialog_id",
    index_column: str = "utterance_index",
    speaker_column: str = "speaker",
    text_column: str = "text",
    speakers: Mapping[str, str] | None = None,
    bounds: ReadBounds = DEFAULT_BOUNDS,
    **_: Any,
) -> Iterator[TreeRecord]:
    """One linear tree per dialogue; ``speakers`` adds entries to the default speaker table.

    Raises ``FormatError`` when the header lacks a column, the file is not
    CSV or a row is longer than the bounds allow, ``UnicodeDecodeError`` when
    it is not UTF-8.
    """
    columns = Columns(dialog_column, index_column, speaker_column, text_column)
    table = speaker_table(speakers)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")  # type: ignore[arg-type]
    lines = _Lines(text, bounds.max_line_bytes)
    rows = csv.reader(lines)
    number = 0
    try:
        header = next(rows, None)
        number = 1
        if header is None:
            return
        header = [name.strip() for name in header]
        for name in header:
            if found := unstorable(name):
                raise FormatError(_issue(1, "", f"a column name {found.message}"))
        positions = _positions(header, columns)
        group_id: str | None = None
        group: list[_Row] = []
        group_issues: list[ImportIssue] = []
        finished: dict[str, tuple[int, int]] = {}  # dialogue id -> its first and last row
        for cells in rows:
            lines.row_chars = 0
            number += 1
            if not cells:
                continue  # a blank line
            issues: list[ImportIssue] = []
            dialog_id, row = _parse_row(number, cells, header, positions, columns, table, issues)
            if dialog_id is None:
                # A row that names no dialogue belongs to none: it is an item of its own.
                item = TreeRecord(external_id=None, line=number)
                item.issues.extend(issues)
                yield item
                continue
            if dialog_id != group_id:
                if group_id is not None:
                    yield _dialogue(group_id, group, group_issues, finished, columns)
                group_id, group, group_issues = dialog_id, [], []
            group.append(row)
            group_issues.extend(issues)
        if group_id is not None:
            yield _dialogue(group_id, group, group_issues, finished, columns)
    except csv.Error as error:
        raise FormatError(_issue(number + 1, "", f"not readable as CSV: {error}")) from None
    except _TooLong:
        raise line_too_long(number + 1, bounds.max_line_bytes, "row", unit="row") from None
    finally:
        # Leave the caller's stream open: the wrapper would close it when collected.
        text.detach()


def _positions(header: list[str], columns: Columns) -> dict[str, int]:
    """Where each column is; a missing or repeated column stops the import."""
    positions: dict[str, int] = {}
    for position, name in enumerate(header):
        if name in positions:
            raise FormatError(
                _issue(
                    1,
                    "",
                    f'the column "{name}" appears twice (columns {positions[name] + 1} and {position + 1})',
                )
            )
        positions[name] = position
    missing = [name for name in columns.required() if name not in positions]
    if missing:
        named = " and ".join(f'"{name}"' for name in missing)
        shown = ", ".join(header) if any(header) else "no column names"
        plural = "s" if len(missing) > 1 else ""
        raise FormatError(_issue(1, "", f"missing column{plural} {named} (the header has {shown})"))
    return positions


def _parse_row(
    number: int,
    cells: list[str],
    header: list[str],
    positions: dict[str, int],
    columns: Columns,
    table: dict[str, str],
    issues: list[ImportIssue],
) -> tuple[str | None, _Row]:
    row = _Row(number, None, None, "", {})
    if len(cells) != len(header):
        issues.append(_issue(number, "", f"has {len(cells)} cells, but the header has {len(header)} columns"))
        return None, row
    for name, cell in zip(header, cells, strict=True):
        if found := unstorable(cell):
            issues.append(_issue(number, name, found.message))
    dialog_id = cells[positions[columns.dialog]].strip()
    if not dialog_id:
        issues.append(_issue(number, columns.dialog, "empty dialogue id"))
    raw_index = cells[positions[columns.index]]
    try:
        row.index = int(raw_index.strip())
    except ValueError:
        issues.append(_issue(number, columns.index, f"{encode(raw_index)} is not an integer"))
    raw_speaker = cells[positions[columns.speaker]]
    row.speaker = table.get(raw_speaker, table.get(raw_speaker.strip()))
    if row.speaker is None:
        known = ", ".join(table)
        issues.append(
            _issue(number, columns.speaker, f"{encode(raw_speaker)} is not in the speaker table ({known})")
        )
    row.text = cells[positions[columns.text]]
    structural = {positions[name] for name in columns.required()}
    row.metadata = {name: cells[slot] for slot, name in enumerate(header) if slot not in structural}
    if row.speaker is not None and raw_speaker != row.speaker:
        row.metadata[SPEAKER_AS_WRITTEN] = raw_speaker  # written back as it came: "USER", "Agent"
    return dialog_id or None, row


def _dialogue(
    dialog_id: str,
    rows: list[_Row],
    issues: list[ImportIssue],
    finished: dict[str, tuple[int, int]],
    columns: Columns,
) -> TreeRecord:
    tree = TreeRecord(external_id=dialog_id, line=rows[0].number)
    tree.issues.extend(issues)
    if dialog_id in finished:
        first, last = finished[dialog_id]
        where = f"row {first}" if first == last else f"rows {first} to {last}"
        tree.issues.append(
            _issue(
                rows[0].number,
                columns.dialog,
                f'dialogue "{dialog_id}" has {where} and goes on here, after other dialogues: '
                "a dialogue's rows must be together (sort the file by dialogue)",
            )
        )
        return tree
    finished[dialog_id] = (rows[0].number, rows[-1].number)
    first_at: dict[int, int] = {}
    for row in rows:
        if row.index is None:
            continue
        if row.index in first_at:
            tree.issues.append(
                _issue(
                    row.number,
                    columns.index,
                    f'duplicate index {row.index} in dialogue "{dialog_id}" '
                    f"(first at row {first_at[row.index]})",
                )
            )
        else:
            first_at[row.index] = row.number
    if tree.issues:
        return tree
    ordered = sorted(rows, key=lambda row: row.index)  # type: ignore[arg-type, return-value]
    chain(
        tree,
        [
            MessageRecord(
                str(row.index), None, row.speaker or "", row.text, metadata=row.metadata, line=row.number
            )
            for row in ordered
        ],
    )
    return tree


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return encode(value)


def _metadata(message: MessageRecord) -> dict[str, Any]:
    # Spans do not fit in a row: the CCPE formats carry them.
    return {key: value for key, value in visible_metadata(message.metadata).items() if key != SEGMENTS_KEY}


def _speaker(message: MessageRecord) -> str:
    """The speaker as the CSV it came from wrote it; the role's name when it came from elsewhere,
    or when the default table reads that speaker as another role (the message changed since)."""
    spelling = spelled_role(message, SPEAKER_AS_WRITTEN)
    return spelling if DEFAULT_SPEAKERS.get(spelling, message.role) == message.role else message.role


def write(
    trees: Iterable[TreeRecord],
    *,
    dialog_column: str = "dialog_id",
    index_column: str = "utterance_index",
    speaker_column: str = "speaker",
    text_column: str = "text",
    **_: Any,
) -> Iterator[str]:
    """The header, then one piece per dialogue (its rows, in order)."""
    buffer = io.StringIO()
    out = csv.writer(buffer, lineterminator="\n")
    extra: list[str] | None = None
    for tree in trees:
        turns = dialogue(tree)
        if extra is None:
            seen: dict[str, None] = {}
            for message in turns:
                seen.update(dict.fromkeys(_metadata(message)))
            extra = list(seen)
            out.writerow([dialog_column, index_column, speaker_column, text_column, *extra])
        for position, message in enumerate(turns):
            metadata = _metadata(message)
            out.writerow(
                [
                    tree.external_id,
                    utterance_index(message, position),
                    _speaker(message),
                    message.text,
                    *(_cell(metadata.get(key)) for key in extra),
                ]
            )
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    if extra is None:
        yield ",".join([dialog_column, index_column, speaker_column, text_column]) + "\n"
