"""Open-Assistant's message-level data: one message a row, as the oasst1 and oasst2
releases publish it — JSONL (``*.messages.jsonl.gz``) or the Hugging Face hub's Parquet.

Rows may come in any order: the whole file is read, then each tree is assembled from the
``parent_id`` links, one tree per ``message_tree_id`` (a row without one belongs to its
root's tree, named after the root, as in the backend's own message exports). Siblings
keep the order of their rows; a tree's ``tree_state`` (its root row's) is the tree's state.
What the rows hold beyond Branchpoint's model goes to each message's metadata
(``trees.formats.oasst_rows``), so an import followed by an export gives the same rows,
and the oasst tree export (``--format oasst``) converts to these rows and back.

Problems name the line (JSONL) or row (Parquet, counted from 1) and the message: a
missing parent, a cycle of parents, a tree with two roots, a row whose
``message_tree_id`` is not its parent's, a message id given twice.

The backend's seed data (``backend/test_data``: ``user_message_id``,
``parent_message_id``, ``task_message_id``) is read as such rows too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import IO, Any

from trees.formats import oasst_parquet
from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds
from trees.formats.jsonstream import encode, iter_documents
from trees.formats.oasst_rows import Row, as_mappings, read_row, row_of, settle_layout
from trees.formats.parents import children_of, link, report_unreachable
from trees.formats.records import (
    HUB_STRUCTS,
    JSONL,
    FormatError,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    type_name,
)
from trees.nesting import children_by_parent, preorder

NAME = "oasst-messages"
FILE = JSONL
JSONL_LAYOUT, PARQUET_LAYOUT = "jsonl", "parquet"
LAYOUTS = (JSONL_LAYOUT, PARQUET_LAYOUT)


def layout_of(path: str) -> str | None:
    """The layout a file name says (``.parquet``, ``.jsonl``, ``.jsonl.gz``, ``.json``), or None."""
    name = path.lower().removesuffix(".gz")
    if name.endswith(".parquet"):
        return PARQUET_LAYOUT
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return JSONL_LAYOUT
    return None


def read(
    stream: IO[bytes],
    *,
    layout: str | None = None,
    bounds: ReadBounds = DEFAULT_BOUNDS,
    **_: Any,
) -> Iterator[TreeRecord]:
    """The trees of the rows in ``stream``: Parquet when ``layout`` says so or the file
    starts as Parquet does, JSONL (or a JSON array) otherwise.

    Raises ``FormatError`` when the file cannot be read on (see ``iter_documents`` and
    ``oasst_parquet.iter_rows``), or is Parquet and pyarrow is missing.
    """
    if layout is None:
        peek = getattr(stream, "peek", None)
        head = peek(len(oasst_parquet.MAGIC)) if peek is not None else b""
        layout = PARQUET_LAYOUT if head[: len(oasst_parquet.MAGIC)] == oasst_parquet.MAGIC else JSONL_LAYOUT
    if layout == PARQUET_LAYOUT:
        for tree in _assemble(_parquet_rows(stream, bounds), "row"):
            if tree.external_id is not None:
                tree.metadata[HUB_STRUCTS] = True
            yield _counted_in_rows(tree)
    else:
        yield from _assemble(iter_documents(stream, bounds=bounds), "line")


def _parquet_rows(stream: IO[bytes], bounds: ReadBounds) -> Iterator[tuple[int, Any]]:
    try:
        yield from oasst_parquet.iter_rows(stream, bounds)
    except oasst_parquet.ParquetUnavailable as error:
        raise FormatError(ImportIssue(None, "", str(error))) from None


def _counted_in_rows(tree: TreeRecord) -> TreeRecord:
    tree.issues = [dataclasses.replace(issue, unit="row") for issue in tree.issues]
    return tree


def _error_item(issue: ImportIssue) -> TreeRecord:
    tree = TreeRecord(external_id=None, line=issue.line)
    tree.issues.append(issue)
    return tree


def _assemble(documents: Iterable[tuple[int, Any]], unit: str) -> Iterator[TreeRecord]:
    """Trees from the rows, in the order of their first row; then the problems that belong
    to no tree, each an item of its own."""
    named: dict[str, list[Row]] = {}
    unnamed: list[Row] = []
    strays: list[ImportIssue] = []
    for line, value in documents:
        if isinstance(value, ImportIssue):
            strays.append(value)
        elif not isinstance(value, dict):
            strays.append(ImportIssue(line, "", f"a message row must be an object, got {type_name(value)}"))
        else:
            row = read_row(value, line)
            if row.tree_id is not None:
                named.setdefault(row.tree_id, []).append(row)
            else:
                unnamed.append(row)
    # Where each message id is, for a parent looked for in the wrong tree.
    trees_of: dict[str, str] = {}
    for key, group in named.items():
        for row in group:
            trees_of.setdefault(row.message.external_id, key)
    trees = [_named_tree(key, group, trees_of, unit) for key, group in named.items()]
    if unnamed:
        trees.extend(_unnamed_trees(unnamed, strays, unit))
    named.clear()
    unnamed.clear()
    trees_of.clear()
    # Handed out last first off a reversed list, so that a tree stored is a tree forgotten.
    trees.sort(key=lambda tree: tree.line or 0, reverse=True)
    while trees:
        yield trees.pop()
    for issue in sorted(strays, key=lambda issue: issue.line or 0):
        yield _error_item(issue)


def _unique(rows: list[Row], unit: str) -> dict[str, Row]:
    """The rows by message id, the first of each; a later one is refused, saying where the first is."""
    by_id: dict[str, Row] = {}
    for row in rows:
        message_id = row.message.external_id
        if not message_id:
            continue  # its problem is on it already
        first = by_id.setdefault(message_id, row)
        if first is not row:
            where = f"{unit} {first.message.line}"
            row.add_issue("message_id", f'duplicate message id "{message_id}" (first at {where})')
    return by_id


def _named_tree(key: str, rows: list[Row], trees_of: dict[str, str], unit: str) -> TreeRecord:
    """The tree of the rows naming ``key`` as their ``message_tree_id``."""
    tree = TreeRecord(external_id=key, line=rows[0].message.line)
    by_id = _unique(rows, unit)
    for row in rows:
        tree.issues.extend(row.issues)
    roots = [row for row in by_id.values() if row.message.parent_id is None]
    if not roots:
        tree.add_issue("parent_id", f'tree "{key}" has no root (a message whose parent_id is null)')
    else:
        if len(roots) > 1:
            named = [f'"{root.message.external_id}" ({unit} {root.message.line})' for root in roots]
            tree.add_issue(
                "parent_id",
                f'tree "{key}" has {len(roots)} roots: {", ".join(named[:-1])} and {named[-1]}',
                roots[1].message.line,
            )
        link(tree, roots[0].message, children_of(row.message for row in by_id.values()))
        tree.state = roots[0].tree_state

    def missing(message: MessageRecord) -> tuple[str, str]:
        elsewhere = trees_of.get(message.parent_id or "")
        if elsewhere is not None and elsewhere != key:
            return "message_tree_id", (
                f'message "{message.external_id}" is in tree "{key}", '
                f'but its parent "{message.parent_id}" is in tree "{elsewhere}"'
            )
        return _unknown_parent(message)

    if len(tree.messages) < len(by_id):
        reached = {message.external_id for message in tree.messages}
        unreached = [
            row.message
            for message_id, row in by_id.items()
            if message_id not in reached and row.message.parent_id is not None
        ]
        messages = {message_id: row.message for message_id, row in by_id.items()}
        report_unreachable(tree, unreached, messages, missing=missing)
    tree.issues.sort(key=lambda issue: issue.line or 0)
    if tree.ok:
        settle_layout(tree, by_id.values())
    return tree


def _unnamed_trees(rows: list[Row], strays: list[ImportIssue], unit: str) -> list[TreeRecord]:
    """Rows that name no tree (the backend's message exports, its seed data): each root's
    tree, named after the root; what cannot be reached from a root goes to ``strays``."""
    by_id = _unique(rows, unit)
    children = children_of(row.message for row in by_id.values())
    trees = []
    placed: set[str] = set()
    for root in (row for row in by_id.values() if row.message.parent_id is None):
        tree = TreeRecord(external_id=root.message.external_id, line=root.message.line)
        link(tree, root.message, children)
        tree.state = root.tree_state
        members = [by_id[message.external_id] for message in tree.messages]
        for row in members:
            tree.issues.extend(row.issues)
        placed.update(message.external_id for message in tree.messages)
        tree.issues.sort(key=lambda issue: issue.line or 0)
        if tree.ok:
            settle_layout(tree, members)
        trees.append(tree)
    for row in rows:
        message_id = row.message.external_id
        if by_id.get(message_id) is not row or message_id not in placed:
            strays.extend(row.issues)
    collector = TreeRecord(external_id=None)
    unreached = [row.message for row in by_id.values() if row.message.external_id not in placed]
    if unreached:
        messages = {message_id: row.message for message_id, row in by_id.items()}
        report_unreachable(collector, unreached, messages, missing=_unknown_parent)
    strays.extend(collector.issues)
    return trees


def _unknown_parent(message: MessageRecord) -> tuple[str, str]:
    return "parent_id", f'unknown parent "{message.parent_id}" of message "{message.external_id}"'


# -- writing ------------------------------------------------------------------------------------


def rows_of(tree: TreeRecord) -> Iterator[dict[str, Any]]:
    """The tree's rows, parents first, siblings in order."""
    roots, children = children_by_parent(
        tree.messages,
        key=lambda m: m.external_id,
        parent_key=lambda m: m.parent_id,
        order_key=lambda m: m.position,
    )
    for message, _depth in preorder(roots, children, key=lambda m: m.external_id):
        yield row_of(tree, message)


def write(trees: Iterable[TreeRecord], *, layout: str = JSONL_LAYOUT, **_: Any) -> Iterator[str | bytes]:
    """JSONL, a tree's rows a piece; or with ``layout="parquet"``, the bytes of a Parquet
    file in the hub's schema (``oasst_parquet.write_rows``)."""
    if layout == PARQUET_LAYOUT:
        yield from oasst_parquet.write_rows(row for tree in trees for row in rows_of(tree))
        return
    for tree in trees:
        if tree.metadata.get(HUB_STRUCTS):
            lines = [encode(as_mappings(row)) for row in rows_of(tree)]
        else:
            lines = [encode(row) for row in rows_of(tree)]
        if lines:
            yield "\n".join(lines) + "\n"
