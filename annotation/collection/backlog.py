"""The ranking backlog: imported trees taken up for ranking (Open-Assistant's ``backlog_ranking``).

Trees imported into a collect project's dataset — model replies to be
judged, say — join the backlog with ``backlog_add`` (``manage.py
collect_backlog PROJECT --add``). Their messages are taken as they are: one
without a review result counts as accepted. One backlog tree is activated
(moved to ``ranking``) when another tree stops being worked on, with
probability ``p_activate_backlog_tree``, or while fewer than
``min_active_rankings_per_lang`` trees are being ranked; moderators activate
them by hand too (``--activate N``). A backlog tree with nothing to rank is
``aborted_low_grade``, as Open-Assistant does.

Open-Assistant counts the parents awaiting rankings per language for
``min_active_rankings_per_lang``; here it is the trees being ranked in the
project (a project usually collects in one language).
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from django.db import transaction
from django.dispatch import receiver
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.advance import tree_advance
from annotation.collection.locks import LockedTree, tree_lock
from annotation.collection.models import CollectedTree
from annotation.collection.states import tree_enter, tree_facts, tree_finished
from annotation.models import Project
from annotation.projects.config import project_config
from annotation.projects.workflow_config import WorkflowConfig
from trees.audit import audit_record
from trees.models import ConversationTree, Message
from trees.vocabulary import BACKLOG_RANKING, RANKING


@transaction.atomic
def backlog_add(*, project: Project, tree_ids: list[int] | None = None) -> int:
    """Put the project dataset's trees that no project collects (or those of ``tree_ids``) in the
    ranking backlog; returns how many joined it."""
    config = project_config(project).workflow
    trees = ConversationTree.objects.filter(dataset_id=project.dataset_id, collected__isnull=True)
    if tree_ids is not None:
        trees = trees.filter(pk__in=tree_ids)
    ids = list(trees.order_by("pk").values_list("pk", flat=True))
    langs = dict(
        Message.objects.filter(tree_id__in=ids, parent__isnull=True).order_by().values_list("tree_id", "lang")
    )
    now = timezone.now()
    CollectedTree.objects.bulk_create(
        [
            CollectedTree(
                tree_id=tree_id,
                project=project,
                lang=langs.get(tree_id) or config.default_lang,
                goal_tree_size=config.goal_tree_size,
                max_depth=config.max_tree_depth,
                max_children_count=config.max_children_count,
                created_at=now,
            )
            for tree_id in ids
        ]
    )
    ConversationTree.objects.filter(pk__in=ids).update(state=BACKLOG_RANKING, updated_at=now)
    Message.objects.filter(tree_id__in=ids, review_result__isnull=True).update(review_result=True)
    if ids:
        audit_record("backlog.add", target=project, scope=project.name, details={"trees": len(ids)})
    return len(ids)


def backlog_activate(*, project: Project, count: int = 1, now: datetime | None = None) -> int:
    """Move up to ``count`` backlog trees to ``ranking`` (oldest first), one transaction each;
    a tree with nothing to rank is aborted instead. Returns how many were activated."""
    config = project_config(project).workflow
    activated = 0
    waiting = CollectedTree.objects.filter(project=project, tree__state=BACKLOG_RANKING).order_by("pk")
    for tree_id in waiting.values_list("pk", flat=True):
        if activated >= count:
            break
        with transaction.atomic():
            tree = tree_lock(tree_id, skip_locked=True)
            if tree is not None and tree.state == BACKLOG_RANKING:
                activated += _activate(tree, config, now or timezone.now())
    return activated


def _activate(tree: LockedTree, config: WorkflowConfig, now: datetime) -> int:
    if not tree_facts(tree, config).rankings_done:  # no sibling group to rank
        tree_enter(tree, lifecycle.BACKLOG_EMPTY, now)
        return 0
    tree_enter(tree, lifecycle.BACKLOG_ACTIVATED, now)
    tree_advance(tree, config, now)
    return 1


@receiver(tree_finished)
def backlog_after_finish(
    sender: Any = None, *, project_id: int, now: datetime, rng: random.Random | None = None, **kwargs: Any
) -> int:
    """When a tree stops being worked on: activate a backlog tree as the settings say (see above)."""
    project = Project.objects.get(pk=project_id)
    config = project_config(project).workflow
    if not CollectedTree.objects.filter(project=project, tree__state=BACKLOG_RANKING).exists():
        return 0
    wanted = 0
    if config.p_activate_backlog_tree > 0 and (rng or random).random() < config.p_activate_backlog_tree:
        wanted = 1
    if config.min_active_rankings_per_lang > 0:
        ranking = CollectedTree.objects.filter(project=project, tree__state=RANKING).count()
        wanted = max(wanted, config.min_active_rankings_per_lang - ranking)
    return backlog_activate(project=project, count=wanted, now=now) if wanted > 0 else 0
