"""The shape of a tree (which node is whose child), for checking references.

Annotations name nodes by their external ids; validating a selected path or a
sibling comparison needs only the parent of each node, not the texts. Spans
quote a node's text, so their checks ask for the texts too (``texts``, empty
unless the shape was loaded with them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class TreeShape:
    root: str | None
    parent: dict[str, str | None] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    with_texts: bool = False

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[str, str | None, int, str] | tuple[str, str | None, int, str, str]]
    ) -> TreeShape:
        """Build from ``(external_id, parent external_id, position, role)`` rows, or
        ``(..., role, text)`` rows for a shape that knows the texts."""
        shape = cls(root=None)
        ordered = sorted(rows, key=lambda row: row[2])
        for external_id, parent_id, _position, role, *text in ordered:
            shape.parent[external_id] = parent_id
            shape.roles[external_id] = role
            if text:
                shape.texts[external_id] = text[0]
                shape.with_texts = True
            if parent_id is None:
                if shape.root is None:
                    shape.root = external_id
            else:
                shape.children.setdefault(parent_id, []).append(external_id)
        return shape

    def __contains__(self, node: object) -> bool:
        return node in self.parent

    def siblings_under(self, parent: str) -> list[str]:
        return self.children.get(parent, [])

    def preorder(self) -> list[str]:
        """Node ids, each before its children, siblings in order (no recursion)."""
        order: list[str] = []
        stack = [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(reversed(self.children.get(node, ())))
        return order

    def decision_points(self) -> list[str]:
        """Nodes with two or more children, in document order."""
        return [node for node in self.preorder() if len(self.children.get(node, ())) >= 2]

    def path_to(self, node: str) -> list[str]:
        """Node ids from the root down to ``node``."""
        path = []
        current: str | None = node
        while current is not None:
            path.append(current)
            current = self.parent.get(current)
        path.reverse()
        return path
