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
from trees.formats.oasst_rows import Row, read_row, row_of, settle_layout
from trees.formats.parents import children_of, link, report_unreachable
from trees.formats.records import JSONL, FormatError, ImportIssue, MessageRecord, TreeRecord, type_name
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
        trees = _assemble(_parquet_rows(stream, bounds), "row")
        yield from (_counted_in_rows(tree) for tree in trees)
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
    rows: list[Row] = []
    strays: list[ImportIssue] = []  # problems that belong to no tree
    for line, value in documents:
        if isinstance(value, ImportIssue):
            strays.append(value)
        elif not isinstance(value, dict):
            strays.append(ImportIssue(line, "", f"a message row must be an object, got {type_name(value)}"))
        else:
            rows.append(read_row(value, line))
    by_id = _unique(rows, unit)
    resolved = _trees_of(by_id)
    _check_tree_ids(by_id, resolved)
    groups: dict[str, list[Row]] = {}
    for row in rows:
        message_id = row.message.external_id
        key = resolved.get(message_id) if by_id.get(message_id) is row else None
        key = key or row.tree_id
        if key is None:
            strays.extend(row.issues)
            continue
        groups.setdefault(key, []).append(row)
    messages = {key: row.message for key, row in by_id.items()}
    collector = TreeRecord(external_id=None)
    unplaced = [row.message for row in by_id.values() if resolved[row.message.external_id] is None]
    unplaced = [message for message in unplaced if by_id[message.external_id].tree_id is None]
    if unplaced:
        report_unreachable(collector, unplaced, messages, name_message=True)
    for key, group in groups.items():
        yield _tree(key, group, by_id, resolved, messages, unit)
    for issue in sorted([*strays, *collector.issues], key=lambda issue: issue.line or 0):
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


def _trees_of(by_id: dict[str, Row]) -> dict[str, str | None]:
    """Each message's tree: its root's ``message_tree_id`` (or the root's id when it names
    none); None when no root can be reached (a missing parent, a cycle).

    Each walk up the parents stops where an earlier walk went: O(n) for the whole file.
    """
    resolved: dict[str, str | None] = {}
    for start in by_id.values():
        walk: list[str] = []
        on_walk: set[str] = set()
        current = start
        while True:
            message_id = current.message.external_id
            if message_id in resolved:
                found = resolved[message_id]
                break
            if message_id in on_walk:
                found = None  # a cycle
                break
            walk.append(message_id)
            on_walk.add(message_id)
            parent_id = current.message.parent_id
            if parent_id is None:
                found = current.tree_id or message_id
                break
            parent = by_id.get(parent_id)
            if parent is None:
                found = None
                break
            current = parent
        for message_id in walk:
            resolved[message_id] = found
    return resolved


def _check_tree_ids(by_id: dict[str, Row], resolved: dict[str, str | None]) -> None:
    """A row that names a tree must name its parent's (each mislabelled subtree is told once,
    at its top)."""
    for row in by_id.values():
        parent_id = row.message.parent_id
        if row.tree_id is None or parent_id is None or parent_id not in by_id:
            continue
        parent = by_id[parent_id]
        theirs = parent.tree_id or resolved.get(parent_id)
        if theirs is not None and theirs != row.tree_id:
            row.add_issue(
                "message_tree_id",
                f'message "{row.message.external_id}" is in tree "{row.tree_id}", '
                f'but its parent "{parent_id}" is in tree "{theirs}"',
            )


def _tree(
    key: str,
    group: list[Row],
    by_id: dict[str, Row],
    resolved: dict[str, str | None],
    messages: dict[str, MessageRecord],
    unit: str,
) -> TreeRecord:
    tree = TreeRecord(external_id=key, line=group[0].message.line)
    for row in group:
        tree.issues.extend(row.issues)
    members = [row for row in group if by_id.get(row.message.external_id) is row]
    roots = [row for row in members if row.message.parent_id is None]
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
        link(tree, roots[0].message, children_of(row.message for row in members))
        tree.state = roots[0].tree_state
    unreached = [row.message for row in members if resolved[row.message.external_id] is None]
    if unreached:
        report_unreachable(tree, unreached, messages, name_message=True)
    tree.issues.sort(key=lambda issue: issue.line or 0)
    if tree.ok:
        settle_layout(tree, members)
    return tree


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
        lines = [encode(row) for row in rows_of(tree)]
        if lines:
            yield "\n".join(lines) + "\n"
