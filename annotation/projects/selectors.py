"""Reads of projects: the ones a person may see, with their and the project's progress.

Each selector says what it queries. The counts are fixed: a project list
costs four queries whatever the number of projects (one more per project mode with a
summary of its own), one project's progress
two at most.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q
from django.http import Http404

from annotation import permissions
from annotation.models import AnnotatorProgress, Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.projects.counts import project_item_counts
from trees import sql
from trees.models import ConversationTree

SUBMITTED = Assignment.Status.SUBMITTED
LEASED = Assignment.Status.LEASED


@dataclass(frozen=True)
class Progress:
    """How far one annotator and the whole project are."""

    submitted: int  # items this annotator submitted
    quota: int  # items they may do: the per-user limit, or every item
    items: int
    complete: int  # items with their full overlap of submissions
    holding: bool = False  # whether they hold a leased item right now

    def as_dict(self) -> dict[str, int]:
        return {
            "submitted": self.submitted,
            "quota": self.quota,
            "items": self.items,
            "complete": self.complete,
        }


def _quota(project: Project, items: int) -> int:
    limit = project_config(project).assignment.max_items_per_user
    return items if limit is None else min(limit, items)


def project_visible_get(*, user: Any, name: str) -> Project:
    """The project called ``name`` if ``user`` may see it; else Http404 (one query, the user's
    roles in it read by the same join and remembered for the permission checks that follow).

    Projects someone may not see answer "not found", so that their names do not leak.
    """
    project = permissions.project_with_roles(user, name)
    if project is None or not permissions.can_view_project(user, project):
        raise Http404("no such project")
    return project


def project_progress(*, project: Project, user: AbstractBaseUser) -> Progress:
    """The user's and the project's progress: the user's kept count of submitted items and
    whether they hold a lease (one statement: two index probes, whatever their history), the
    project's items as ``annotation.projects.counts`` keeps them (one more statement at most)."""
    overlap = project_config(project).assignment.annotations_per_item
    counts = project_item_counts(project, overlap)
    # The statuses written out for the partial index of exactly those (models.Assignment,
    # assignment_held): the probe then has one index to use, whatever the statistics say.
    submitted, holding = sql.fetch_one(
        f"SELECT COALESCE((SELECT submitted FROM {sql.table(AnnotatorProgress)} "
        "WHERE project_id = %s AND user_id = %s), 0), "
        f"EXISTS (SELECT 1 FROM {sql.table(Assignment)} WHERE project_id = %s AND user_id = %s "
        f"AND status IN ('{LEASED}', '{Assignment.Status.EXPIRED}') AND status = '{LEASED}')",
        [project.pk, user.pk, project.pk, user.pk],
    )
    return Progress(
        submitted=submitted,
        quota=_quota(project, counts.handed),
        items=counts.items,
        complete=counts.complete,
        holding=bool(holding),
    )


@dataclass(frozen=True)
class MyWork:
    """Where one annotator stands in a project, as the projects list shows it.

    ``sent_back``: items a reviewer rejected, back in their queue; ``drafts``: items they
    hold and have not submitted (sent-back ones aside); ``accepted`` is part of ``submitted``.
    """

    submitted: int = 0
    accepted: int = 0
    sent_back: int = 0
    drafts: int = 0

    def to_do(self, quota: int) -> int:
        """What is left of their quota once submitted, held and sent-back items are counted."""
        return max(quota - self.submitted - self.drafts - self.sent_back, 0)


@dataclass(frozen=True)
class ProjectRow:
    project: Project
    progress: Progress
    can_annotate: bool
    mine: MyWork = MyWork()
    # What the project's mode adds (collection: tasks done by type, trees grown), from the
    # summary that mode registered (``project_summaries_register``); None when it has none.
    summary: Any = None

    @property
    def to_do(self) -> int:
        return self.mine.to_do(self.progress.quota)


# Per project mode, a function (user, projects) -> {project id: summary}, registered by the
# group that owns the mode (collection, which sits above this one), so the list of projects
# costs one more query per mode present, not one per project.
_SUMMARIES: dict[str, Callable[[AbstractBaseUser, list[Project]], dict[int, Any]]] = {}


def project_items_by_external_id(
    *, project: Project, external_ids: Iterable[str]
) -> dict[str, tuple[int, int]]:
    """The project's items among ``external_ids`` (an import's batch): external id -> (item id,
    tree id). Two queries, each one index probe per id on PostgreSQL (``trees.sql.each_key``),
    whatever the project's size and its tables' statistics: the trees of the project's dataset
    (a project's items are its dataset's trees: ``project_items_sync``), then which of them
    are the project's items."""
    trees = dict(
        sql.each_key(
            ConversationTree,
            {"external_id": list(external_ids)},
            {"dataset_id": project.dataset_id},
            select=("id", "external_id"),
            probe=("dataset_id", "external_id"),
        )
    )
    items = sql.each_key(
        ProjectItem,
        {"tree_id": list(trees)},
        {"project_id": project.pk},
        select=("tree_id", "id"),
        probe=("project_id", "tree_id"),
    )
    return {trees[tree_id]: (item_id, tree_id) for tree_id, item_id in items}


def project_summaries_register(
    mode: str, summarise: Callable[[AbstractBaseUser, list[Project]], dict[int, Any]]
) -> None:
    """Let ``summarise`` give the projects list its rows' summaries for projects in ``mode``."""
    _SUMMARIES[mode] = summarise


def _my_work(user: AbstractBaseUser, project_ids: list[int]) -> dict[int, MyWork]:
    """The user's assignments in these projects, counted by project: one query."""
    rejected = Assignment.ReviewStatus.REJECTED
    rows = (
        Assignment.objects.filter(project__in=project_ids, user=user)
        .exclude(kind=Assignment.Kind.TRAINING)
        .order_by()
        .values("project_id")
        .annotate(
            submitted=Count("pk", filter=Q(status=SUBMITTED)),
            accepted=Count("pk", filter=Q(status=SUBMITTED, review_status=Assignment.ReviewStatus.ACCEPTED)),
            sent_back=Count("pk", filter=Q(status=LEASED, review_status=rejected)),
            drafts=Count("pk", filter=Q(status=LEASED) & ~Q(review_status=rejected)),
        )
        .values_list("project_id", "submitted", "accepted", "sent_back", "drafts")
    )
    return {project_id: MyWork(*counts) for project_id, *counts in rows}


def projects_with_progress(*, user: AbstractBaseUser) -> list[ProjectRow]:
    """The projects ``user`` may see, each with its progress: four queries for any number, and
    one more for each project mode with a registered summary that is present.

    1. the projects;
    2. the user's assignments in all of them, counted by project and state (``_my_work``);
    3. the items of all of them, counted by (project, submitted count, gold), which
       gives both the item count and, against each project's overlap, the
       complete items;
    4. the user's roles in all of them (``permissions.roles_remember``).
    """
    projects = list(permissions.visible_projects(user).order_by("name"))
    project_ids = [project.pk for project in projects]
    mine = _my_work(user, project_ids) if projects else {}
    histogram: dict[int, list[tuple[int, bool, int]]] = defaultdict(list)
    for project_id, submitted_count, is_gold, count in (
        ProjectItem.objects.filter(project__in=project_ids)
        .order_by()
        .values("project_id", "submitted_count", "is_gold")
        .annotate(count=Count("pk"))
        .values_list("project_id", "submitted_count", "is_gold", "count")
    ):
        histogram[project_id].append((submitted_count, is_gold, count))
    permissions.roles_remember(user, projects)
    summaries: dict[int, Any] = {}
    for mode, summarise in _SUMMARIES.items():
        of_mode = [project for project in projects if project.mode == mode]
        if of_mode:
            summaries.update(summarise(user, of_mode))
    rows = []
    for project in projects:
        overlap = project_config(project).assignment.annotations_per_item
        counts = histogram[project.pk]
        # As in project_progress: gold items are not the project's work, but may be handed out.
        handed = sum(count for _, _, count in counts)
        items = sum(count for _, is_gold, count in counts if not is_gold)
        complete = sum(count for done, is_gold, count in counts if done >= overlap and not is_gold)
        work = mine.get(project.pk, MyWork())
        progress = Progress(
            submitted=work.submitted, quota=_quota(project, handed), items=items, complete=complete
        )
        rows.append(
            ProjectRow(
                project,
                progress,
                permissions.can_annotate(user, project),
                mine=work,
                summary=summaries.get(project.pk),
            )
        )
    return rows
