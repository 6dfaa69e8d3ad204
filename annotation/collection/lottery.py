"""The prompt lottery: accepted prompts wait until a growing slot is free, then one is drawn.

As Open-Assistant's ``_prompt_lottery``: while fewer than
``max_active_trees`` trees grow, draw an author among those with waiting
prompts (weighted by 1 + how many of their replies were ranked best in the
project, Open-Assistant's ``reply_ranked_1``), then one of their prompts at
random. Its tree starts growing. The project row is locked for the draw, so
two requests at once never start more trees than there are slots; trees
someone else holds are skipped rather than waited for.
"""

from __future__ import annotations

import random
from datetime import datetime

from django.db import transaction
from django.db.models import Count

from annotation.collection import lifecycle
from annotation.collection.availability import ProjectCounts, project_counts
from annotation.collection.locks import project_lock, tree_lock
from annotation.collection.states import tree_enter
from annotation.models import Project
from annotation.projects.workflow_config import WorkflowConfig
from trees.models import Message
from trees.vocabulary import GROWING, PROMPT_LOTTERY_WAITING


def lottery_needed(counts: ProjectCounts, config: WorkflowConfig) -> bool:
    return counts.get(PROMPT_LOTTERY_WAITING) > 0 and counts.get(GROWING) < config.max_active_trees


def lottery_run(
    *,
    project: Project,
    config: WorkflowConfig,
    now: datetime,
    rng: random.Random,
    max_activate: int = 1,
    counts: ProjectCounts | None = None,
) -> int:
    """Start up to ``max_activate`` waiting trees growing; returns how many started.

    ``counts`` (the project's trees by state, if the caller has them) spares
    the transaction when nothing is waiting or no slot is free.
    """
    if counts is not None and not lottery_needed(counts, config):
        return 0
    started = 0
    with transaction.atomic():
        project_lock(project)
        counts = project_counts(project, now)
        free = min(max_activate, config.max_active_trees - counts.get(GROWING))
        waiting = list(counts.ids(PROMPT_LOTTERY_WAITING))
        while started < free and waiting:
            drawn = _draw_one(project, waiting, now, rng)
            if drawn is None:
                break
            waiting.remove(drawn)
            started += 1
    return started


def _draw_one(project: Project, tree_ids: list[int], now: datetime, rng: random.Random) -> int | None:
    """Start one of the waiting trees growing; returns its id (None if none could be)."""
    waiting = list(
        Message.objects.filter(tree_id__in=tree_ids, parent__isnull=True, deleted=False, review_result=True)
        .order_by("tree_id")
        .values_list("tree_id", "author_id")
    )
    if not waiting:
        return None
    authors = sorted({author for _, author in waiting}, key=lambda author: (author is None, author or 0))
    best = dict(
        Message.objects.filter(
            tree__collected__project=project, rank=0, author_id__in=[a for a in authors if a]
        )
        .values("author_id")
        .annotate(n=Count("pk"))
        .values_list("author_id", "n")
    )
    tried: set[int] = set()
    while len(tried) < len(waiting):
        author = rng.choices(authors, weights=[1 + best.get(author, 0) for author in authors])[0]
        prompts = [tree_id for tree_id, by in waiting if by == author and tree_id not in tried]
        if not prompts:
            authors.remove(author)
            if not authors:
                return None
            continue
        tree_id = rng.choice(prompts)
        tried.add(tree_id)
        tree = tree_lock(tree_id, skip_locked=True)
        if tree is not None and tree.state == PROMPT_LOTTERY_WAITING:
            tree_enter(tree, lifecycle.LOTTERY_WON, now)
            return tree_id
    return None
