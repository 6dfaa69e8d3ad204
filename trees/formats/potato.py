"""Potato's conversation-tree items: ``{id, tree: {id, role, content, children}}``.

Read from a JSON array, a single object or JSONL; ``id_key`` and ``tree_key``
follow Potato's ``item_properties``. Nodes may say ``text`` for ``content`` and
``speaker`` for ``role``. Keys we do not model stay in metadata and are
written back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import IO, Any

from trees.formats.bounds import DEFAULT_BOUNDS, TREE_NESTING, ReadBounds, tree_nesting
from trees.formats.jsonstream import encode, iter_documents
from trees.formats.nested import MISSING, NodeKeys, dump_nested_tree, read_nested_tree, read_node_id
from trees.formats.records import (
    JSONL,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    optional_fields_to_write,
    type_name,
    visible_metadata,
)

NAME = "potato"
FILE = JSONL
KEYS = NodeKeys(
    id_key="id", children_key="children", text_keys=("content", "text"), role_keys=("role", "speaker")
)


def read(
    stream: IO[bytes],
    *,
    id_key: str = "id",
    tree_key: str = "tree",
    max_depth: int = 10_000,
    bounds: ReadBounds = DEFAULT_BOUNDS,
    **_: Any,
) -> Iterator[TreeRecord]:
    # Each node is two JSON levels deep (the node object and its children list).
    for line, document in iter_documents(
        stream, max_nesting=tree_nesting(max_depth, bounds), bounds=bounds, nesting_setting=TREE_NESTING
    ):
        yield parse_item(document, line, id_key=id_key, tree_key=tree_key)


def parse_item(document: Any, line: int, *, id_key: str = "id", tree_key: str = "tree") -> TreeRecord:
    tree = TreeRecord(external_id=None, line=line, root_path=tree_key, children_key=KEYS.children_key)
    if isinstance(document, ImportIssue):
        tree.issues.append(document)
        return tree
    if not isinstance(document, dict):
        tree.add_issue("", f"item must be an object, got {type_name(document)}")
        return tree
    tree.external_id = read_node_id(document.get(id_key, MISSING), "item", "", id_key, tree, None)
    tree.metadata = {key: value for key, value in document.items() if key not in (id_key, tree_key)}
    root = document.get(tree_key, MISSING)
    if root is MISSING:
        tree.add_issue(tree_key, f'missing "{tree_key}"')
    elif not isinstance(root, dict):
        tree.add_issue(tree_key, f"must be an object, got {type_name(root)}")
    else:
        read_nested_tree(root, tree, KEYS)
    return tree


def _node_body(message: MessageRecord) -> dict[str, Any]:
    body = {"id": message.external_id, "role": message.role, "content": message.text}
    body.update(optional_fields_to_write(message))
    body.update(visible_metadata(message.metadata))
    return body


def dump_item(tree: TreeRecord, *, id_key: str = "id", tree_key: str = "tree") -> str:
    head = {id_key: tree.external_id, **visible_metadata(tree.metadata)}
    nested = dump_nested_tree(tree, _node_body, KEYS.children_key)
    text = encode(head)
    # The key is the caller's (an export option): written as JSON, whatever it holds.
    return f"{text[:-1]},{encode(tree_key)}:{nested}}}"


def write(
    trees: Iterable[TreeRecord],
    *,
    id_key: str = "id",
    tree_key: str = "tree",
    layout: str = "jsonl",
    **_: Any,
) -> Iterator[str]:
    """Yield the file in pieces: JSONL by default, or a JSON array."""
    if layout == "array":
        yield "["
        first = True
        for tree in trees:
            yield ("\n" if first else ",\n") + dump_item(tree, id_key=id_key, tree_key=tree_key)
            first = False
        yield "\n]\n"
        return
    for tree in trees:
        yield dump_item(tree, id_key=id_key, tree_key=tree_key) + "\n"
