"""Submitting a collection task's work: a prompt, a reply, a review's labels, a ranking.

Submissions check again what the hand-out checked: the tree must still be in a
state that takes the work and the target must still be there. A submission
whose lease ran out is kept only if its place is still free (``tasks``); its
holder's next request for a task closes it (``expired``).
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.advance import tree_advance
from annotation.collection.annotations import ranking_record, review_record
from annotation.collection.availability import (
    KINDS,
    LABEL_PROMPT,
    LABEL_REPLY,
    PROMPT,
    REPLY,
    REPLY_ROLE,
    TYPES_OF,
)
from annotation.collection.errors import TaskRefused
from annotation.collection.locks import (
    LockedTree,
    message_lock,
    project_lock,
    tree_lock,
)
from annotation.collection.models import CollectedTree, Task
from annotation.collection.tasks import (
    DONE,
    task_audit,
    task_check_open,
    task_locked,
    task_reclaim,
    workflow_config,
)
from annotation.models import Project
from annotation.problems import Problems, describe
from annotation.projects import text_labels as label_vocabulary
from annotation.projects.workflow_config import WorkflowConfig
from trees.models import ConversationTree, Message
from trees.vocabulary import GROWING, INITIAL_PROMPT_REVIEW, RANKING, USER

_LANG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


def task_submit(
    *,
    project: Project,
    task_id: int,
    user: AbstractBaseUser,
    data: Any,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> Task:
    """Submit the work of a task: ``{"text", "lang"?}`` for a prompt or a reply,
    ``{"labels": {...}}`` for a review, ``{"ranking": [ids best first], "not_rankable"?}`` for a ranking.

    Raises ProblemsError for a payload that is not right (with paths) and
    TaskRefused when the task cannot be submitted any more.
    """
    config = workflow_config(project)
    now = now or timezone.now()
    rng = rng or random.Random()
    with transaction.atomic():
        task = task_locked(project, task_id, user)
        task_check_open(task)
        category = KINDS[task.type].category
        moved: LockedTree | None = None  # a tree whose facts the submission changed
        if category == PROMPT:
            _submit_prompt(task, data, project, config, now, rng)
        elif category == REPLY:
            _submit_reply(task, data, project, config, now)
        elif category in (LABEL_PROMPT, LABEL_REPLY):
            moved = _submit_labels(task, data, project, user, config, now)
        else:
            moved = _submit_ranking(task, data, project, user, config, now)
        task.status = DONE
        task.done_at = now
        task.save(update_fields=["status", "done_at", "result", "tree", "created_message"])
        made = {"message": task.created_message.external_id} if task.created_message is not None else {}
        task_audit("task.submit", task, project, user, **made)
        if moved is not None:
            # After the task is saved done: the facts count the reviews and rankings done.
            tree_advance(moved, config, now)
    return task


def _expect_object(data: Any, keys: set[str], problems: Problems) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        problems.add("", f"must be an object, got {describe(data)}")
        problems.raise_if_any()
    problems.check_keys(data, "", keys)
    return data


def _text_and_lang(data: Any, config: WorkflowConfig, default_lang: str) -> tuple[str, str]:
    problems = Problems()
    data = _expect_object(data, {"text", "lang"}, problems)
    text = data.get("text")
    if not isinstance(text, str) or not text.strip():
        problems.add("text", "must not be empty", "required")
    elif len(text.strip()) > config.max_message_chars:
        problems.add(
            "text", f"must be at most {config.max_message_chars:,} characters, got {len(text.strip()):,}"
        )
    lang = data.get("lang")
    if lang is None:
        lang = default_lang
    elif not isinstance(lang, str) or not _LANG.match(lang):
        problems.add("lang", f"must be a language tag such as en or pt-BR, got {describe(lang)}")
    problems.raise_if_any()
    return text.strip(), lang


def _submit_prompt(
    task: Task, data: Any, project: Project, config: WorkflowConfig, now: datetime, rng: random.Random
) -> None:
    text, lang = _text_and_lang(data, config, config.default_lang)
    project_lock(project)
    if task.lease_expired(now):
        task_reclaim(task, project, config, now)
    message_id = str(uuid.uuid4())
    tree = ConversationTree.objects.create(
        dataset_id=project.dataset_id, external_id=message_id, state=INITIAL_PROMPT_REVIEW, created_at=now
    )
    goal = config.goal_tree_size
    if config.random_goal_tree_size and config.min_goal_tree_size < config.goal_tree_size:
        goal = rng.randint(config.min_goal_tree_size, config.goal_tree_size)
    CollectedTree.objects.create(
        tree=tree,
        project=project,
        lang=lang,
        goal_tree_size=goal,
        max_depth=config.max_tree_depth,
        max_children_count=config.max_children_count,
        created_at=now,
    )
    root = Message.objects.create(
        tree=tree,
        external_id=message_id,
        role=USER,
        text=text,
        lang=lang,
        depth=0,
        position=0,
        author_id=task.user_id,
        review_count=0,
        created_at=now,
    )
    task.tree = tree
    task.created_message = root


def _locked_tree(task: Task, states: tuple[str, ...], doing: str) -> LockedTree:
    tree = tree_lock(task.tree_id)
    if tree is None or tree.state not in states:
        state = tree.state.replace("_", " ") if tree is not None else "gone"
        raise TaskRefused("tree_closed", f"this conversation no longer takes {doing} (it is {state})")
    return tree


def _submit_reply(task: Task, data: Any, project: Project, config: WorkflowConfig, now: datetime) -> None:
    problems = Problems()
    _expect_object(data, {"text", "lang"}, problems)  # before any lock: a bad payload costs no wait
    tree = _locked_tree(task, (GROWING,), "replies")
    parent = message_lock(task.message_id)  # stable under the tree's lock; locked for form's sake
    assert parent is not None
    text, lang = _text_and_lang(data, config, parent.lang or config.default_lang)
    if parent.deleted:
        raise TaskRefused("message_deleted", "the message you replied to was deleted by a moderator")
    siblings = list(
        Message.objects.filter(tree_id=tree.pk, parent_id=parent.pk)
        .order_by()
        .values_list("author_id", "deleted")
    )
    if (task.user_id, False) in siblings:
        raise TaskRefused("duplicate_reply", "you already replied to this message")
    if task.lease_expired(now):
        task_reclaim(task, project, config, now)
    task.created_message = Message.objects.create(
        tree_id=tree.pk,
        parent_id=parent.pk,
        external_id=str(uuid.uuid4()),
        role=REPLY_ROLE[parent.role],
        text=text,
        lang=lang,
        depth=parent.depth + 1,
        position=len(siblings),
        author_id=task.user_id,
        review_count=0,
        created_at=now,
    )


def _submit_labels(
    task: Task, data: Any, project: Project, user: AbstractBaseUser, config: WorkflowConfig, now: datetime
) -> LockedTree | None:
    problems = Problems()
    data = _expect_object(data, {"labels"}, problems)
    values = label_vocabulary.labels_validate(
        data.get("labels"),
        shown=task.payload["labels"],
        mandatory=task.payload["mandatory"],
        path="labels",
        problems=problems,
    )
    problems.raise_if_any()
    assert values is not None
    root = KINDS[task.type].category == LABEL_PROMPT
    tree = _locked_tree(task, (INITIAL_PROMPT_REVIEW,) if root else (GROWING,), "reviews")
    message = message_lock(task.message_id)
    assert message is not None
    if message.deleted:
        raise TaskRefused("message_deleted", "the message was deleted by a moderator")
    if message.review_result is not None:
        raise TaskRefused("already_reviewed", "this message has all the reviews it needs")
    if task.lease_expired(now):
        task_reclaim(task, project, config, now)
    task.result = {"labels": values}
    review_count = (message.review_count or 0) + 1
    review_record(
        project=project,
        tree_id=tree.pk,
        user=user,
        message_id=message.external_id,
        labels=values,
        root=root,
        now=now,
    )
    required = config.reviews_required(root=root)
    verdict = None
    if review_count >= required:
        reviews = [
            result["labels"]
            for result in Task.objects.filter(
                message_id=message.pk, type__in=TYPES_OF[LABEL_PROMPT] + TYPES_OF[LABEL_REPLY], status=DONE
            )
            .order_by()
            .values_list("result", flat=True)
        ]
        verdict = lifecycle.review_verdict(
            reviews=[*reviews, values], required=required, threshold=config.acceptance_threshold(root=root)
        )
    Message.objects.filter(pk=message.pk).update(review_count=review_count, review_result=verdict)
    return tree if verdict is not None else None


def _submit_ranking(
    task: Task, data: Any, project: Project, user: AbstractBaseUser, config: WorkflowConfig, now: datetime
) -> LockedTree:
    problems = Problems()
    data = _expect_object(data, {"ranking", "not_rankable"}, problems)
    shown = list(task.payload["replies"])
    ranking = data.get("ranking")
    if not isinstance(ranking, list) or not all(isinstance(item, str) for item in ranking):
        problems.add("ranking", f"must be a list of the replies' ids, best first, got {describe(ranking)}")
    elif sorted(ranking) != sorted(shown) or len(set(ranking)) != len(ranking):
        missing = [reply for reply in shown if reply not in ranking]
        unknown = [item for item in ranking if item not in shown]
        twice = sorted({item for item in ranking if ranking.count(item) > 1})
        details = [
            f"{label}: {', '.join(items)}"
            for label, items in (("missing", missing), ("not shown", unknown), ("twice", twice))
            if items
        ]
        problems.add(
            "ranking", f"must list each of the {len(shown)} replies once, best first ({'; '.join(details)})"
        )
    not_rankable = data.get("not_rankable", False)
    if not isinstance(not_rankable, bool):
        problems.add("not_rankable", f"must be true or false, got {describe(not_rankable)}")
    problems.raise_if_any()
    tree = _locked_tree(task, (RANKING,), "rankings")
    parent = message_lock(task.message_id)
    assert parent is not None
    if parent.deleted:
        raise TaskRefused(
            "message_deleted", "the message whose replies you ranked was deleted by a moderator"
        )
    if task.lease_expired(now):
        task_reclaim(task, project, config, now)
    task.result = {"ranking": ranking} | ({"not_rankable": True} if not_rankable else {})
    ranking_record(
        project=project,
        tree_id=tree.pk,
        user=user,
        parent_id=parent.external_id,
        order=ranking,
        shown_order=shown,
        not_rankable=not_rankable,
        now=now,
    )
    return tree
