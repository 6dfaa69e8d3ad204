"""What a rubric judges in a tree: the conversation, each path, or each node.

A ``Subject`` is what the automatic checks see: the tree's metadata, the
*line* of messages that leads to the judged point, the messages in scope for
"any message" checks, and the judged message itself.

=============  ==========================  ==============================  ==================
target         one subject per             line (last, last_assistant)     any message
=============  ==========================  ==============================  ==================
conversation   tree                        the main line: from the root,   every message of
                                           always the first reply          the tree
path           root-to-leaf path           the path                        the path
node           assistant message           root to that message            the same
=============  ==========================  ==============================  ==================

For a linear conversation (the common case) the main line is simply the
whole conversation. Deleted messages and their replies are left out. Each
subject has a *unit key*: "" for a conversation, else the external id of the
judged node (for a path, its last node).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from trees.formats.records import MessageRecord, TreeRecord

TARGETS = ("conversation", "path", "node")


@dataclass(slots=True)
class Subject:
    tree_id: str  # the tree's external id
    tree_state: str | None
    metadata: dict[str, Any]
    line: list[MessageRecord]
    messages: list[MessageRecord]
    node: MessageRecord | None
    # Errors of Python checks, by check name, for the explanation.
    errors: list[str] = field(default_factory=list)

    def root(self, name: str) -> Any:
        """The value a JSON path starts from (see ``evaluation.paths``)."""
        if name == "metadata":
            return self.metadata
        if name == "node":
            node = self.node
            if node is None:
                return {}
            return {
                "id": node.external_id,
                "role": node.role,
                "text": node.text,
                "lang": node.lang,
                "model_name": node.model_name,
                "depth": node.depth,
                "metadata": node.metadata,
            }
        return {"id": self.tree_id, "state": self.tree_state}

    @property
    def model_name(self) -> str | None:
        """The model that wrote the judged reply: the judged node's, else the line's last assistant's."""
        if self.node is not None and self.node.model_name:
            return self.node.model_name
        for message in reversed(self.line):
            if message.role == "assistant" and message.model_name:
                return message.model_name
        return None


class TreeIndex:
    """A tree's messages arranged for walking: root, children by position, parents."""

    def __init__(self, record: TreeRecord):
        self.record = record
        self.by_id: dict[str, MessageRecord] = {}
        self.children: dict[str, list[MessageRecord]] = {}
        roots: list[MessageRecord] = []
        live = [message for message in record.messages if not message.deleted]
        for message in live:
            self.by_id[message.external_id] = message
        for message in live:
            parent = message.parent_id
            if parent is None:
                roots.append(message)
            elif parent in self.by_id:
                self.children.setdefault(parent, []).append(message)
        for siblings in self.children.values():
            if len(siblings) > 1:
                siblings.sort(key=_position)
        roots.sort(key=_position)
        self.root = roots[0] if roots else None

    def preorder(self) -> list[MessageRecord]:
        order: list[MessageRecord] = []
        stack = [self.root] if self.root is not None else []
        while stack:
            message = stack.pop()
            order.append(message)
            kids = self.children.get(message.external_id)
            if kids:
                stack.extend(reversed(kids))
        return order

    def main_line(self) -> list[MessageRecord]:
        line: list[MessageRecord] = []
        message = self.root
        while message is not None:
            line.append(message)
            kids = self.children.get(message.external_id)
            message = kids[0] if kids else None
        return line

    def line_to(self, node_id: str) -> list[MessageRecord]:
        """Messages from the root down to ``node_id`` (empty if it is not a live message)."""
        line: list[MessageRecord] = []
        message = self.by_id.get(node_id)
        while message is not None:
            line.append(message)
            message = self.by_id.get(message.parent_id) if message.parent_id is not None else None
        line.reverse()
        return line

    def leaves(self) -> list[MessageRecord]:
        return [message for message in self.preorder() if message.external_id not in self.children]


def _position(message: MessageRecord) -> int:
    return message.position


def subject_for(index: TreeIndex, target: str, unit: str = "") -> Subject | None:
    """The subject of ``unit`` (see the module docstring), or None when the tree has no such node."""
    record = index.record
    if target == "conversation":
        line = index.main_line()
        # A linear conversation: the line is everything.
        messages = line if len(line) == len(index.by_id) else index.preorder()
    else:
        line = index.line_to(unit)
        if not line:
            return None
        messages = line
    return Subject(
        tree_id=record.external_id or "",
        tree_state=record.state,
        metadata=record.metadata,
        line=line,
        messages=messages,
        node=line[-1] if line else None,
    )


def units_of(index: TreeIndex, target: str) -> list[str]:
    """The unit keys automatic checks judge in one tree."""
    if target == "conversation":
        return [""]
    if target == "path":
        return [leaf.external_id for leaf in index.leaves()]
    return [message.external_id for message in index.preorder() if message.role == "assistant"]


def subjects(record: TreeRecord, target: str) -> Iterator[tuple[str, Subject]]:
    """Every ``(unit key, subject)`` of one tree that automatic checks judge."""
    index = TreeIndex(record)
    if target == "conversation":
        subject = subject_for(index, target)
        if subject is not None:
            yield "", subject
        return
    for unit in units_of(index, target):
        subject = subject_for(index, target, unit)
        if subject is not None:
            yield unit, subject
