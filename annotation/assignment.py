"""Handing out items: who gets which tree next, under the project's overlap.

Every hand-out runs in one transaction that locks the chosen item's row. On
PostgreSQL the candidates are read with ``FOR UPDATE SKIP LOCKED``, so
concurrent annotators each take a different unlocked item instead of queuing
on the same one, and the overlap check happens under the lock. On SQLite the
transaction holds the database's write lock from its start (``IMMEDIATE``),
which serialises hand-outs outright.

Lock order, everywhere: assignments before items, except a fresh pick, which
locks an item and then inserts a new assignment (an insert waits on no one).
Where a quota is counted, the person's own user row is locked first (FOR NO
KEY UPDATE, which inserts referring to the user do not wait on).
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Case, Exists, F, OuterRef, When
from django.utils import timezone

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.projects import project_config
from annotation.schemes.tree import TreeAnnotation
from trees.audit import Target, audit_record
from trees.models import ConversationTree
from trees.shapes import TreeShape

LEASED, SUBMITTED, SKIPPED, EXPIRED = (
    Assignment.Status.LEASED,
    Assignment.Status.SUBMITTED,
    Assignment.Status.SKIPPED,
    Assignment.Status.EXPIRED,
)


# Review: work a reviewer sent back (held for its annotator: annotation.review) comes back first.
RETURNED_FIRST = Case(When(review_status=Assignment.ReviewStatus.REJECTED, then=0), default=1)


class NoItemAvailable(Exception):
    """Nothing to hand out; ``reason`` says why (``quota``, ``done``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def tree_shape(tree: ConversationTree | int, *, with_texts: bool = False) -> TreeShape:
    """The tree's node ids and parent links, in one query; the messages' texts too
    ``with_texts`` (for schemes that quote them, such as spans)."""
    tree_id = tree if isinstance(tree, int) else tree.pk
    from trees.models import Message

    fields = ["external_id", "parent__external_id", "position", "role"]
    if with_texts:
        fields.append("text")
    rows = Message.objects.filter(tree_id=tree_id).values_list(*fields)
    return TreeShape.from_rows(rows)


def leases_reclaim(project: Project, now: datetime) -> int:
    """Mark expired leases and free their places; returns how many expired.

    Rows another transaction is reclaiming are skipped, so no lease is
    counted back twice.
    """
    expired = list(
        Assignment.objects.select_for_update(skip_locked=True)
        .filter(project=project, status=LEASED, lease_expires_at__lt=now)
        .values_list("pk", "tree_id", "kind")
    )
    if not expired:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _, _ in expired]).update(status=EXPIRED, updated_at=now)
    # Gold checks and training never held a place in their item's overlap (annotation.gold).
    counted = Counter(tree_id for _, tree_id, kind in expired if kind == Assignment.Kind.WORK)
    for tree_id, count in counted.items():
        ProjectItem.objects.filter(project=project, tree_id=tree_id).update(
            active_count=F("active_count") - count
        )
    return len(expired)


def item_next(*, project: Project, user: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Lease the next item for ``user`` (or give back the one they hold).

    Raises NoItemAvailable when the user's quota is reached or no item has
    room left for them.
    """
    for attempt in range(3):
        try:
            with transaction.atomic():
                moment = now or timezone.now()
                assignment = _item_next(project, user, moment)
                if assignment.leased_at == moment:  # a new lease, not the one they held (renewed)
                    target = Target.row(ConversationTree, assignment.tree_id, "external_id")
                    audit_record("assignment.lease", target=target, scope=project.name, actor=user)
                return assignment
        except IntegrityError:
            # The same user asked twice at once and both picked one item: ask again.
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _item_next(project: Project, user: AbstractBaseUser, now: datetime) -> Assignment:
    config = project_config(project).assignment
    lease = timedelta(minutes=config.lease_minutes)
    leases_reclaim(project, now)

    current = (
        Assignment.objects.select_for_update()
        .filter(project=project, user=user, status=LEASED)
        .order_by(RETURNED_FIRST, "leased_at")
        .first()
    )
    if current is not None:
        current.lease_expires_at = now + lease
        current.save(update_fields=["lease_expires_at"])
        return current

    if config.max_items_per_user is not None:
        # One person asking twice at once (two tabs) must not pass the count twice: the
        # second request waits on their user row until the first has taken its item.
        list(
            get_user_model()
            .objects.select_for_update(no_key=True)
            .filter(pk=user.pk)
            .values_list("pk", flat=True)
        )
        taken = (
            Assignment.objects.filter(project=project, user=user, status__in=[LEASED, SUBMITTED])
            .exclude(kind=Assignment.Kind.TRAINING)
            .count()
        )
        if taken >= config.max_items_per_user:
            raise NoItemAvailable(
                "quota", f"you have done your {config.max_items_per_user} items in this project — thank you"
            )

    # Work the user started and lost to an expired lease comes back first, if it still has room.
    for assignment in (
        Assignment.objects.select_for_update()
        .filter(project=project, user=user, status=EXPIRED)
        .order_by("leased_at")
    ):
        # Gold checks and training come back whatever their item's overlap: they take no place in it.
        counted = assignment.kind == Assignment.Kind.WORK
        item = (
            ProjectItem.objects.select_for_update(skip_locked=True)
            .filter(project=project, tree_id=assignment.tree_id, active_count__lt=config.annotations_per_item)
            .first()
            if counted
            else None
        )
        if item is not None or not counted:
            if item is not None:
                _take(item)
            assignment.status, assignment.leased_at = LEASED, now
            assignment.lease_expires_at, assignment.updated_at = now + lease, now
            assignment.save(update_fields=["status", "leased_at", "lease_expires_at", "updated_at"])
            return assignment

    # -- gold checks and training (annotation.gold): handed out outside the overlap, when due --
    from annotation.gold import gold_pick  # here: annotation.gold builds on this module

    pick = gold_pick(project=project, user=user)
    if pick is not None:
        kind, tree_id = pick
        assignment = Assignment.objects.create(
            project=project,
            tree_id=tree_id,
            user=user,
            kind=kind,
            status=LEASED,
            leased_at=now,
            lease_expires_at=now + lease,
            updated_at=now,
        )
        _start_drafts(project, assignment, now)
        return assignment
    # -- end of gold checks and training --

    mine = Assignment.objects.filter(project=project, user=user, tree_id=OuterRef("tree_id"))
    candidates = ProjectItem.objects.filter(
        project=project, active_count__lt=config.annotations_per_item, is_gold=False
    ).filter(~Exists(mine))
    if config.order == "random":
        candidates = candidates.order_by("shuffle_key", "tree_id")
    elif config.order == "fewest_annotations_first":
        candidates = candidates.order_by("submitted_count", "active_count", "tree_id")
    else:
        candidates = candidates.order_by("tree_id")
    item = candidates.select_for_update(skip_locked=True, of=("self",)).first()
    if item is None:
        raise NoItemAvailable("done", "no items are waiting for you in this project right now")
    _take(item)
    assignment = Assignment.objects.create(
        project=project,
        tree_id=item.tree_id,
        user=user,
        status=LEASED,
        leased_at=now,
        lease_expires_at=now + lease,
        updated_at=now,
    )
    _start_drafts(project, assignment, now)
    return assignment


def _take(item: ProjectItem) -> None:
    ProjectItem.objects.filter(pk=item.pk).update(active_count=F("active_count") + 1)


def _start_drafts(project: Project, assignment: Assignment, now: datetime) -> None:
    """Fix what must not change between visits: the shuffled order of compared siblings."""
    schemes = [
        scheme
        for scheme in project_config(project).schemes
        if isinstance(scheme, TreeAnnotation) and scheme.comparison_enabled
    ]
    if not schemes:
        return
    shape = tree_shape(assignment.tree_id)
    rng = random.Random()
    Annotation.objects.bulk_create(
        [
            Annotation(
                project=project,
                tree_id=assignment.tree_id,
                user_id=assignment.user_id,
                scheme=scheme.name,
                payload=scheme.initial_payload(shape, rng),
                created_at=now,
                updated_at=now,
            )
            for scheme in schemes
        ],
        ignore_conflicts=True,
    )
