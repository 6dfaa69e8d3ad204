"""Reading and writing trees nested as child lists (Potato's ``children``,
Open-Assistant's ``replies``), without recursion."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trees import vocabulary
from trees.formats.jsonstream import encode
from trees.formats.records import (
    OPTIONAL_FIELDS,
    MessageRecord,
    TreeRecord,
    read_optional_fields,
    type_name,
)

MISSING = object()
_STR_OR_NONE = frozenset({str, type(None)})
_BOOL_OR_NONE = frozenset({bool, type(None)})
_INT_OR_NONE = frozenset({int, type(None)})

# Format hook: look at a node after the common fields are read; the last
# argument gives the node's path when an issue needs it.
NodeHook = Callable[[dict[str, Any], MessageRecord, TreeRecord, Callable[[], str]], None]


@dataclass(frozen=True)
class NodeKeys:
    """How one nested format names a node's parts."""

    id_key: str
    children_key: str
    text_keys: tuple[str, ...]
    role_keys: tuple[str, ...]
    # Keys a format handles itself (kept out of metadata).
    handled: frozenset[str] = frozenset()


def read_node_id(
    raw: Any, what: str, path: str, id_key: str, tree: TreeRecord, line: int | None
) -> str | None:
    """An id as a string, or None after recording why it is unusable."""
    field_path = f"{path}.{id_key}" if path else id_key
    if raw is MISSING or raw is None:
        tree.add_issue(path or id_key, f"missing {what} id", line)
        return None
    if isinstance(raw, bool) or not isinstance(raw, str | int):
        tree.add_issue(field_path, f"{what} id must be a string, got {type_name(raw)}", line)
        return None
    value = str(raw)
    if not value.strip():
        tree.add_issue(field_path, f"empty {what} id", line)
        return None
    return value


def read_nested_tree(root: Any, tree: TreeRecord, keys: NodeKeys, hook: NodeHook | None = None) -> None:
    """Fill ``tree.messages`` in preorder from the nested ``root``, recording issues.

    This is the import's inner loop, written for speed: the common case (a
    well-formed node) takes the shortest path, and a node's location is only
    worked out when something about it needs reporting.
    """
    seen: dict[str, int] = {}
    id_key, children_key = keys.id_key, keys.children_key
    role_key, text_key = keys.role_keys[0], keys.text_keys[0]
    structural = frozenset({id_key, children_key, role_key, text_key, *keys.handled, *OPTIONAL_FIELDS})
    roles = vocabulary.ROLE_ALIASES
    messages = tree.messages
    append = messages.append

    def path_of(parent_index: int, slot: int) -> str:
        if parent_index < 0:
            return tree.root_path
        return f"{tree.location(parent_index)}.{children_key}[{slot}]"

    # (node, parent index, slot among siblings, depth)
    stack: list[tuple[Any, int, int, int]] = [(root, -1, 0, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, parent_index, slot, depth = pop()
        if type(node) is not dict:
            tree.add_issue(path_of(parent_index, slot), f"must be an object, got {type_name(node)}")
            continue
        external_id = node.get(id_key)
        role = node.get(role_key)
        role = roles.get(role) if type(role) is str else None
        text = node.get(text_key)
        children = node.get(children_key)
        get = node.get
        lang, model_name = get("lang"), get("model_name")
        synthetic, deleted = get("synthetic", False), get("deleted", False)
        review_count, review_result, rank = get("review_count"), get("review_result"), get("rank")
        if (
            type(external_id) is not str
            or not external_id.strip()
            or role is None
            or type(text) is not str
            or (children is not None and type(children) is not list)
            or type(lang) not in _STR_OR_NONE
            or type(model_name) not in _STR_OR_NONE
            or type(synthetic) not in _BOOL_OR_NONE
            or type(deleted) not in _BOOL_OR_NONE
            or type(review_count) not in _INT_OR_NONE
            or type(review_result) not in _BOOL_OR_NONE
            or type(rank) not in _INT_OR_NONE
        ):
            # The slow path: aliases, unusual values and errors.
            external_id, role, text, children, metadata = _read_unusual_node(
                node, keys, tree, lambda p=parent_index, s=slot: path_of(p, s)
            )
            message = MessageRecord(
                external_id or "",
                messages[parent_index].external_id if parent_index >= 0 else None,
                role,
                text,
                metadata=metadata,
                depth=depth,
                position=slot,
                parent_index=parent_index,
            )
            read_optional_fields(node, message, tree, lambda p=parent_index, s=slot: path_of(p, s))
        else:
            message = MessageRecord(
                external_id,
                messages[parent_index].external_id if parent_index >= 0 else None,
                role,
                text,
                lang,
                synthetic or False,
                model_name,
                review_count,
                review_result,
                rank,
                deleted or False,
                {key: value for key, value in node.items() if key not in structural},
                depth,
                slot,
                parent_index,
            )
        if hook is not None:
            hook(node, message, tree, lambda p=parent_index, s=slot: path_of(p, s))
        index = len(messages)
        if external_id:
            first = seen.setdefault(external_id, index)
            if first != index:
                tree.add_issue(
                    path_of(parent_index, slot),
                    f'duplicate node id "{external_id}" (first at {tree.location(first)})',
                )
        append(message)
        if children:
            for child_slot in range(len(children) - 1, -1, -1):
                push((children[child_slot], index, child_slot, depth + 1))


def _read_unusual_node(
    node: dict[str, Any], keys: NodeKeys, tree: TreeRecord, where: Callable[[], str]
) -> tuple[str | None, str, str, list[Any], dict[str, Any]]:
    """Read a node that uses key aliases, carries extra keys or has errors.

    ``where()`` gives the node's path, only when there is something to report:
    working it out costs O(depth), and a whole file may use the aliases.
    """
    raw_id = node.get(keys.id_key, MISSING)
    if type(raw_id) is str and raw_id.strip():
        external_id: str | None = raw_id
    elif type(raw_id) is int:
        external_id = str(raw_id)
    else:
        external_id = read_node_id(raw_id, "node", where(), keys.id_key, tree, None)

    role_key = next((key for key in keys.role_keys if key in node), None)
    role = ""
    if role_key is None:
        tree.add_issue(where(), "missing role")
    elif not isinstance(node[role_key], str):
        tree.add_issue(f"{where()}.{role_key}", f"role must be a string, got {type_name(node[role_key])}")
    else:
        role = vocabulary.normalize_role(node[role_key]) or ""
        if not role:
            tree.add_issue(
                f"{where()}.{role_key}",
                f'unknown role "{node[role_key]}" (expected {vocabulary.describe_roles()})',
            )

    text_key = next((key for key in keys.text_keys if key in node), None)
    text = ""
    if text_key is None:
        names = " or ".join(f'"{key}"' for key in keys.text_keys)
        tree.add_issue(where(), f"missing text ({names})")
    elif not isinstance(node[text_key], str):
        tree.add_issue(f"{where()}.{text_key}", f"text must be a string, got {type_name(node[text_key])}")
    else:
        text = node[text_key]

    children = node.get(keys.children_key)
    if children is None:
        children = []
    elif not isinstance(children, list):
        tree.add_issue(f"{where()}.{keys.children_key}", f"must be a list, got {type_name(children)}")
        children = []

    structural = {keys.id_key, keys.children_key, *keys.handled, *OPTIONAL_FIELDS, role_key, text_key}
    metadata = {key: value for key, value in node.items() if key not in structural}
    return external_id, role, text, children, metadata


NodeBody = Callable[[MessageRecord], dict[str, Any]]


def dump_nested_tree(
    tree: TreeRecord,
    body: NodeBody,
    children_key: str,
    *,
    omit_empty_children: Callable[[MessageRecord], bool] | None = None,
) -> str:
    """The JSON text of ``tree``'s messages nested under ``children_key``.

    Written from an explicit stack, so depth costs no recursion; ``body``
    gives the keys of one node apart from its children.
    ``omit_empty_children(message)`` says whether a leaf gets no children key
    at all (for files that left it out).
    """
    root = None
    children: dict[str, list[MessageRecord]] = {}
    for message in tree.messages:
        if message.parent_id is None:
            root = root or message
        else:
            children.setdefault(message.parent_id, []).append(message)
    if root is None:
        return "null"
    for siblings in children.values():
        if len(siblings) > 1:
            siblings.sort(key=_position)
    opening = f'"{children_key}":['
    parts: list[str] = []
    append = parts.append
    # Messages still to write, and the punctuation between them.
    stack: list[MessageRecord | str] = [root]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if type(item) is str:
            append(item)
            continue
        head = encode(body(item))
        separator = "," if len(head) > 2 else ""
        kids = children.get(item.external_id)
        if kids:
            append(f"{head[:-1]}{separator}{opening}")
            push("]}")
            for index in range(len(kids) - 1, 0, -1):
                push(kids[index])
                push(",")
            push(kids[0])
        elif omit_empty_children is not None and omit_empty_children(item):
            append(head)
        else:
            append(f"{head[:-1]}{separator}{opening}]}}")
    return "".join(parts)


def _position(message: MessageRecord) -> int:
    return message.position
