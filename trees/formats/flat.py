"""Flat message lists: one message per line, trees held together by ``parent_id``.

Each line is ``{id, parent_id, tree_id?, role, text, ...}``; any other key
goes to the message's metadata. A role spelled otherwise than its name
(``prompter``, ``User``) is read as the role and written back as it was spelled.
With ``tree_id`` a file is read one tree at a time (a tree's lines must be
consecutive); without it every message with a null ``parent_id`` starts a tree
named after it, and the whole file is read before trees are formed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Any

from trees import vocabulary
from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds
from trees.formats.jsonstream import encode, iter_documents
from trees.formats.nested import MISSING, read_node_id
from trees.formats.parents import children_of, link, report_unreachable
from trees.formats.records import (
    JSONL,
    OPTIONAL_FIELDS,
    ROLE_AS_WRITTEN,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    optional_fields_to_write,
    read_optional_fields,
    spelled_role,
    type_name,
    visible_metadata,
)
from trees.nesting import children_by_parent, preorder

NAME = "flat"
FILE = JSONL
_STRUCTURAL = {"id", "parent_id", "tree_id", "role", *OPTIONAL_FIELDS}

Line = tuple[int, Any]


def read(
    stream: IO[bytes], *, max_depth: int = 10_000, bounds: ReadBounds = DEFAULT_BOUNDS, **_: Any
) -> Iterator[TreeRecord]:
    documents = iter_documents(stream, max_nesting=bounds.max_json_depth, bounds=bounds)
    first = next(documents, None)
    if first is None:
        return
    _, value = first
    if isinstance(value, dict) and "tree_id" in value:
        yield from _read_grouped(first, documents)
    else:
        yield from _read_by_roots(first, documents)


def _error_item(line: int, issue: ImportIssue | None = None, path: str = "", message: str = "") -> TreeRecord:
    tree = TreeRecord(external_id=None, line=line)
    if issue is not None:
        tree.issues.append(issue)
    else:
        tree.add_issue(path, message)
    return tree


def _read_grouped(first: Line, documents: Iterator[Line]) -> Iterator[TreeRecord]:
    finished: dict[str, int] = {}  # tree id -> line where its block began
    group_id: str | None = None
    group: list[Line] = []
    for line, value in _chain(first, documents):
        if isinstance(value, ImportIssue):
            yield _error_item(line, value)
            continue
        if not isinstance(value, dict):
            yield _error_item(line, path="", message=f"message must be an object, got {type_name(value)}")
            continue
        raw_tree_id = value.get("tree_id", MISSING)
        if raw_tree_id is MISSING or raw_tree_id is None:
            yield _error_item(
                line,
                path="tree_id",
                message="missing tree id (the first line has one, so every line needs one)",
            )
            continue
        if (
            isinstance(raw_tree_id, bool)
            or not isinstance(raw_tree_id, str | int)
            or not str(raw_tree_id).strip()
        ):
            yield _error_item(
                line, path="tree_id", message=f"tree id must be a non-empty string, got {encode(raw_tree_id)}"
            )
            continue
        tree_id = str(raw_tree_id)
        if tree_id != group_id:
            if group:
                yield _build_tree(group_id, group, finished)
            group_id, group = tree_id, []
        group.append((line, value))
    if group:
        yield _build_tree(group_id, group, finished)


def _chain(first: Line, rest: Iterator[Line]) -> Iterator[Line]:
    yield first
    yield from rest


def _parse_message(line: int, value: dict[str, Any], tree: TreeRecord) -> MessageRecord | None:
    external_id = read_node_id(value.get("id", MISSING), "message", "", "id", tree, line)
    parent = value.get("parent_id")
    if parent is not None and (isinstance(parent, bool) or not isinstance(parent, str | int)):
        tree.add_issue("parent_id", f"must be a string or null, got {type_name(parent)}", line)
        parent = None
    role = ""
    if "role" not in value:
        tree.add_issue("", "missing role", line)
    elif not isinstance(value["role"], str):
        tree.add_issue("role", f"role must be a string, got {type_name(value['role'])}", line)
    else:
        role = vocabulary.normalize_role(value["role"]) or ""
        if not role:
            tree.add_issue(
                "role", f'unknown role "{value["role"]}" (expected {vocabulary.describe_roles()})', line
            )
    text_key = "text" if "text" in value else "content" if "content" in value else None
    text = ""
    if text_key is None:
        tree.add_issue("", 'missing text ("text")', line)
    elif not isinstance(value[text_key], str):
        tree.add_issue(text_key, f"text must be a string, got {type_name(value[text_key])}", line)
    else:
        text = value[text_key]
    message = MessageRecord(
        external_id=external_id or "",
        parent_id=None if parent is None else str(parent),
        role=role,
        text=text,
        # "content" read as the text is not kept twice; beside "text" it is just another key.
        metadata={key: item for key, item in value.items() if key not in _STRUCTURAL and key != text_key},
        line=line,
    )
    if role and value["role"] != role:
        message.metadata[ROLE_AS_WRITTEN] = value["role"]  # written back as it was: "prompter", "User"
    read_optional_fields(value, message, tree, lambda: "")
    return message if external_id is not None else None


def _without_duplicates(messages: list[MessageRecord], tree: TreeRecord) -> dict[str, MessageRecord]:
    """Messages by id, keeping the first of each id and reporting the others."""
    by_id: dict[str, MessageRecord] = {}
    for message in messages:
        earlier = by_id.get(message.external_id)
        if earlier is None:
            by_id[message.external_id] = message
        else:
            tree.add_issue(
                "id",
                f'duplicate message id "{message.external_id}" (first at line {earlier.line})',
                message.line,
            )
    return by_id


def _build_tree(tree_id: str | None, lines: list[Line], finished: dict[str, int]) -> TreeRecord:
    first_line = lines[0][0]
    tree = TreeRecord(external_id=tree_id, line=first_line)
    if tree_id is not None and tree_id in finished:
        tree.add_issue(
            "tree_id",
            f'tree "{tree_id}" continues here after other trees began '
            f"(its lines from line {finished[tree_id]} must be consecutive)",
        )
        return tree
    if tree_id is not None:
        finished[tree_id] = first_line
    parsed = [_parse_message(line, value, tree) for line, value in lines]
    by_id = _without_duplicates([message for message in parsed if message is not None], tree)
    roots = [message for message in by_id.values() if message.parent_id is None]
    if not roots:
        tree.add_issue("", f'tree "{tree_id}" has no root (a message whose parent_id is null)')
        return tree
    if len(roots) > 1:
        named = [f'"{root.external_id}" (line {root.line})' for root in roots]
        tree.add_issue(
            "parent_id",
            f'tree "{tree_id}" has several roots: {", ".join(named[:-1])} and {named[-1]}',
            roots[1].line,
        )
    link(tree, roots[0], children_of(by_id.values()))
    reached = {message.external_id for message in tree.messages}
    unreached = [m for m in by_id.values() if m.external_id not in reached and m.parent_id is not None]
    report_unreachable(tree, unreached, by_id)
    return tree


def _read_by_roots(first: Line, documents: Iterator[Line]) -> Iterator[TreeRecord]:
    collector = TreeRecord(external_id=None, line=first[0])
    messages: list[MessageRecord] = []
    # The problems of a message that is kept go with the tree that holds it,
    # so that tree is not imported without them.
    blamed: dict[str, list[ImportIssue]] = {}
    for line, value in _chain(first, documents):
        if isinstance(value, ImportIssue):
            collector.issues.append(value)
        elif not isinstance(value, dict):
            collector.add_issue("", f"message must be an object, got {type_name(value)}", line)
        else:
            known = len(collector.issues)
            message = _parse_message(line, value, collector)
            if message is not None:
                messages.append(message)
                if len(collector.issues) > known:
                    blamed.setdefault(message.external_id, []).extend(collector.issues[known:])
                    del collector.issues[known:]
    by_id = _without_duplicates(messages, collector)
    children = children_of(by_id.values())
    reached: set[str] = set()
    for root in (message for message in by_id.values() if message.parent_id is None):
        tree = TreeRecord(external_id=root.external_id, line=root.line)
        link(tree, root, children)
        reached.update(message.external_id for message in tree.messages)
        if blamed:
            for message in tree.messages:
                tree.issues.extend(blamed.pop(message.external_id, ()))
            tree.issues.sort(key=lambda issue: issue.line or 0)
        yield tree
    for issues in blamed.values():
        collector.issues.extend(issues)
    unreached = [message for message in by_id.values() if message.external_id not in reached]
    report_unreachable(collector, unreached, by_id)
    # These problems belong to no tree that could be formed: each is an item of its own.
    for issue in sorted(collector.issues, key=lambda issue: issue.line or 0):
        yield _error_item(issue.line or 0, issue)


def _line_body(tree: TreeRecord, message: MessageRecord) -> dict[str, Any]:
    body = {
        "id": message.external_id,
        "parent_id": message.parent_id,
        "tree_id": tree.external_id,
        "role": _role_out(message),
        "text": message.text,
    }
    body.update(optional_fields_to_write(message))
    body.update(visible_metadata(message.metadata))
    return body


def _role_out(message: MessageRecord) -> str:
    """The role as the flat file it came from spelled it, when that still reads as the role."""
    spelling = spelled_role(message, ROLE_AS_WRITTEN)
    return spelling if vocabulary.normalize_role(spelling) == message.role else message.role


def write(trees: Iterable[TreeRecord], **_: Any) -> Iterator[str]:
    """One line per message, each tree's messages together, parents first."""
    for tree in trees:
        roots, children = children_by_parent(
            tree.messages,
            key=lambda m: m.external_id,
            parent_key=lambda m: m.parent_id,
            order_key=lambda m: m.position,
        )
        lines = [
            encode(_line_body(tree, message))
            for message, _depth in preorder(roots, children, key=lambda m: m.external_id)
        ]
        yield "\n".join(lines) + "\n"
