"""Reads of projects: the ones a person may see, with their and the project's progress.

Each selector says what it queries. The counts are fixed: a project list
costs three queries whatever the number of projects, one project's progress
two at most.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from annotation import permissions
from annotation.models import Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.projects.counts import project_item_counts
from trees import sql

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
    """The user's and the project's progress: the user's own assignments counted through their
    index (one statement), the project's items as ``annotation.projects.counts`` keeps them (one more
    statement at most)."""
    overlap = project_config(project).assignment.annotations_per_item
    counts = project_item_counts(project, overlap)
    # Gold checks count as the annotator's items (they must not stand out), training does not.
    submitted, holding = sql.fetch_one(
        "SELECT COUNT(*) FILTER (WHERE status = %s AND kind <> %s), COUNT(*) FILTER (WHERE status = %s) "
        f"FROM {sql.table(Assignment)} WHERE project_id = %s AND user_id = %s",
        [SUBMITTED, Assignment.Kind.TRAINING, LEASED, project.pk, user.pk],
    )
    return Progress(
        submitted=submitted,
        quota=_quota(project, counts.handed),
        items=counts.items,
        complete=counts.complete,
        holding=holding > 0,
    )


@dataclass(frozen=True)
class ProjectRow:
    project: Project
    progress: Progress
    can_annotate: bool


def projects_with_progress(*, user: AbstractBaseUser) -> list[ProjectRow]:
    """The projects ``user`` may see, each with its progress: three queries for any number.

    1. the projects, each with the user's submitted count as a subquery;
    2. the items of all of them, counted by (project, submitted count, gold), which
       gives both the item count and, against each project's overlap, the
       complete items;
    3. the user's roles in all of them (``permissions.roles_remember``).
    """
    submitted = (
        Assignment.objects.filter(project=OuterRef("pk"), user=user, status=SUBMITTED)
        .exclude(kind=Assignment.Kind.TRAINING)
        .order_by()
        .values("project")
        .annotate(count=Count("pk"))
        .values("count")
    )
    projects = list(
        permissions.visible_projects(user)
        .annotate(my_submitted=Coalesce(Subquery(submitted, output_field=IntegerField()), 0))
        .order_by("name")
    )
    histogram: dict[int, list[tuple[int, bool, int]]] = defaultdict(list)
    for project_id, submitted_count, is_gold, count in (
        ProjectItem.objects.filter(project__in=[project.pk for project in projects])
        .order_by()
        .values("project_id", "submitted_count", "is_gold")
        .annotate(count=Count("pk"))
        .values_list("project_id", "submitted_count", "is_gold", "count")
    ):
        histogram[project_id].append((submitted_count, is_gold, count))
    permissions.roles_remember(user, projects)
    rows = []
    for project in projects:
        overlap = project_config(project).assignment.annotations_per_item
        counts = histogram[project.pk]
        # As in project_progress: gold items are not the project's work, but may be handed out.
        handed = sum(count for _, _, count in counts)
        items = sum(count for _, is_gold, count in counts if not is_gold)
        complete = sum(count for done, is_gold, count in counts if done >= overlap and not is_gold)
        progress = Progress(
            submitted=project.my_submitted, quota=_quota(project, handed), items=items, complete=complete
        )
        rows.append(ProjectRow(project, progress, permissions.can_annotate(user, project)))
    return rows
