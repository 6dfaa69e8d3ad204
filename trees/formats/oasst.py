"""Open-Assistant's message-tree export: JSONL (optionally gzipped) of
``{message_tree_id, tree_state, prompt: {message_id, text, role, ..., replies}}``.

Open-Assistant writes with ``exclude_none``: a key that is missing means
"none". Import then export gives back the same objects, so keys a file left
out that we would otherwise write (``deleted``, ``synthetic``, ``replies``,
a reply's ``parent_id``) are remembered in metadata under ``_omitted``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from trees import vocabulary
from trees.formats.bounds import DEFAULT_BOUNDS, TREE_NESTING, ReadBounds, tree_nesting
from trees.formats.jsonstream import encode, iter_documents
from trees.formats.nested import MISSING, NodeKeys, dump_nested_tree, read_nested_tree, read_node_id
from trees.formats.oasst_rows import as_mappings
from trees.formats.records import (
    BOOKKEEPING,
    HUB_STRUCTS,
    JSONL,
    OMITTED,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    type_name,
)

NAME = "oasst"
FILE = JSONL
KEYS = NodeKeys(
    id_key="message_id",
    children_key="replies",
    text_keys=("text",),
    role_keys=("role",),
    handled=frozenset({"parent_id"}),
)
ROLE_OUT = {vocabulary.USER: "prompter", vocabulary.ASSISTANT: "assistant", vocabulary.SYSTEM: "system"}
# Modelled keys with a value other than "none" when absent.
_DEFAULTED = ("deleted", "synthetic")


def read(
    stream: IO[bytes], *, max_depth: int = 10_000, bounds: ReadBounds = DEFAULT_BOUNDS, **_: Any
) -> Iterator[TreeRecord]:
    for line, document in iter_documents(
        stream, max_nesting=tree_nesting(max_depth, bounds), bounds=bounds, nesting_setting=TREE_NESTING
    ):
        yield parse_item(document, line)


def _check_node(
    node: dict[str, Any], message: MessageRecord, tree: TreeRecord, where: Callable[[], str]
) -> None:
    is_reply = message.parent_index >= 0
    parent_id = node.get("parent_id")
    if (
        node.get("deleted") is not None
        and node.get("synthetic") is not None
        and "replies" in node
        and (parent_id == message.parent_id if is_reply else parent_id is None)
    ):
        return  # the usual case: nothing to remember or report
    omitted = [key for key in _DEFAULTED if node.get(key) is None]
    if KEYS.children_key not in node:
        omitted.append(KEYS.children_key)
    if is_reply:
        if parent_id is None:
            omitted.append("parent_id")
        elif parent_id != message.parent_id:
            tree.add_issue(
                f"{where()}.parent_id",
                f'"{parent_id}" is not the id of the message it replies to ("{message.parent_id}")',
            )
    elif "parent_id" in node:
        # A root that names a parent (an exported subtree): keep it as it was.
        message.metadata["parent_id"] = parent_id
    if omitted:
        message.metadata[OMITTED] = omitted


def parse_item(document: Any, line: int) -> TreeRecord:
    tree = TreeRecord(external_id=None, line=line, root_path="prompt", children_key=KEYS.children_key)
    if isinstance(document, ImportIssue):
        tree.issues.append(document)
        return tree
    if not isinstance(document, dict):
        tree.add_issue("", f"item must be an object, got {type_name(document)}")
        return tree
    tree.external_id = read_node_id(
        document.get("message_tree_id", MISSING), "message tree", "", "message_tree_id", tree, None
    )
    state = document.get("tree_state")
    if state is None:
        tree.metadata[OMITTED] = ["tree_state"]
    elif state not in vocabulary.TREE_STATES:
        tree.add_issue(
            "tree_state",
            f'unknown tree state "{state}" (expected one of {", ".join(vocabulary.TREE_STATES)})',
        )
    else:
        tree.state = state
    tree.metadata.update(
        (key, value)
        for key, value in document.items()
        if key not in ("message_tree_id", "tree_state", "prompt")
    )
    prompt = document.get("prompt", MISSING)
    if prompt is MISSING or prompt is None:
        tree.add_issue("prompt", 'missing "prompt"')
    elif not isinstance(prompt, dict):
        tree.add_issue("prompt", f"must be an object, got {type_name(prompt)}")
    else:
        read_nested_tree(prompt, tree, KEYS, _check_node)
    return tree


def _node_body(message: MessageRecord) -> dict[str, Any]:
    metadata = message.metadata
    omitted = metadata.get(OMITTED, ()) if metadata else ()
    body: dict[str, Any] = {"message_id": message.external_id}
    if message.parent_id is not None and "parent_id" not in omitted:
        body["parent_id"] = message.parent_id
    body["text"] = message.text
    body["role"] = ROLE_OUT.get(message.role, message.role)
    # Open-Assistant's own order of keys, each left out when it is none.
    if message.lang is not None:
        body["lang"] = message.lang
    if message.review_count is not None:
        body["review_count"] = message.review_count
    if message.review_result is not None:
        body["review_result"] = message.review_result
    if "deleted" not in omitted:
        body["deleted"] = message.deleted
    if message.rank is not None:
        body["rank"] = message.rank
    if "synthetic" not in omitted:
        body["synthetic"] = message.synthetic
    if message.model_name is not None:
        body["model_name"] = message.model_name
    if metadata:
        for key, value in metadata.items():
            if key not in BOOKKEEPING:
                body[key] = value
    return body


def _omits_replies(message: MessageRecord) -> bool:
    omitted = message.metadata.get(OMITTED)
    return omitted is not None and KEYS.children_key in omitted


def dump_item(tree: TreeRecord) -> str:
    omitted = tree.metadata.get(OMITTED, ())
    head: dict[str, Any] = {"message_tree_id": tree.external_id}
    if "tree_state" not in omitted:
        head["tree_state"] = tree.state or vocabulary.IMPORTED_TREE_STATE
    head.update((key, value) for key, value in tree.metadata.items() if key not in BOOKKEEPING)
    text = encode(head)
    if not tree.messages:
        return text
    body = _node_body
    if tree.metadata.get(HUB_STRUCTS):
        # Rows read from the hub's Parquet: their emojis and labels as this export has them.
        body = lambda message: as_mappings(_node_body(message))  # noqa: E731
    nested = dump_nested_tree(tree, body, KEYS.children_key, omit_empty_children=_omits_replies)
    return f'{text[:-1]},"prompt":{nested}}}'


def write(trees: Iterable[TreeRecord], **_: Any) -> Iterator[str]:
    for tree in trees:
        yield dump_item(tree) + "\n"
