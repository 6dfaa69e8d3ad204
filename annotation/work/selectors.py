"""Reads of an annotator's item for their pages and the API: the item with its answers.

Each selector says what it queries. The counts are fixed: an item costs four
queries whatever the size of its tree (one more when its messages are wanted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import Http404

from annotation.models import Annotation, Assignment, Project, Review
from annotation.permissions import DeletedText
from annotation.projects.selectors import Progress, project_progress
from annotation.work.assignment import Lease
from annotation.work.submissions import item_assignment
from trees import sql
from trees.models import ConversationTree
from trees.selectors import OutlineRow, tree_outline

SUBMITTED = Assignment.Status.SUBMITTED
LEASED = Assignment.Status.LEASED


@dataclass(frozen=True)
class ItemView:
    """One annotator's item: the tree, their assignment and answers, and their progress."""

    project: Project
    tree: ConversationTree
    assignment: Assignment
    annotations: dict[str, Any]  # payload by scheme name
    progress: Progress
    outline: list[OutlineRow] | None  # the messages in preorder, when asked for

    @property
    def editable(self) -> bool:
        """Skipped items are closed; leased, expired (taken back on save) and submitted ones are not."""
        return self.assignment.status != Assignment.Status.SKIPPED

    @property
    def opens_read_only(self) -> bool:
        """Submitted work opens read-only, its page offering Edit: one stray key must not rewrite it.

        Work sent back is leased again, so it opens editable (it is there to be fixed); a
        training item keeps its own rule (closed once submitted, ``quality.training``).
        """
        assignment = self.assignment
        return assignment.status == SUBMITTED and assignment.kind != Assignment.Kind.TRAINING


def item_view(
    *,
    project: Project,
    tree_id: int,
    user: AbstractBaseUser,
    with_messages: bool,
    assignment: Assignment | None = None,
    answers: dict[str, Any] | None = None,
) -> ItemView:
    """The user's own item (never anyone else's answers): four statements, five with the messages.

    1. the assignment with its tree (``item_assignment``; none when the caller
    just got it from ``item_lease``); 2. the user's answers (none when the
    lease knew them); 3-4. the progress (``project_progress``); 5. with
    ``with_messages``, the whole tree (``trees.selectors.tree_outline``), deleted messages' text
    as the user may read it (``permissions.DeletedText``: one more query, only for a tree with one).

    Raises Http404 when the tree is not an item of the project and
    NotAssigned when it is but the user does not hold it.
    """
    if assignment is None:
        assignment = item_assignment(project=project, tree=tree_id, user=user)
    if answers is None:
        answers = _answers(project, assignment.tree_id, user)
    return ItemView(
        project=project,
        tree=assignment.tree,
        assignment=assignment,
        annotations=answers,
        progress=project_progress(project=project, user=user),
        outline=(
            DeletedText(user, project).outline(assignment.tree_id, tree_outline(assignment.tree))
            if with_messages
            else None
        ),
    )


def leased_item_view(*, project: Project, user: AbstractBaseUser, lease: Lease) -> ItemView:
    """The item ``item_lease`` just handed out, with its messages, as the annotate page and
    ``items/next`` show it: the lease comes with its tree, and its answers when it knows them,
    which are not read again (three statements, four with answers to read, one more for a tree
    with deleted messages)."""
    return item_view(
        project=project,
        tree_id=lease.assignment.tree_id,
        user=user,
        with_messages=True,
        assignment=lease.assignment,
        answers=lease.answers,
    )


def _answers(project: Project, tree_id: int, user: AbstractBaseUser) -> dict[str, Any]:
    columns = sql.columns(Annotation, "answer")
    rows = sql.fetch_all(
        f"SELECT {columns.sql} FROM {sql.table(Annotation)} answer "
        "WHERE answer.project_id = %s AND answer.tree_id = %s AND answer.user_id = %s",
        [project.pk, tree_id, user.pk],
    )
    return {answer.scheme: answer.payload for answer in map(columns.load, rows)}


def item_tree_get(*, project: Project, tree_id: int) -> ConversationTree:
    """The tree ``tree_id`` if it is an item of ``project``; else Http404 (one query)."""
    tree = ConversationTree.objects.filter(pk=tree_id, project_items__project=project).first()
    if tree is None:
        raise Http404("no such item in this project")
    return tree


def review_returned(*, assignment: Assignment) -> Review | None:
    """The rejection that sent ``assignment`` back, when it is waiting to be fixed (one query, else none)."""
    if assignment.review_status != Assignment.ReviewStatus.REJECTED or assignment.status == SUBMITTED:
        return None
    return assignment.reviews.filter(decision=Review.Decision.REJECTED).select_related("reviewer").first()
