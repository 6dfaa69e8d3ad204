"""Scoring: the ranks of sibling replies from the rankings people gave (ranked pairs).

A tree in ``ready_for_scoring`` gets, for each parent with two or more
accepted replies of a ranked role, the ranked-pairs consensus of the
rankings of those replies (over the replies every ranker saw that are still
accepted and not deleted); rank 0 is the best. Other messages get no rank.
Any error sends the tree to ``scoring_failed``, from where a moderator
retries (``scoring_retry``: the admin action and ``manage.py retry_scoring``).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime

from django.db import transaction

from annotation.collection import lifecycle
from annotation.collection.locks import LockedTree
from annotation.collection.models import Task
from annotation.collection.ranking import common_candidates, ranked_pairs
from annotation.collection.states import RANK_TYPES, ranking_groups, tree_enter
from annotation.projects.workflow_config import WorkflowConfig
from trees.models import Message

logger = logging.getLogger(__name__)


def consensus_ranks(
    groups: dict[str, list[str]], rankings: dict[str, list[list[str]]]
) -> dict[str, int | None]:
    """Rank of each reply (external ids) in ``groups`` (parent → replies) from ``rankings``
    (parent → rankings, best first): the consensus over the replies still in the group."""
    ranks: dict[str, int | None] = {}
    for parent, replies in groups.items():
        kept = set(replies)
        given = [[reply for reply in ranking if reply in kept] for ranking in rankings.get(parent, [])]
        # As Open-Assistant: only the replies every ranker saw are ranked, and fewer than two
        # of them is too little common ground for any rank.
        common = set(common_candidates(given))
        consensus = ranked_pairs([[r for r in ranking if r in common] for ranking in given])
        if len(consensus) < 2:
            consensus = []
        ranks.update({reply: None for reply in replies})
        ranks.update({reply: rank for rank, reply in enumerate(consensus)})
    return ranks


def _apply_ranks(tree: LockedTree, config: WorkflowConfig) -> int:
    rows = list(
        Message.objects.filter(tree_id=tree.pk).values_list(
            "pk", "parent_id", "role", "review_result", "deleted", "external_id", "rank"
        )
    )
    external = {row[0]: row[5] for row in rows}
    groups = {
        external[parent]: [external[pk] for pk in replies]
        for parent, replies in ranking_groups([row[:5] for row in rows], config).items()
    }
    rankings: dict[str, list[list[str]]] = defaultdict(list)
    for parent_id, result in (
        Task.objects.filter(tree_id=tree.pk, type__in=RANK_TYPES, status=Task.Status.DONE)
        .order_by("done_at", "pk")
        .values_list("message_id", "result")
    ):
        rankings[external[parent_id]].append(list(result["ranking"]))
    ranks = consensus_ranks(groups, rankings)
    changed = [
        Message(pk=pk, rank=ranks.get(external_id))
        for pk, _, _, _, _, external_id, rank in rows
        if ranks.get(external_id) != rank
    ]
    Message.objects.bulk_update(changed, ["rank"])
    return len(changed)


def tree_score(tree: LockedTree, config: WorkflowConfig, now: datetime | None = None) -> str:
    """Score the locked tree (in ``ready_for_scoring``); returns the event it took."""
    try:
        with transaction.atomic():  # a savepoint: a failed scoring leaves no half-written ranks
            _apply_ranks(tree, config)
    except Exception:
        logger.exception("scoring tree %s failed", tree.external_id)
        tree_enter(tree, lifecycle.SCORING_ERROR, now)
        return lifecycle.SCORING_ERROR
    tree_enter(tree, lifecycle.SCORED, now)
    return lifecycle.SCORED
