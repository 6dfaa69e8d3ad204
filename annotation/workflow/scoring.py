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
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.models import Project
from annotation.workflow import lifecycle
from annotation.workflow.config import WorkflowConfig
from annotation.workflow.locks import LockedTree, tree_lock
from annotation.workflow.models import CollectedTree, Task
from annotation.workflow.ranking import ranked_pairs
from annotation.workflow.states import RANK_TYPES, ranking_groups, tree_advance, tree_enter, tree_facts
from trees.models import Message
from trees.vocabulary import SCORING_FAILED

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
        consensus = ranked_pairs(given) if given else []
        if len(consensus) < 2:
            consensus = []  # too little common ground: no ranks (as Open-Assistant skips it)
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


@dataclass
class RetryReport:
    scored: int = 0
    failed: int = 0
    back_to_ranking: int = 0

    def summary(self) -> str:
        return (
            f"{self.scored} scored, {self.failed} failed again, "
            f"{self.back_to_ranking} back to ranking (rankings missing)"
        )


def scoring_retry(*, project: Project, tree_ids: list[int] | None = None) -> RetryReport:
    """Retry the project's trees in ``scoring_failed`` (or those of ``tree_ids``), one transaction each.

    A tree whose rankings are complete is scored again; one whose rankings
    are not (a reply deleted, say) goes back to ``ranking``.
    """
    from annotation.projects import project_config

    config = project_config(project).workflow
    report = RetryReport()
    candidates = CollectedTree.objects.filter(project=project, tree__state=SCORING_FAILED)
    if tree_ids is not None:
        candidates = candidates.filter(pk__in=tree_ids)
    for collected in candidates.order_by("pk"):
        with transaction.atomic():
            tree = tree_lock(collected.pk)
            if tree is None or tree.state != SCORING_FAILED:
                continue
            now = timezone.now()
            if lifecycle.scoring_due(tree_facts(tree, config)):
                tree_enter(tree, lifecycle.RETRY, now)
                if tree_score(tree, config, now) == lifecycle.SCORED:
                    report.scored += 1
                else:
                    report.failed += 1
            else:
                tree_enter(tree, lifecycle.RETRY_INCOMPLETE, now)
                tree_advance(tree, config, now)
                report.back_to_ranking += 1
    return report
