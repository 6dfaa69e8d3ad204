"""Reviewing annotators' submitted work: accept it, or send it back with a comment.

A decision is about one annotator's whole item (their ``Assignment``), at
the version the reviewer saw: work that changed since is not decided on
blindly (``StaleVersion``). The latest decision is kept on the assignment
(``review_status``) and every decision in ``Review``.

Rejecting reopens the item to its annotator. The place it holds in the
item's overlap stays theirs (``active_count`` is unchanged, so nobody new is
handed the item to fill it), but it no longer counts as submitted, and its
answers are drafts again (exports of submitted work leave them out). The
assignment waits, leased without an expiry, until its annotator asks for
work: it comes back to them first, with a fresh lease
(``annotation.work.assignment``). Submitting it again makes it pending review
once more (``annotation.work.submissions``).
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation import permissions
from annotation.models import Annotation, Assignment, ProjectItem, Review
from annotation.projects.counts import annotator_submitted_change, project_counts_forget
from annotation.work.submissions import StaleVersion
from trees.audit import Target, audit_record
from trees.models import ConversationTree

ACCEPTED, REJECTED = Review.Decision.ACCEPTED, Review.Decision.REJECTED
MAX_COMMENT_LENGTH = 10_000


class ReviewRefused(Exception):
    """The decision cannot be taken; ``code`` says why (``forbidden``, ``own_work``, ...)."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.message = message
        self.code = code


def review_decide(
    *,
    reviewer: AbstractBaseUser,
    assignment: Assignment,
    decision: str,
    comment: str = "",
    version: int,
    now: datetime | None = None,
) -> Review:
    """Accept or reject ``assignment``'s submitted work as it was at ``version``.

    Only the project's reviewers and managers decide, never on their own
    work; a rejection says why in ``comment``. Deciding again what was
    already decided on the same work changes nothing (a form sent twice).
    Raises ReviewRefused, or StaleVersion when the work changed since
    ``version``.
    """
    comment = (comment or "").strip()
    if decision not in Review.Decision.values:
        raise ReviewRefused(f'the decision must be "{ACCEPTED}" or "{REJECTED}", not "{decision}"', "invalid")
    if decision == REJECTED and not comment:
        raise ReviewRefused(
            "say what to fix: a rejection needs a comment for the annotator", "comment_required"
        )
    if len(comment) > MAX_COMMENT_LENGTH:
        raise ReviewRefused(f"the comment is too long (at most {MAX_COMMENT_LENGTH:,} characters)", "invalid")
    if not permissions.can_review(reviewer, assignment.project):
        raise ReviewRefused("only the project's reviewers and managers review its work", "forbidden")
    with transaction.atomic():
        current = Assignment.objects.select_for_update().get(pk=assignment.pk)
        # Timed once the lock is held: of two reviewers deciding at once, the later decision
        # is the one with the later time (the item's latest review, as pages show it).
        now = now or timezone.now()
        _check_reviewable(current, reviewer, version)
        if current.review_status == decision:
            latest = current.reviews.first()
            if latest is not None and latest.version == current.version:
                return latest
        review = Review.objects.create(
            assignment=current,
            reviewer=reviewer,
            decision=decision,
            comment=comment,
            version=current.version,
            created_at=now,
        )
        current.review_status = decision
        if decision == REJECTED:
            _reopen(current, now)
        current.save(update_fields=_DECIDED_FIELDS)
        audit_record(
            "annotation.review",
            target=Target.row(ConversationTree, current.tree_id, "external_id"),
            scope=assignment.project.name,
            details={
                "decision": decision,
                "annotator": assignment.user.get_username(),
                "version": review.version,
            },
            actor=reviewer,
        )
    # The caller's object shows the decision too, without reading it back.
    for field in _DECIDED_FIELDS:
        setattr(assignment, field, getattr(current, field))
    return review


_DECIDED_FIELDS = ["review_status", "status", "leased_at", "lease_expires_at", "version", "updated_at"]


def _check_reviewable(assignment: Assignment, reviewer: AbstractBaseUser, version: int) -> None:
    if assignment.user_id == reviewer.pk:
        raise ReviewRefused("you cannot review your own work: another reviewer has to", "own_work")
    if assignment.kind != Assignment.Kind.WORK:
        raise ReviewRefused(
            "gold checks and training are scored against their expected answers, not reviewed", "not_work"
        )
    if assignment.version != version:
        raise StaleVersion(assignment.version)
    if assignment.status != Assignment.Status.SUBMITTED:
        if assignment.review_status == REJECTED:
            why = "it was sent back to its annotator and is not submitted again yet"
        else:
            why = f"it is {assignment.status}"
        raise ReviewRefused(f"only submitted work can be reviewed: {why}", "not_submitted")


def _reopen(assignment: Assignment, now: datetime) -> None:
    """Give the item back to its annotator, keeping their place in its overlap."""
    assignment.status = Assignment.Status.LEASED
    # No expiry until they take it up again: until then nobody else may have the place.
    assignment.leased_at, assignment.lease_expires_at = now, None
    # Their open page is out of date now: a save from it is refused and reloads the item.
    assignment.version += 1
    assignment.updated_at = now
    ProjectItem.objects.filter(project_id=assignment.project_id, tree_id=assignment.tree_id).update(
        submitted_count=F("submitted_count") - 1
    )
    project_counts_forget(assignment.project_id)
    annotator_submitted_change(assignment.project_id, assignment.user_id, -1)
    Annotation.objects.filter(
        project_id=assignment.project_id,
        tree_id=assignment.tree_id,
        user_id=assignment.user_id,
        status=Annotation.Status.SUBMITTED,
    ).update(status=Annotation.Status.DRAFT, version=F("version") + 1, updated_at=now)


__all__ = ["ReviewRefused", "StaleVersion", "review_decide"]
