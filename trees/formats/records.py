"""Plain records that every format reads into and writes from.

Readers turn a file into ``TreeRecord`` objects (one per item) and attach
``ImportIssue`` values to the items they could not make sense of; writers turn
records back into text. Nothing here touches the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileKind:
    """What a format's files are, for downloads: name ending, media type, and
    whether two files can be joined into one (JSONL can; a JSON array or a
    CSV with its header cannot)."""

    extension: str
    media_type: str
    joinable: bool


JSONL = FileKind("jsonl", "application/x-ndjson", joinable=True)
JSON = FileKind("json", "application/json", joinable=False)
CSV = FileKind("csv", "text/csv", joinable=False)


@dataclass(slots=True, frozen=True)
class ImportIssue:
    """One problem in an input file, located so a person can find and fix it.

    ``unit`` says what ``line`` counts: lines of text, or ``row`` for CSV
    files, whose rows are numbered as a spreadsheet shows them (a quoted
    cell may span several lines).
    """

    line: int | None
    path: str
    message: str
    unit: str = "line"

    def __str__(self) -> str:
        parts = []
        if self.line is not None:
            parts.append(f"{self.unit} {self.line}")
        if self.path:
            parts.append(self.path)
        parts.append(self.message)
        return ": ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {self.unit: self.line, "path": self.path, "message": self.message}


class FormatError(Exception):
    """The file cannot be read any further (for example a broken JSON array)."""

    def __init__(self, issue: ImportIssue):
        super().__init__(str(issue))
        self.issue = issue


@dataclass(slots=True)
class MessageRecord:
    external_id: str
    parent_id: str | None
    role: str
    text: str
    lang: str | None = None
    synthetic: bool = False
    model_name: str | None = None
    review_count: int | None = None
    review_result: bool | None = None
    rank: int | None = None
    deleted: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    depth: int = 0
    position: int = 0
    # Where the node sits in its item: the index of its parent in the tree's
    # message list (-1 for the root) and its index in the parent's child list.
    # Paths such as "tree.children[1].children[0]" are built from these only
    # when an error needs one: storing them would cost O(depth) per node.
    parent_index: int = -1
    line: int | None = None


@dataclass(slots=True)
class TreeRecord:
    external_id: str | None
    messages: list[MessageRecord] = field(default_factory=list)
    state: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    line: int | None = None
    issues: list[ImportIssue] = field(default_factory=list)
    # How the format names the root and the child lists, for error paths.
    root_path: str = ""
    children_key: str = "children"

    @property
    def ok(self) -> bool:
        return not self.issues

    def location(self, index: int) -> str:
        """The path of message ``index`` inside its item, e.g. ``tree.children[1]``.

        Empty for formats with one message per line, where the line says it all.
        """
        if not self.root_path:
            return ""
        slots = []
        while index >= 0:
            current = self.messages[index]
            if current.parent_index >= 0:
                slots.append(current.position)
            index = current.parent_index
        return self.root_path + "".join(f".{self.children_key}[{slot}]" for slot in reversed(slots))

    def line_of(self, index: int) -> int | None:
        line = self.messages[index].line
        return self.line if line is None else line

    def add_issue(self, path: str, message: str, line: int | None = None) -> None:
        self.issues.append(ImportIssue(self.line if line is None else line, path, message))


# Metadata key listing the modelled keys an input file left out (for example
# ``deleted`` in older Open-Assistant exports), so its writer leaves them out
# again; other formats ignore it.
OMITTED = "_omitted"
# Metadata keys holding a message's role as its file spelled it, when that is not the
# role's own name (``prompter`` in a flat file, ``USER`` in a CSV), so that the writer of
# the same format gives the file back as it was. One key per format family: a CSV's speaker
# spellings may need its own speaker table, so a flat file never writes them, nor the reverse.
ROLE_AS_WRITTEN = "_role"  # flat: the "role" key
SPEAKER_AS_WRITTEN = "_speaker"  # csv: the speaker column
# Open-Assistant's message rows (``trees.formats.oasst_rows``): a tree whose rows give every
# key, null when none, and the keys one row gave as null against its tree's layout.
WITH_NULLS = "_with_nulls"
NULLED = "_null"
# A tree read from the hub's Parquet: its emojis and labels are kept as the hub's structs of
# lists (a database may reorder a mapping's keys, never a list), and given as mappings to JSON.
HUB_STRUCTS = "_hub_structs"
# Keys only a format's own writer reads: never written as metadata.
BOOKKEEPING = frozenset({OMITTED, ROLE_AS_WRITTEN, SPEAKER_AS_WRITTEN, WITH_NULLS, NULLED, HUB_STRUCTS})


def visible_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata without the bookkeeping keys that only one format reads."""
    if not metadata or BOOKKEEPING.isdisjoint(metadata):
        return metadata
    return {key: value for key, value in metadata.items() if key not in BOOKKEEPING}


def spelled_role(message: MessageRecord, key: str) -> str:
    """The message's role as the file it came from spelled it under ``key``
    (``ROLE_AS_WRITTEN`` or ``SPEAKER_AS_WRITTEN``), else the role's own name."""
    metadata = message.metadata
    if metadata:
        spelling = metadata.get(key)
        if isinstance(spelling, str):
            return spelling
    return message.role


# Message fields every format reads and writes when it finds them, beside the
# id, parent, role and text; anything else a node carries goes to metadata.
# Each maps to the exact JSON types it accepts and how to name them.
OPTIONAL_FIELDS: dict[str, tuple[frozenset[type], str]] = {
    "lang": (frozenset({str}), "a string"),
    "synthetic": (frozenset({bool}), "true or false"),
    "model_name": (frozenset({str}), "a string"),
    "review_count": (frozenset({int}), "an integer"),
    "review_result": (frozenset({bool}), "true or false"),
    "rank": (frozenset({int}), "an integer"),
    "deleted": (frozenset({bool}), "true or false"),
}
# Defaults that writers leave out (a missing key reads back as the same value).
OPTIONAL_DEFAULTS: dict[str, Any] = {
    "lang": None,
    "synthetic": False,
    "model_name": None,
    "review_count": None,
    "review_result": None,
    "rank": None,
    "deleted": False,
}


def type_name(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def read_optional_fields(
    node: dict[str, Any], message: MessageRecord, tree: TreeRecord, where: Callable[[], str]
) -> None:
    """Copy the optional fields ``node`` carries onto ``message``, checking types.

    ``where()`` gives the node's path; it is only called to report a problem.
    """
    for key, (types, expected) in OPTIONAL_FIELDS.items():
        value = node.get(key)
        if value is None:
            continue
        if type(value) not in types:
            path = where()
            tree.add_issue(
                f"{path}.{key}" if path else key, f"must be {expected}, got {type_name(value)}", message.line
            )
            continue
        setattr(message, key, value)


def optional_fields_to_write(message: MessageRecord) -> dict[str, Any]:
    """The optional fields of ``message`` that differ from their defaults."""
    out = {}
    for key, default in OPTIONAL_DEFAULTS.items():
        value = getattr(message, key)
        if value != default:
            out[key] = value
    return out
