"""Reads the collection pages and API share: a task as its holder sees it, a tree's state,
a person's open tasks.

Each says what it queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.availability import KINDS, LABEL_PROMPT, LABEL_REPLY, PROMPT, RANK, REPLY
from annotation.collection.models import CollectedTree, Task
from annotation.models import Project
from annotation.permissions import DeletedText
from annotation.projects import text_labels as label_vocabulary
from trees.markdown import kept_html
from trees.models import ConversationTree, Message


@dataclass(frozen=True)
class Turn:
    """One message as a task shows it."""

    id: str
    role: str
    text: str
    html: str  # the text as safe HTML (trees.markdown)
    lang: str | None
    synthetic: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "text": self.text, "lang": self.lang}


@dataclass
class TaskView:
    """A task with what its holder needs to do it."""

    task: Task
    tree_external_id: str | None = None
    tree_state: str | None = None
    # From the prompt down to the task's message (the one to label, or to reply to, or whose replies to rank).
    conversation: list[Turn] = field(default_factory=list)
    replies: list[Turn] = field(default_factory=list)  # rank tasks: in the order shown
    created_message_id: str | None = None

    @property
    def category(self) -> str:
        return KINDS[self.task.type].category

    @property
    def labels(self) -> list[label_vocabulary.Label]:
        return [label_vocabulary.LABELS[name] for name in self.task.payload.get("labels", [])]

    def as_dict(self) -> dict[str, Any]:
        task = self.task
        data: dict[str, Any] = {
            "id": task.pk,
            "type": task.type,
            "status": task.shown_status,
            "created_at": task.created_at,
            "expires_at": task.expires_at,
            "acked_at": task.acked_at,
            "tree": {"id": self.tree_external_id, "state": self.tree_state}
            if self.tree_external_id
            else None,
            "conversation": [turn.as_dict() for turn in self.conversation],
            "created_message_id": self.created_message_id,
            "result": task.result,
        }
        if self.category in (LABEL_PROMPT, LABEL_REPLY):
            data["labels"] = {
                "mode": task.payload["mode"],
                "valid": task.payload["labels"],
                "mandatory": task.payload["mandatory"],
                "descriptions": [label.as_dict() for label in self.labels],
            }
        if self.category == RANK:
            reveal = task.payload.get("reveal_synthetic", False)
            data["replies"] = [
                turn.as_dict() | ({"synthetic": turn.synthetic} if reveal else {}) for turn in self.replies
            ]
            data["reveal_synthetic"] = reveal
        return data


def task_get(*, project: Project, user: AbstractBaseUser, task_id: int) -> Task:
    """The person's own task in ``project``; Http404 for anyone else's (one query)."""
    task = Task.objects.filter(pk=task_id, project=project, user=user).first()
    if task is None:
        raise Http404("no such task of yours in this project")
    return task


def task_view(task: Task, *, shown: DeletedText) -> TaskView:
    """The task with its conversation (two queries: the tree's state, its messages; none for a
    prompt), deleted messages' text as ``shown`` lets its reader see it (one more query then)."""
    view = TaskView(task)
    if task.tree_id is None:
        return view
    view.tree_external_id, view.tree_state = (
        ConversationTree.objects.filter(pk=task.tree_id).values_list("external_id", "state").get()
    )
    rows = {
        pk: (
            parent_id,
            Turn(
                external_id,
                role,
                shown.text(task.tree_id, text, deleted),
                shown.html(task.tree_id, kept_html(html, html_version, text), deleted),
                lang,
                synthetic,
            ),
        )
        for pk, parent_id, external_id, role, text, html, html_version, lang, synthetic, deleted in (
            Message.objects.filter(tree_id=task.tree_id)
            .order_by()
            .values_list(
                *("pk", "parent_id", "external_id", "role", "text"),
                *("html", "html_version", "lang", "synthetic", "deleted"),
            )
        )
    }
    chain, at = [], task.message_id
    while at is not None and at in rows:
        parent_id, turn = rows[at]
        chain.append(turn)
        at = parent_id
    view.conversation = list(reversed(chain))
    if task.created_message_id in rows:
        view.created_message_id = rows[task.created_message_id][1].id
    if KINDS[task.type].category == RANK:
        by_id = {turn.id: turn for _, turn in rows.values()}
        view.replies = [by_id[reply] for reply in task.payload.get("replies", []) if reply in by_id]
    return view


def tasks_open(*, project: Project, user: AbstractBaseUser, now: datetime | None = None) -> QuerySet[Task]:
    """The person's tasks still holding their place, oldest first (one query)."""
    now = now or timezone.now()
    return Task.objects.filter(
        project=project, user=user, status=Task.Status.LEASED, expires_at__gt=now
    ).order_by("created_at", "pk")


def collected_tree_get(*, project: Project, tree_id: str) -> CollectedTree:
    """The project's collected tree whose id (the prompt's message id) is ``tree_id``; else Http404."""
    collected = (
        CollectedTree.objects.select_related("tree")
        .filter(project=project, tree__external_id=tree_id)
        .first()
    )
    if collected is None:
        raise Http404("no such tree in this project")
    return collected


def tree_message_get(*, collected: CollectedTree, message_id: str) -> Message:
    message = Message.objects.filter(tree_id=collected.pk, external_id=message_id).first()
    if message is None:
        raise Http404("no such message in this tree")
    return message


def tree_status(collected: CollectedTree, *, shown: DeletedText) -> dict[str, Any]:
    """A tree's state, limits and messages (one query for the messages), deleted messages' text
    as ``shown`` lets its reader see it (one more query then)."""
    tree = collected.tree
    rows = list(
        Message.objects.filter(tree_id=tree.pk)
        .order_by("depth", "position", "pk")
        .values_list(
            "pk",
            "parent_id",
            "external_id",
            "role",
            "text",
            "lang",
            "review_count",
            "review_result",
            "rank",
            "deleted",
            "synthetic",
        )
    )
    external = {row[0]: row[2] for row in rows}
    return {
        "id": tree.external_id,
        "state": tree.state,
        "active": lifecycle.is_active(tree.state),
        "lang": collected.lang,
        "goal_tree_size": collected.goal_tree_size,
        "max_depth": collected.max_depth,
        "max_children_count": collected.max_children_count,
        "won_prompt_lottery_at": collected.won_prompt_lottery_at,
        "messages": [
            {
                "id": external_id,
                "parent_id": external.get(parent_id),
                "role": role,
                "text": shown.text(tree.pk, text, deleted),
                "lang": lang,
                "review_count": review_count,
                "review_result": review_result,
                "rank": rank,
                "deleted": deleted,
                "synthetic": synthetic,
            }
            for (
                _pk,
                parent_id,
                external_id,
                role,
                text,
                lang,
                review_count,
                review_result,
                rank,
                deleted,
                synthetic,
            ) in rows
        ],
    }


# What the projects list calls each category of a person's done tasks, in the order shown.
DONE_LABELS = {
    PROMPT: "prompts written",
    REPLY: "replies written",
    LABEL_PROMPT: "prompts reviewed",
    LABEL_REPLY: "replies reviewed",
    RANK: "rankings",
}


@dataclass(frozen=True)
class CollectionSummary:
    """A collection project as the projects list shows it to one person: the tasks they did,
    by category, and the trees the project has grown."""

    done: dict[str, int]  # category -> the person's done tasks
    trees: int
    ready: int  # trees ready for export

    @property
    def done_total(self) -> int:
        return sum(self.done.values())

    @property
    def done_rows(self) -> list[tuple[str, int]]:
        """(label, count) for each category, in DONE_LABELS's order, none left out."""
        return [(label, self.done.get(category, 0)) for category, label in DONE_LABELS.items()]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tasks_done": {c: self.done.get(c, 0) for c in DONE_LABELS},
            "trees": self.trees,
            "ready": self.ready,
        }


def collection_summaries(user: AbstractBaseUser, projects: list[Project]) -> dict[int, CollectionSummary]:
    """Each collection project's summary for ``user``: two queries for any number of projects
    (the user's done tasks by project and type; the projects' trees by state)."""
    ids = [project.pk for project in projects]
    done: dict[int, dict[str, int]] = {pk: {} for pk in ids}
    for project_id, task_type, count in (
        Task.objects.filter(project__in=ids, user=user, status=Task.Status.DONE)
        .order_by()
        .values("project_id", "type")
        .annotate(count=Count("pk"))
        .values_list("project_id", "type", "count")
    ):
        category = KINDS[task_type].category
        done[project_id][category] = done[project_id].get(category, 0) + count
    trees: dict[int, int] = dict.fromkeys(ids, 0)
    ready: dict[int, int] = dict.fromkeys(ids, 0)
    for project_id, state, count in (
        CollectedTree.objects.filter(project__in=ids)
        .order_by()
        .values("project_id", "tree__state")
        .annotate(count=Count("pk"))
        .values_list("project_id", "tree__state", "count")
    ):
        trees[project_id] += count
        if state == lifecycle.READY_FOR_EXPORT:
            ready[project_id] += count
    return {pk: CollectionSummary(done=done[pk], trees=trees[pk], ready=ready[pk]) for pk in ids}
