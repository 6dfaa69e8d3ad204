"""Moving collected trees through their states: the database side of ``lifecycle``.

Every change of state goes through ``tree_enter``, under the tree's lock
(``locks.tree_lock``), and leaves an audit entry ``tree.<event>``;
``advance.tree_advance`` takes the moves a tree's facts imply. A tree that stops
being worked on sends ``tree_finished``, so that what waits for a free slot (the
ranking backlog) can take it without this module knowing it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

from django.db import connection
from django.dispatch import Signal
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.locks import LockedTree
from annotation.collection.models import CollectedTree, Task
from annotation.projects.workflow_config import WorkflowConfig
from trees.audit import Target, audit_record
from trees.models import ConversationTree, Message
from trees.vocabulary import ASSISTANT, GROWING, USER

logger = logging.getLogger(__name__)
# Sent with project_id, now, tree_id, external_id and state (the one it entered), under the
# tree's lock, when a tree leaves the active states.
tree_finished = Signal()
RANK_TYPES = (Task.Type.RANK_ASSISTANT_REPLIES, Task.Type.RANK_PROMPTER_REPLIES)


def ranked_roles(config: WorkflowConfig) -> frozenset[str]:
    """The roles of replies that are ranked among their siblings."""
    return frozenset({ASSISTANT, USER}) if config.rank_prompter_replies else frozenset({ASSISTANT})


def ranking_groups(rows: list[tuple], config: WorkflowConfig) -> dict[int, list[int]]:
    """Parents with two or more accepted, live replies of a ranked role: their replies' keys.

    ``rows`` are ``(pk, parent_id, role, review_result, deleted)``.
    """
    roles = ranked_roles(config)
    replies: dict[int, list[int]] = defaultdict(list)
    for pk, parent_id, role, verdict, deleted in rows:
        if parent_id is not None and verdict is True and not deleted and role in roles:
            replies[parent_id].append(pk)
    return {parent: keys for parent, keys in replies.items() if len(keys) >= 2}


def tree_facts(tree: LockedTree, config: WorkflowConfig) -> lifecycle.TreeFacts:
    """What decides the tree's automatic moves: one query over its messages, each with the
    rankings done of its replies (plain SQL: it runs on every decided review and ranking)."""
    quote = connection.ops.quote_name
    types = ", ".join(["%s"] * len(RANK_TYPES))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.parent_id, m.role, m.review_result, m.deleted,"
            f" (SELECT COUNT(*) FROM {quote(Task._meta.db_table)} k WHERE k.message_id = m.id"
            f" AND k.type IN ({types}) AND k.status = %s)"
            f" FROM {quote(Message._meta.db_table)} m WHERE m.tree_id = %s",
            [*RANK_TYPES, Task.Status.DONE, tree.pk],
        )
        rows = [
            (pk, parent_id, role, None if verdict is None else bool(verdict), bool(deleted), ranked)
            for pk, parent_id, role, verdict, deleted, ranked in cursor.fetchall()
        ]
    root_verdict, messages, accepted, awaiting = None, 0, 0, 0
    for _, parent_id, _, verdict, deleted, _ in rows:
        if parent_id is None:
            root_verdict = verdict
        if deleted:
            continue
        messages += 1
        if verdict is True:
            accepted += 1
        elif verdict is None:
            awaiting += 1
    groups = ranking_groups([row[:5] for row in rows], config)
    done = {row[0]: row[5] for row in rows}
    return lifecycle.TreeFacts(
        state=tree.state,
        goal_tree_size=tree.goal_tree_size,
        root_verdict=root_verdict,
        messages=messages,
        accepted=accepted,
        awaiting_review=awaiting,
        rankings_done=tuple(done[parent] for parent in sorted(groups)),
        required_rankings=config.num_required_rankings,
    )


def tree_enter(tree: LockedTree, event: str, now: datetime | None = None) -> str:
    """Apply ``event`` to the locked ``tree``; returns its new state (IllegalTransition if it may not)."""
    now = now or timezone.now()
    state = lifecycle.transition(tree.state, event)
    ConversationTree.objects.filter(pk=tree.pk).update(state=state, updated_at=now)
    if state == GROWING and event == lifecycle.LOTTERY_WON:
        CollectedTree.objects.filter(pk=tree.pk, won_prompt_lottery_at__isnull=True).update(
            won_prompt_lottery_at=now
        )
    logger.info("tree %s: %s → %s (%s)", tree.external_id, tree.state, state, event)
    audit_record(
        f"tree.{event}",
        target=Target(ConversationTree, tree.pk, tree.external_id),
        scope=tree.project_name,
        details={"from": tree.state, "to": state},
    )
    was_active = lifecycle.is_active(tree.state)
    tree.state = state
    if was_active and not lifecycle.is_active(state):
        # A slot for ranking may have opened: the backlog (``backlog``) listens.
        tree_finished.send(
            sender=CollectedTree,
            project_id=tree.project_id,
            now=now,
            tree_id=tree.pk,
            external_id=tree.external_id,
            state=state,
        )
    return state
