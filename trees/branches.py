"""Growing a tree's branches: which turns want replies, the conversation up to a turn, and
replies joining the tree as siblings under their turn.

Which turns (``nodes_to_grow``, pure): ``unanswered`` takes every user turn without an
assistant reply, ``leaves`` every user turn without any reply, ``nodes`` the turns named.
A run's own replies (``is_own``) do not count as answers, so that a run stopped part-way
picks its turns again and makes up only what is missing. A deleted turn, or one under a
deleted turn, is never grown: moderators took it out of the conversation.

Replies are added under the tree's row lock (``replies_add``), each with an id its maker
chose: an id already in the tree is skipped, so two runs adding the same reply add it once
(the ``(tree, external_id)`` unique key backs that up on databases without row locks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from trees.audit import audit_record
from trees.models import ConversationTree, Message
from trees.vocabulary import ASSISTANT, USER

UNANSWERED = "unanswered"
LEAVES = "leaves"
NODES = "nodes"
RULES = (UNANSWERED, LEAVES, NODES)


@dataclass(frozen=True)
class Node:
    """A message as choosing turns needs it (no text)."""

    pk: int
    external_id: str
    parent_id: int | None
    role: str
    deleted: bool


@dataclass(frozen=True)
class NewReply:
    """A reply to add: the id its maker chose (the same on every run), its text and marks."""

    external_id: str
    text: str
    role: str = ASSISTANT
    synthetic: bool = True
    model_name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class NodeGone(Exception):
    """The turn to reply to is no longer there (its tree was replaced, or it was deleted)."""


def _hidden(node: Node, by_pk: Mapping[int, Node]) -> bool:
    """Whether the node or one of its ancestors is deleted (iterative: trees may be deep)."""
    seen: Node | None = node
    while seen is not None:
        if seen.deleted:
            return True
        seen = by_pk.get(seen.parent_id) if seen.parent_id is not None else None
    return False


def nodes_to_grow(
    nodes: Sequence[Node],
    *,
    rule: str,
    node_ids: Iterable[str] = (),
    is_own: Callable[[Node, Node], bool] = lambda parent, child: False,
) -> tuple[list[Node], list[tuple[str, str]]]:
    """The turns of one tree that ``rule`` chooses, in the tree's order, and the named turns
    (rule ``nodes``) that cannot be grown, as ``(node id, why)``. ``is_own(parent, child)``
    tells the run's own replies, which do not count as answers."""
    by_pk = {node.pk: node for node in nodes}
    replies: dict[int, list[Node]] = {}
    for node in nodes:
        if node.parent_id is not None:
            replies.setdefault(node.parent_id, []).append(node)
    if rule == NODES:
        wanted = list(dict.fromkeys(node_ids))
        by_id = {node.external_id: node for node in nodes}
        chosen, problems = [], []
        for external_id in wanted:
            node = by_id.get(external_id)
            if node is None:
                problems.append((external_id, "no such node in this tree"))
            elif _hidden(node, by_pk):
                problems.append((external_id, "the node or one above it is deleted"))
            elif node.role != USER:
                problems.append((external_id, f"{node.role} turn: only user turns get model replies"))
            else:
                chosen.append(node)
        return chosen, problems
    if rule not in (UNANSWERED, LEAVES):
        raise ValueError(f"unknown rule {rule!r}: expected one of {', '.join(RULES)}")
    chosen = []
    for node in nodes:
        if node.role != USER or _hidden(node, by_pk):
            continue
        others = [
            child for child in replies.get(node.pk, ()) if not child.deleted and not is_own(node, child)
        ]
        answered = any(child.role == ASSISTANT for child in others) if rule == UNANSWERED else bool(others)
        if not answered:
            chosen.append(node)
    return chosen, []


def conversation_path(node: Node, by_pk: Mapping[int, Node]) -> list[Node]:
    """The turns from the root down to ``node``, in order."""
    path: list[Node] = []
    seen: Node | None = node
    while seen is not None:
        path.append(seen)
        seen = by_pk.get(seen.parent_id) if seen.parent_id is not None else None
    path.reverse()
    return path


def replies_add(*, tree_id: int, parent_id: int, replies: Sequence[NewReply]) -> list[Message]:
    """Add ``replies`` under the message ``parent_id`` of tree ``tree_id``, after its present
    children, skipping any whose id the tree has already; the ones added. One transaction with
    the tree's row locked, its ``updated_at`` moved on, and one audit entry when any is added.
    Raises ``NodeGone`` when the parent is missing or deleted."""
    with transaction.atomic():
        tree = (
            ConversationTree.objects.select_for_update(of=("self",))
            .select_related("dataset")
            .filter(pk=tree_id)
            .first()
        )
        parent = Message.objects.filter(pk=parent_id, tree_id=tree_id).first()
        if tree is None or parent is None:
            raise NodeGone("the node is no longer in its tree")
        if parent.deleted:
            raise NodeGone("the node was deleted")
        known = set(
            Message.objects.filter(tree_id=tree_id, external_id__in=[reply.external_id for reply in replies])
            .order_by()
            .values_list("external_id", flat=True)
        )
        fresh = [reply for reply in replies if reply.external_id not in known]
        if not fresh:
            return []
        last = Message.objects.filter(tree_id=tree_id, parent_id=parent_id).aggregate(last=Max("position"))
        position = 0 if last["last"] is None else last["last"] + 1
        now = timezone.now()
        added = []
        for offset, reply in enumerate(fresh):
            message = Message(
                tree_id=tree_id,
                parent_id=parent_id,
                external_id=reply.external_id,
                role=reply.role,
                text=reply.text,
                lang=parent.lang,
                depth=parent.depth + 1,
                position=position + offset,
                synthetic=reply.synthetic,
                model_name=reply.model_name,
                metadata=reply.metadata,
                created_at=now,
            )
            message.save(force_insert=True)
            added.append(message)
        ConversationTree.objects.filter(pk=tree_id).update(updated_at=now)
        audit_record(
            "replies.add",
            target=tree,
            scope=tree.dataset.name,
            details={
                "node": parent.external_id,
                "replies": [message.external_id for message in added],
                "models": sorted({reply.model_name for reply in fresh if reply.model_name}),
            },
        )
    return added
