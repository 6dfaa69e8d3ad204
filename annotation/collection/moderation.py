"""Moderation: halting and resuming trees, soft-deleting a message with its replies (and
undoing it), and reports — the red flags that feed auto-moderation.

The admin and the API call these; who may is ``permissions.can_moderate``
(reports: ``permissions.can_report``). Each takes the tree's lock first
(see ``locks``), then moves the tree on as its facts now imply: deleting
the replies that held up a ranking lets the tree be scored, deleting the
prompt halts the tree.

Auto-moderation, as Open-Assistant's: while a tree is in review or growing,
a prompt with ``auto_mod_red_flags`` reports aborts its tree
(``aborted_low_grade``) and a reply with as many is deleted with its
replies. (Too many people skipping a reply halts the tree: ``tasks.task_nack``.)
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from annotation.collection import lifecycle
from annotation.collection.advance import tree_advance
from annotation.collection.errors import ModerationRefused
from annotation.collection.locks import LockedTree, tree_lock
from annotation.collection.models import CollectedTree, Deletion, Report
from annotation.collection.states import tree_enter
from annotation.models import Project
from annotation.projects.config import project_config
from trees.audit import CURRENT, Target, audit_record
from trees.models import Message
from trees.vocabulary import GROWING, HALTED_BY_MODERATOR, INITIAL_PROMPT_REVIEW


def _locked(project: Project, tree_id: int) -> LockedTree:
    tree = tree_lock(tree_id)
    if tree is None or tree.project_id != project.pk:
        raise ModerationRefused("not_found", "no such tree in this project", status=404)
    return tree


@transaction.atomic
def tree_halt(*, project: Project, tree_id: int, now: datetime | None = None) -> str:
    """Halt the tree: no task is handed out on it until it is resumed. Returns its new state."""
    tree = _locked(project, tree_id)
    if tree.state == HALTED_BY_MODERATOR:
        raise ModerationRefused("already_halted", "this tree is already halted")
    return tree_enter(tree, lifecycle.HALT, now)


@transaction.atomic
def tree_resume(*, project: Project, tree_id: int, now: datetime | None = None) -> str:
    """Resume a halted tree: growing again if it had won the prompt lottery, else back to its
    prompt's review; then on as its messages imply (a full tree goes on to ranking). Returns its state."""
    now = now or timezone.now()
    tree = _locked(project, tree_id)
    if tree.state != HALTED_BY_MODERATOR:
        shown = tree.state.replace("_", " ")
        raise ModerationRefused("not_halted", f"only a halted tree can be resumed; this one is {shown}")
    won = CollectedTree.objects.filter(pk=tree.pk, won_prompt_lottery_at__isnull=False).exists()
    tree_enter(tree, lifecycle.resume_event(won_lottery=won), now)
    tree_advance(tree, project_config(project).workflow, now)
    return tree.state


def _subtree(tree_id: int, message_id: int) -> list[int]:
    """The message and its descendants that are not deleted yet (one query)."""
    children: dict[int, list[int]] = defaultdict(list)
    deleted: set[int] = set()
    for pk, parent_id, is_deleted in (
        Message.objects.filter(tree_id=tree_id).order_by().values_list("pk", "parent_id", "deleted")
    ):
        if parent_id is not None:
            children[parent_id].append(pk)
        if is_deleted:
            deleted.add(pk)
    found, stack = [], [message_id]
    while stack:
        pk = stack.pop()
        if pk not in deleted:
            found.append(pk)
        stack.extend(children[pk])
    return found


def _delete(
    project: Project,
    tree: LockedTree,
    message: Message,
    by: AbstractBaseUser | None,
    reason: str,
    now: datetime,
    *,
    auto: bool = False,
) -> Deletion:
    if message.deleted:
        raise ModerationRefused("already_deleted", "this message is already deleted")
    marked = _subtree(tree.pk, message.pk)
    Message.objects.filter(pk__in=marked).update(deleted=True)
    deletion = Deletion.objects.create(
        project=project,
        tree_id=tree.pk,
        message=message,
        message_ids=marked,
        by=by,
        reason=reason[:500],
        created_at=now,
    )
    audit_record(
        "message.delete",
        target=message,
        target_repr=message.external_id,
        scope=project.name,
        details={"tree": tree.external_id, "messages": len(marked), "reason": deletion.reason, "auto": auto},
        # Auto-moderation acts on its own account, not on that of whoever sent the last report.
        actor=None if auto else by if by is not None else CURRENT,
    )
    if message.parent_id is None and tree.state != HALTED_BY_MODERATOR:
        tree_enter(tree, lifecycle.HALT, now)  # the prompt is gone: nothing can grow or be judged
    else:
        tree_advance(tree, project_config(project).workflow, now)
    return deletion


def _message_of(project: Project, tree_id: int, message_id: int) -> Message:
    message = Message.objects.filter(pk=message_id, tree_id=tree_id).first()
    if message is None:
        raise ModerationRefused("not_found", "no such message in this tree", status=404)
    return message


@transaction.atomic
def message_delete(
    *,
    project: Project,
    message: Message,
    by: AbstractBaseUser | None = None,
    reason: str = "",
    now: datetime | None = None,
) -> Deletion:
    """Soft-delete ``message`` and its replies; the returned deletion can be undone."""
    tree = _locked(project, message.tree_id)
    message = _message_of(project, tree.pk, message.pk)
    return _delete(project, tree, message, by, reason, now or timezone.now())


@transaction.atomic
def deletion_undo(
    *, project: Project, deletion: Deletion, by: AbstractBaseUser | None = None, now: datetime | None = None
) -> Deletion:
    """Restore exactly the messages ``deletion`` marked (not those deleted before or after it)."""
    now = now or timezone.now()
    tree = _locked(project, deletion.tree_id)
    deletion = Deletion.objects.select_for_update().get(pk=deletion.pk)
    if deletion.undone_at is not None:
        raise ModerationRefused("already_undone", "this deletion was already undone")
    Message.objects.filter(pk__in=deletion.message_ids).update(deleted=False)
    deletion.undone_at, deletion.undone_by = now, by
    deletion.save(update_fields=["undone_at", "undone_by"])
    audit_record(
        "message.restore",
        target=Target.row(Message, deletion.message_id, "external_id"),
        scope=project.name,
        details={"tree": tree.external_id, "messages": len(deletion.message_ids), "deletion": deletion.pk},
        actor=by if by is not None else CURRENT,
    )
    tree_advance(tree, project_config(project).workflow, now)
    return deletion


@transaction.atomic
def report_create(
    *,
    project: Project,
    message: Message,
    user: AbstractBaseUser,
    reason: str = "",
    now: datetime | None = None,
) -> Report:
    """Report (red-flag) ``message``; once per person. Feeds auto-moderation."""
    now = now or timezone.now()
    tree = _locked(project, message.tree_id)
    message = _message_of(project, tree.pk, message.pk)
    if message.deleted:
        raise ModerationRefused("message_deleted", "this message was deleted already")
    report, created = Report.objects.get_or_create(
        message=message, user=user, defaults={"project": project, "reason": reason[:2000], "created_at": now}
    )
    if not created:
        raise ModerationRefused("already_reported", "you already reported this message")
    audit_record(
        "message.report",
        target=message,
        target_repr=message.external_id,
        scope=project.name,
        details={"tree": tree.external_id, "reason": report.reason},
        actor=user,
    )
    config = project_config(project).workflow
    if not config.auto_mod_enabled or tree.state not in (INITIAL_PROMPT_REVIEW, GROWING):
        return report
    flags = Report.objects.filter(message=message).count()
    if flags >= config.auto_mod_red_flags:
        if message.parent_id is None:
            tree_enter(tree, lifecycle.RED_FLAGGED, now)
        else:
            _delete(project, tree, message, None, f"auto-moderation: {flags} red flags", now, auto=True)
    return report
