"""Trees from parent links: formats that list messages one by one, each naming its
parent (``flat``, ``oasst-messages``), link each root's descendants in preorder and say
why the others cannot be reached. Iterative throughout: a chain may be thousands long."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from trees.formats.records import MessageRecord, TreeRecord


def children_of(messages: Iterable[MessageRecord]) -> dict[str, list[MessageRecord]]:
    """Each parent's replies, in the order given (which becomes their position)."""
    children: dict[str, list[MessageRecord]] = {}
    for message in messages:
        if message.parent_id is not None:
            children.setdefault(message.parent_id, []).append(message)
    return children


def link(tree: TreeRecord, root: MessageRecord, children: dict[str, list[MessageRecord]]) -> None:
    """Put the messages reachable from ``root`` into ``tree``, in preorder."""
    stack: list[tuple[MessageRecord, int, int, int]] = [(root, -1, 0, 0)]
    while stack:
        message, parent_index, position, depth = stack.pop()
        message.parent_index, message.position, message.depth = parent_index, position, depth
        index = len(tree.messages)
        tree.messages.append(message)
        kids = children.get(message.external_id, ())
        for slot in range(len(kids) - 1, -1, -1):
            stack.append((kids[slot], index, slot, depth + 1))


# What to say of a message whose parent is not there: the path and the text.
Missing = Callable[[MessageRecord], tuple[str, str]]


def unknown_parent(message: MessageRecord) -> tuple[str, str]:
    return "parent_id", f'unknown parent "{message.parent_id}"'


def report_unreachable(
    tree: TreeRecord,
    unreached: list[MessageRecord],
    by_id: dict[str, MessageRecord],
    *,
    missing: Missing = unknown_parent,
) -> None:
    """Say why each message cannot be reached from a root: a parent that is
    not there (as ``missing`` says it), or a cycle of parents (each cycle reported once).

    Each walk up the parents stops where an earlier walk went, so a long chain
    below a missing parent costs O(n), not O(n²) walks of O(n) each.
    """
    order = {message.external_id: index for index, message in enumerate(unreached)}
    found: list[tuple[int, str, str, int | None]] = []  # (the message it is told with, path, text, line)
    settled: set[str] = set()
    for start, message in enumerate(unreached):
        walk: dict[str, int] = {}  # the ids of this walk, in order
        current = message
        while current.external_id not in settled and current.external_id not in walk:
            walk[current.external_id] = len(walk)
            if current.parent_id is None:
                break  # another root: reported as one of several
            parent = by_id.get(current.parent_id)
            if parent is None:
                index = order.get(current.external_id, start)
                found.append((index, *missing(current), current.line))
                break
            current = parent
        else:
            if current.external_id in walk:
                cycle = list(walk)[walk[current.external_id] :]
                route = " → ".join(f'"{node}"' for node in [*cycle, cycle[0]])
                found.append((start, "parent_id", f"cycle of parents: {route}", current.line))
        settled.update(walk)
    found.sort(key=lambda item: item[0])
    for _, path, text, line in found:
        tree.add_issue(path, text, line)
