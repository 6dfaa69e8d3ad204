"""Moving collected trees on: the moves a tree's facts imply, scoring it when it becomes
ready, and retrying trees whose scoring failed.

Above ``states`` (one move at a time) and ``scoring`` (the ranks of one tree): the
services that change a tree's facts — submissions, moderation, the backlog — call
``tree_advance`` after their change, under the tree's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.locks import LockedTree, tree_lock
from annotation.collection.models import CollectedTree
from annotation.collection.scoring import tree_score
from annotation.collection.states import tree_enter, tree_facts
from annotation.models import Project
from annotation.projects.config import project_config
from annotation.projects.workflow_config import WorkflowConfig
from trees.vocabulary import READY_FOR_SCORING, SCORING_FAILED


def tree_advance(tree: LockedTree, config: WorkflowConfig, now: datetime | None = None) -> list[str]:
    """Take the moves the locked tree's facts imply, scoring it when it becomes ready; returns the events."""
    events = lifecycle.advance(tree_facts(tree, config))
    for event in events:
        tree_enter(tree, event, now)
    if tree.state == READY_FOR_SCORING:
        events.append(tree_score(tree, config, now))
    return events


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


def scoring_retry(
    *,
    project: Project,
    tree_ids: list[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RetryReport:
    """Retry the project's trees in ``scoring_failed`` (or those of ``tree_ids``), one transaction each.

    A tree whose rankings are complete is scored again; one whose rankings
    are not (a reply deleted, say) goes back to ``ranking``. ``progress(done, total)`` hears
    of each tree (a job's progress bar); a retry stopped half-way is taken up by the next,
    since the trees done are no longer in ``scoring_failed``.
    """
    config = project_config(project).workflow
    report = RetryReport()
    candidates = CollectedTree.objects.filter(project=project, tree__state=SCORING_FAILED)
    if tree_ids is not None:
        candidates = candidates.filter(pk__in=tree_ids)
    chosen = list(candidates.order_by("pk"))
    for done, collected in enumerate(chosen):
        if progress is not None:
            progress(done, len(chosen))
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
