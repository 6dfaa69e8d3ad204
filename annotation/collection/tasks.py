"""Handing out collection tasks, and acknowledging and skipping them (their submission:
``submissions``).

A task is a row with a lease (``recent_tasks_span_sec``, renewed by each
acknowledgement). While the lease runs, the task holds its place: the
availability queries count it as done, so the limits —
``max_children_count`` per parent, the reviews per message, the rankings
per parent, a tree's goal size, the prompts wanted — count people at work
as well as work done. Hand-outs pick a candidate, lock it (SKIP LOCKED,
see ``locks`` for the lock order) and check again, in a fresh statement,
that it still has room before the task is written: so however many people
ask at once, no limit is passed.

A task whose lease ran out is kept only if its place is still free
(``task_reclaim``); its holder's next request for a task closes it (``expired``).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.availability import (
    KINDS,
    LABEL_PROMPT,
    LABEL_REPLY,
    PROMPT,
    RANDOM,
    RANDOM_WEIGHTS,
    RANK,
    REPLY,
    REPLY_ROLE,
    TASK_TYPES,
    TYPE_OF,
    TYPES_OF,
    Availability,
    Candidate,
    availability,
    label_candidates,
    project_counts,
    prompt_room,
    rank_candidates,
    reply_candidates,
)
from annotation.collection.errors import NoTaskAvailable, NotCollectProject, TaskRefused, TooManyPending
from annotation.collection.locks import (
    message_lock,
    project_lock,
    rows_lock,
    tree_lock,
    user_lock,
)
from annotation.collection.lottery import lottery_run
from annotation.collection.models import Task
from annotation.collection.states import tree_enter
from annotation.models import Project
from annotation.problems import Problems
from annotation.projects import text_labels as label_vocabulary
from annotation.projects.config import project_config
from annotation.projects.workflow_config import WorkflowConfig
from trees.audit import audit_record
from trees.models import Message
from trees.vocabulary import GROWING, INITIAL_PROMPT_REVIEW, USER

LEASED, DONE, SKIPPED, EXPIRED = (
    Task.Status.LEASED,
    Task.Status.DONE,
    Task.Status.SKIPPED,
    Task.Status.EXPIRED,
)
# Candidates tried per hand-out before moving on: each try is one lock and one check.
MAX_TRIES = 12


def workflow_config(project: Project) -> WorkflowConfig:
    """The project's ``workflow:`` settings; NotCollectProject for a project in annotate mode."""
    if project.mode != Project.Mode.COLLECT:
        raise NotCollectProject("not_collect_project", f'"{project.name}" does not collect trees')
    return project_config(project).workflow


def _lease(config: WorkflowConfig) -> timedelta:
    return timedelta(seconds=config.recent_tasks_span_sec)


# -- hand-out --------------------------------------------------------------------------------


def tasks_available(
    *,
    project: Project,
    user: AbstractBaseUser,
    lang: str | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> dict[str, int]:
    """How many tasks of each type ``user`` could have now, and ``random``: their sum.

    As Open-Assistant's availability, the prompt lottery runs first (starting
    at most one waiting tree), so the counts include what it makes possible.
    """
    config = workflow_config(project)
    now = now or timezone.now()
    counts = project_counts(project, now)
    if lottery_run(project=project, config=config, now=now, rng=rng or random.Random(), counts=counts):
        counts = project_counts(project, now)
    return availability(project=project, user=user, config=config, now=now, lang=lang, counts=counts).counts()


def task_next(
    *,
    project: Project,
    user: AbstractBaseUser,
    task_type: str = RANDOM,
    lang: str | None = None,
    message: Message | None = None,
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> Task:
    """Hand ``user`` a new task of ``task_type`` (or ``random``, drawn as Open-Assistant does).

    ``message`` asks for a task on that message (to review it, reply to it
    or rank its replies) if it is one this person may have now. Raises
    TooManyPending at ``max_pending_tasks_per_user`` open tasks and
    NoTaskAvailable when nothing of that type is waiting for this person.
    """
    if task_type not in TASK_TYPES:
        problems = Problems()
        problems.add("type", f'unknown task type "{task_type}" (expected one of {", ".join(TASK_TYPES)})')
        problems.raise_if_any()
    config = workflow_config(project)
    now = now or timezone.now()
    rng = rng or random.Random()
    # The lottery first, in its own short transaction, as Open-Assistant draws on every request.
    counts = project_counts(project, now)
    if lottery_run(project=project, config=config, now=now, rng=rng, max_activate=2, counts=counts):
        counts = project_counts(project, now)
    with transaction.atomic():
        user_lock(user)
        leased = list(
            Task.objects.filter(project=project, user=user, status=LEASED)
            .order_by()
            .values_list("pk", "expires_at")
        )
        expired = [pk for pk, expires_at in leased if expires_at <= now]
        if expired:  # the person moved on: their lapsed tasks close (their targets come back to them)
            # Conditions again in the UPDATE: another request of theirs may have submitted or renewed one.
            Task.objects.filter(pk__in=expired, status=LEASED, expires_at__lte=now).update(status=EXPIRED)
        pending = len(leased) - len(expired)
        if pending >= config.max_pending_tasks_per_user:
            raise TooManyPending(
                "too_many_pending",
                f"you have {pending} open tasks in this project (at most "
                f"{config.max_pending_tasks_per_user}); finish or skip one first",
            )
        if task_type == RANDOM:
            categories = tuple(RANDOM_WEIGHTS)
            role = None
        else:
            kind = KINDS[task_type]
            categories, role = (kind.category,), kind.target_role
        available = availability(
            project=project,
            user=user,
            config=config,
            now=now,
            lang=lang,
            categories=categories,
            counts=counts,
        )
        while categories:
            category = _draw(available, categories, rng) if task_type == RANDOM else categories[0]
            if category is None:
                break
            target = message.pk if message is not None else None
            task = _hand_out(category, role, target, available, project, user, config, now, rng, lang)
            if task is not None:
                task_audit("task.lease", task, project, user)
                return task
            categories = tuple(c for c in categories if c != category)
    if message is not None:
        subject = (
            "task on this message is" if task_type == RANDOM else f'"{task_type}" task on this message is'
        )
    else:
        subject = "tasks are" if task_type == RANDOM else f'"{task_type}" tasks are'
    raise NoTaskAvailable("no_task", f"no {subject} waiting for you right now; please try again later")


def _draw(available: Availability, categories: tuple[str, ...], rng: random.Random) -> str | None:
    """Open-Assistant's random draw: ranking 10, label reply 5, label prompt 5, reply 2, prompt 0.01,
    among the categories with work."""
    weighted = [
        (category, RANDOM_WEIGHTS[category]) for category in categories if available.has_work(category)
    ]
    if not weighted:
        return None
    return rng.choices([c for c, _ in weighted], weights=[w for _, w in weighted])[0]


def _order(
    category: str, candidates: list[Candidate], config: WorkflowConfig, rng: random.Random
) -> list[Candidate]:
    """Candidates in the order to try: at random, lonely children first (with p_lonely_child_extension)."""
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    if category == REPLY and config.p_lonely_child_extension > 0 and config.lonely_children_count > 1:
        # Prompts (user messages) with a reply or so get their siblings first: branches to rank.
        lonely = [c for c in shuffled if c.role == USER and 0 < c.children < config.lonely_children_count]
        if lonely and rng.random() < config.p_lonely_child_extension:
            shuffled = lonely + [c for c in shuffled if c not in lonely]
    return shuffled


def _hand_out(
    category: str,
    role: str | None,
    target: int | None,
    available: Availability,
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    rng: random.Random,
    lang: str | None,
) -> Task | None:
    expires_at = now + _lease(config)
    if category == PROMPT:
        if available.prompts <= 0 or target is not None:
            return None
        project_lock(project)
        if rows_lock() and prompt_room(config, project_counts(project, now)) <= 0:
            return None
        return Task.objects.create(
            project=project, user=user, type=Task.Type.INITIAL_PROMPT, created_at=now, expires_at=expires_at
        )
    candidates = [
        c
        for c in available.by_category.get(category, [])
        if (role is None or c.role == role) and (target is None or c.pk == target)
    ]
    for candidate in _order(category, candidates, config, rng)[:MAX_TRIES]:
        if not _take(category, candidate, project, user, config, now, lang):
            continue
        task_type = TYPE_OF[(category, candidate.role)]
        return Task.objects.create(
            project=project,
            user=user,
            type=task_type,
            tree_id=candidate.tree_id,
            message_id=candidate.pk,
            payload=_payload(category, candidate, config, rng),
            created_at=now,
            expires_at=expires_at,
        )
    return None


def _take(
    category: str,
    candidate: Candidate,
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    lang: str | None,
) -> bool:
    """Lock the candidate's row (skipping it if someone holds it) and check, in a fresh
    statement, that it still has room: the list it came from may be stale by now."""
    if not rows_lock():
        return True  # SQLite: the transaction has held the whole database since the list was read
    if category == REPLY:
        # A reply grows the whole tree (its goal size): the tree row is the lock.
        if tree_lock(candidate.tree_id, skip_locked=True) is None:
            return False
    elif message_lock(candidate.pk, skip_locked=True) is None:
        return False
    return _has_room(category, candidate.pk, project, user, config, now, lang, holder=None)


def _has_room(
    category: str,
    target_id: int | None,
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    lang: str | None = None,
    *,
    holder: Task | None,
) -> bool:
    if category == PROMPT:
        # An expired lease holds no place: the count without it is the count.
        return prompt_room(config, project_counts(project, now)) > 0
    if category in (LABEL_PROMPT, LABEL_REPLY):
        found = label_candidates(
            project,
            user,
            config,
            now,
            root=category == LABEL_PROMPT,
            lang=lang,
            holder=holder,
            target=target_id,
        )
    elif category == REPLY:
        found = reply_candidates(project, user, config, now, lang=lang, holder=holder, target=target_id)
    else:
        found = rank_candidates(project, user, config, now, lang=lang, holder=holder, target=target_id)
    return bool(found)


def _payload(
    category: str, candidate: Candidate, config: WorkflowConfig, rng: random.Random
) -> dict[str, Any]:
    """What the task shows, fixed now: the label mode and labels, or the replies in a shuffled order.

    A review is in full mode with its type's ``p_full_labeling_review_*``, whatever way it
    was asked for (Open-Assistant offered the simple mode for replies only to "random"
    requests, and for prompts always).
    """
    if category in (LABEL_PROMPT, LABEL_REPLY):
        root = category == LABEL_PROMPT
        task_type = TYPE_OF[(category, candidate.role)]
        suffix = {
            Task.Type.LABEL_INITIAL_PROMPT: "initial_prompt",
            Task.Type.LABEL_ASSISTANT_REPLY: "assistant_reply",
            Task.Type.LABEL_PROMPTER_REPLY: "prompter_reply",
        }[task_type]
        p_full = {
            "initial_prompt": config.p_full_labeling_review_prompt,
            "assistant_reply": config.p_full_labeling_review_reply_assistant,
            "prompter_reply": config.p_full_labeling_review_reply_prompter,
        }[suffix]
        mode = label_vocabulary.FULL if rng.random() < p_full else label_vocabulary.SIMPLE
        mandatory = list(getattr(config, f"mandatory_labels_{suffix}"))
        shown = label_vocabulary.shown_labels(
            mode=mode, valid=getattr(config, f"labels_{suffix}"), mandatory=mandatory, reply=not root
        )
        return {"mode": mode, "labels": shown, "mandatory": mandatory}
    if category == RANK:
        replies = list(
            Message.objects.filter(
                tree_id=candidate.tree_id,
                parent_id=candidate.pk,
                role=REPLY_ROLE[candidate.role],
                review_result=True,
                deleted=False,
            ).values_list("external_id", "synthetic")
        )
        rng.shuffle(replies)
        return {
            "replies": [external_id for external_id, _ in replies],
            # As Open-Assistant: say which replies are a model's only when all of them are.
            "reveal_synthetic": all(synthetic for _, synthetic in replies),
        }
    return {}


def task_audit(action: str, task: Task, project: Project, user: AbstractBaseUser, **details: Any) -> None:
    """Log what ``user`` did with ``task`` (the task's type is always among the details)."""
    audit_record(
        action,
        target=task,
        target_repr=f"{task.type} #{task.pk}",
        scope=project.name,
        details={"type": task.type, **details},
        actor=user,
    )


# -- acknowledge, skip ------------------------------------------------------------------------


def task_locked(project: Project, task_id: int, user: AbstractBaseUser) -> Task:
    """``user``'s task ``task_id`` in ``project``, locked; TaskRefused (404) for anyone else's."""
    try:
        task = Task.objects.select_for_update().get(pk=task_id)
    except Task.DoesNotExist:
        task = None
    if task is None or task.user_id != user.pk or task.project_id != project.pk:
        raise TaskRefused("not_found", "no such task of yours in this project", status=404)
    return task


def task_check_open(task: Task) -> None:
    """TaskRefused unless the task is still the holder's to do (not done, skipped or expired)."""
    if task.status == DONE:
        raise TaskRefused("task_done", "you already submitted this task")
    if task.status == SKIPPED:
        raise TaskRefused("task_skipped", "you skipped this task")
    if task.status == EXPIRED:
        raise TaskRefused(
            "task_expired", "your time on this task ran out and you have moved on; ask for a new task"
        )


def _lock_target(task: Task, project: Project) -> None:
    """Take the locks a task's place is counted under (see ``locks`` for their order)."""
    category = KINDS[task.type].category
    if category == PROMPT:
        project_lock(project)
        return
    tree_lock(task.tree_id)
    if category != REPLY:
        message_lock(task.message_id)


def task_reclaim(task: Task, project: Project, config: WorkflowConfig, now: datetime) -> None:
    """Keep a task whose lease ran out if its place is still free (the caller holds its locks)."""
    category = KINDS[task.type].category
    if not _has_room(category, task.message_id, project, task.user, config, now, holder=task):
        raise TaskRefused(
            "lease_expired",
            "your time on this task ran out and others have done the work it held a place for; "
            "ask for a new task",
        )


@transaction.atomic
def task_ack(*, project: Project, task_id: int, user: AbstractBaseUser, now: datetime | None = None) -> Task:
    """The person has the task in front of them: note it and renew the lease.

    A lease that ran out is renewed only if the task's place is still free.
    """
    config = workflow_config(project)
    now = now or timezone.now()
    task = task_locked(project, task_id, user)
    task_check_open(task)
    if task.lease_expired(now):
        _lock_target(task, project)
        task_reclaim(task, project, config, now)
    task.acked_at = task.acked_at or now
    task.expires_at = now + _lease(config)
    task.save(update_fields=["acked_at", "expires_at"])
    task_audit("task.ack", task, project, user)
    return task


def task_nack(
    *,
    project: Project,
    task_id: int,
    user: AbstractBaseUser,
    reason: str = "",
    dont_show_again: bool = True,
    now: datetime | None = None,
) -> Task:
    """Give the task back. With ``dont_show_again`` (the default) its target is never offered
    to this person again, and enough people skipping one message's reply halts its tree
    (``auto_mod_max_skip_reply``)."""
    config = workflow_config(project)
    now = now or timezone.now()
    with transaction.atomic():
        task = task_locked(project, task_id, user)
        task_check_open(task)
        task.status = SKIPPED
        task.reason = (reason or "")[:500]
        task.dont_show_again = dont_show_again
        task.done_at = now
        task.save(update_fields=["status", "reason", "dont_show_again", "done_at"])
        task_audit("task.skip", task, project, user, reason=task.reason, dont_show_again=dont_show_again)
        if KINDS[task.type].category == REPLY and dont_show_again and config.auto_mod_enabled:
            skipped = Task.objects.filter(
                message_id=task.message_id, type__in=TYPES_OF[REPLY], status=SKIPPED, dont_show_again=True
            ).count()
            if skipped >= config.auto_mod_max_skip_reply:
                tree = tree_lock(task.tree_id)
                if tree is not None and tree.state in (INITIAL_PROMPT_REVIEW, GROWING):
                    tree_enter(tree, lifecycle.HALT, now)
    return task
