"""Walk flat message lists as trees, iteratively.

Trees arrive from the database as flat rows with parent pointers. Building the
nested structure recursively would hit Python's recursion limit on a
10,000-deep chain, so every walk here keeps its own stack.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def children_by_parent(
    nodes: Sequence[T],
    *,
    key: Callable[[T], Hashable],
    parent_key: Callable[[T], Hashable | None],
    order_key: Callable[[T], int] | None = None,
) -> tuple[list[T], dict[Hashable, list[T]]]:
    """Roots and each node's children, siblings in ``order_key`` order."""
    children: dict[Hashable, list[T]] = defaultdict(list)
    known = {key(node) for node in nodes}
    roots: list[T] = []
    for node in nodes:
        parent = parent_key(node)
        if parent is None or parent not in known:
            roots.append(node)
        else:
            children[parent].append(node)
    if order_key is not None:
        roots.sort(key=order_key)
        for siblings in children.values():
            siblings.sort(key=order_key)
    return roots, children


def preorder(
    roots: Sequence[T],
    children: dict[Hashable, list[T]],
    *,
    key: Callable[[T], Hashable],
) -> Iterator[tuple[T, int]]:
    """Yield ``(node, depth)`` in document order: each node before its children."""
    stack: list[tuple[T, int]] = [(root, 0) for root in reversed(roots)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        kids = children.get(key(node))
        if kids:
            stack.extend((kid, depth + 1) for kid in reversed(kids))


OPEN = "open"
CLOSE = "close"


def nesting_events(
    roots: Sequence[T],
    children: dict[Hashable, list[T]],
    *,
    key: Callable[[T], Hashable],
) -> Iterator[tuple[str, T, int]]:
    """Yield ``(OPEN, node, depth)`` and ``(CLOSE, node, depth)`` like a SAX parser.

    Writers of nested formats (JSON ``children``/``replies``, nested HTML lists)
    turn these into text without recursing.
    """
    stack: list[tuple[str, T, int]] = [(OPEN, root, 0) for root in reversed(roots)]
    while stack:
        event, node, depth = stack.pop()
        yield event, node, depth
        if event == OPEN:
            stack.append((CLOSE, node, depth))
            kids = children.get(key(node))
            if kids:
                stack.extend((OPEN, kid, depth + 1) for kid in reversed(kids))
