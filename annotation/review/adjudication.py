"""Reads for adjudication: one item's submitted answers as fields, and the items still to adjudicate.

The fields, their agreement and what is prefilled come from the pure
``annotation.review.merging``; these selectors only read the rows it works on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Exists, OuterRef, QuerySet

from annotation.models import Annotation, Assignment, FinalAnswer, Project
from annotation.permissions import DeletedText
from annotation.projects.config import ProjectConfig, project_config
from annotation.review.merging import (
    TREE,
    FieldVotes,
    Merged,
    answer_fields,
    field_votes,
    prefilled,
    scheme_kind,
)
from annotation.work.selectors import item_tree_get
from trees.models import ConversationTree
from trees.selectors import tree_outline

ADJUDICATION_PAGE_SIZE = 50


def scheme_kinds(config: ProjectConfig) -> dict[str, str]:
    """Each scheme's name with how its answers split into fields, in the config's order."""
    return {scheme.name: scheme_kind(scheme.annotation_type) for scheme in config.schemes}


def submitted_work(project: Project) -> QuerySet[Annotation]:
    """Answers of submitted work (not gold checks or training): what adjudication weighs."""
    submitted = Assignment.objects.filter(
        project=project,
        tree_id=OuterRef("tree_id"),
        user_id=OuterRef("user_id"),
        kind=Assignment.Kind.WORK,
        status=Assignment.Status.SUBMITTED,
    )
    return Annotation.objects.filter(project=project, status=Annotation.Status.SUBMITTED).filter(
        Exists(submitted)
    )


def submitted_columns(*, project: Project, tree_ids: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """Per item, each annotator's submitted answers (username: scheme: payload), usernames in
    order: one query."""
    columns: dict[int, dict[str, dict[str, Any]]] = {tree_id: {} for tree_id in tree_ids}
    for tree_id, username, scheme, payload in (
        submitted_work(project)
        .filter(tree_id__in=tree_ids)
        .order_by("tree_id", "user__username", "scheme")
        .values_list("tree_id", "user__username", "scheme", "payload")
    ):
        columns[tree_id].setdefault(username, {})[scheme] = payload
    return columns


def item_votes(config: ProjectConfig, answers_by_user: dict[str, dict[str, Any]]) -> list[FieldVotes]:
    """The item's fields with each annotator's value, disagreements first (no queries)."""
    kinds = scheme_kinds(config)
    return field_votes({user: answer_fields(kinds, answers) for user, answers in answers_by_user.items()})


@dataclass(frozen=True)
class AdjudicationItem:
    """An item as an adjudicator sees it: the annotators' fields side by side, and the final so far."""

    project: Project
    tree: ConversationTree
    annotators: list[str]
    votes: list[FieldVotes]
    prefill: Merged
    final: FinalAnswer | None
    # Each message's role and text by node id, for the page's node fields (empty unless asked).
    messages: dict[str, str] = field(default_factory=dict)

    @property
    def version(self) -> int:
        """The final answer's version the adjudicator saw (0: none yet); a save names it."""
        return self.final.version if self.final is not None else 0

    @property
    def disagreements(self) -> list[FieldVotes]:
        return [vote for vote in self.votes if not vote.agreed]


def adjudication_item(*, project: Project, tree_id: int, viewer: Any = None) -> AdjudicationItem:
    """``tree_id``'s submitted answers as fields, with the current final answer: three queries
    (the tree, Http404 when no item of the project; the answers; the final with its adjudicator).
    With a ``viewer`` (the page), one more for the messages' texts when a scheme is a tree answer
    (deleted messages as ``permissions.DeletedText`` lets them read them)."""
    tree = item_tree_get(project=project, tree_id=tree_id)
    config = project_config(project)
    columns = submitted_columns(project=project, tree_ids=[tree.pk])[tree.pk]
    votes = item_votes(config, columns)
    adjudication = config.quality.adjudication
    final = FinalAnswer.objects.filter(project=project, tree=tree).select_related("decided_by").first()
    messages: dict[str, str] = {}
    if viewer is not None and TREE in scheme_kinds(config).values():
        for row in DeletedText(viewer, project).outline(tree.pk, tree_outline(tree)):
            messages[row.external_id] = f"{row.role}: {row.text}"
    return AdjudicationItem(
        project=project,
        tree=tree,
        annotators=list(columns),
        votes=votes,
        prefill=prefilled(votes, min_agreement=adjudication.min_agreement if adjudication.enabled else None),
        final=final,
        messages=messages,
    )


@dataclass(frozen=True)
class QueueItem:
    tree_id: int
    external_id: str
    submitted: int


def adjudication_queue(*, project: Project, page: int = 1) -> tuple[list[QueueItem], bool]:
    """Items with submitted work and no final answer yet, in item order, a page at a time
    (and whether another page follows): one query."""
    page = max(page, 1)
    offset = (page - 1) * ADJUDICATION_PAGE_SIZE
    final = FinalAnswer.objects.filter(project=project, tree_id=OuterRef("tree_id"))
    rows = list(
        Assignment.objects.filter(
            project=project, kind=Assignment.Kind.WORK, status=Assignment.Status.SUBMITTED
        )
        .exclude(Exists(final))
        .values("tree_id", "tree__external_id")
        .order_by("tree_id")
        .annotate(submitted=Count("pk"))[offset : offset + ADJUDICATION_PAGE_SIZE + 1]
    )
    items = [QueueItem(row["tree_id"], row["tree__external_id"], row["submitted"]) for row in rows]
    return items[:ADJUDICATION_PAGE_SIZE], len(items) > ADJUDICATION_PAGE_SIZE
