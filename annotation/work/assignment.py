"""Handing out items: who gets which tree next, under the project's overlap.

Every hand-out runs in one transaction that locks the chosen item's row. On
PostgreSQL the candidates are read with ``FOR UPDATE SKIP LOCKED``, so
concurrent annotators each take a different unlocked item instead of queuing
on the same one, and the overlap check happens under the lock. On SQLite the
transaction holds the database's write lock from its start (``IMMEDIATE``),
which serialises hand-outs outright.

Lock order, everywhere: the person's user row, then assignments, then items,
except a fresh pick, which locks an item and then inserts a new assignment (an
insert waits on no one). Every hand-out locks the person's own user row first
(FOR NO KEY UPDATE, which inserts referring to the user do not wait on): what
comes next reads what they hold and decides on it (the lease they hold, their
quota), so two requests of theirs at once (two tabs) must take turns, or each
would find nothing held and lease an item of its own. Other people's hand-outs
never wait on it.

Gold checks and training (``annotation.quality``) come before regular work
(``gold_pick``). When a gold item is due is decided by counting, not by
chance, so that it is the same on every run: the annotator's (n+1)-th item is
gold when fewer than ⌊(n+1) · rate⌋ of their items so far were — one in ten
at a rate of 0.1, evenly spread, as Potato's ``frequency`` does.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils import timezone

from annotation.models import Annotation, AnnotatorProgress, Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.quality.training import FAILED, PASSED, training_status
from annotation.schemes.tree import TreeAnnotation
from trees import sql
from trees.audit import audit_record
from trees.models import ConversationTree
from trees.selectors import tree_shape

WORK, GOLD, TRAINING = Assignment.Kind.WORK, Assignment.Kind.GOLD, Assignment.Kind.TRAINING
LEASED, SUBMITTED, SKIPPED, EXPIRED = (
    Assignment.Status.LEASED,
    Assignment.Status.SUBMITTED,
    Assignment.Status.SKIPPED,
    Assignment.Status.EXPIRED,
)


class NoItemAvailable(Exception):
    """Nothing to hand out; ``reason`` says why (``quota``, ``done``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def leases_reclaim(project: Project, now: datetime, *, person: AbstractBaseUser | None = None) -> int:
    """Mark expired leases and free their places; returns how many expired.

    Rows another transaction is reclaiming are skipped, so no lease is counted back twice.
    On PostgreSQL a hand-out runs this at most every ``LEASE_RECLAIM_SECONDS``, in the
    statement that takes the ``person``'s lock first (``_person_lock``), so a hand-out costs
    as many statements whether it sweeps or not, whether leases expired or not
    (``bench/annotate_page.py`` counts them). On SQLite every hand-out runs it: one statement
    in process, and one more to free the places when some expired.
    """
    assignments, items = sql.table(Assignment), sql.table(ProjectItem)
    overlap = project_config(project).assignment.annotations_per_item
    # The status written out: a generic plan then knows how few rows have it (a parameter's
    # share was guessed from the column's distinct values: all of them, once every row was
    # submitted, and the table was read whole).
    expired_params = [project.pk, sql.value(Assignment, "lease_expires_at", now)]
    # Gold checks and training never held a place in their item's overlap (annotation.quality.gold).
    if connection.vendor == "postgresql":
        # With a person, their row is locked first: the candidates' scan waits on that lock (a
        # one-time filter, read before any row), so the lock order holds (the module's docstring).
        people = sql.table(get_user_model())
        locked, lock_params = (
            (f"person AS (SELECT id FROM {people} WHERE id = %s FOR NO KEY UPDATE), ", [person.pk])
            if person is not None
            else ("", [])
        )
        row = sql.fetch_one(
            # The expired rows' keys as an array: each is then found by its key, never by a join
            # a generic plan might make over the whole table (tests/annotation/work/test_plans.py).
            f"WITH {locked}marked AS (UPDATE {assignments} SET status = %s, updated_at = %s "
            f"WHERE id = ANY(ARRAY(SELECT id FROM {assignments} WHERE "
            f"{'EXISTS (SELECT 1 FROM person) AND ' if person is not None else ''}project_id = %s "
            f"AND status = '{LEASED}' AND lease_expires_at < %s FOR UPDATE SKIP LOCKED)) "
            "RETURNING tree_id, kind), "
            "freed AS (SELECT tree_id, COUNT(*) AS places FROM marked WHERE kind = %s GROUP BY tree_id), "
            f"changed AS (UPDATE {items} item SET active_count = item.active_count - freed.places, "
            "is_full = item.active_count - freed.places >= %s FROM freed "
            "WHERE item.project_id = %s AND item.tree_id = freed.tree_id RETURNING 1) "
            f"SELECT {'(SELECT COUNT(*) FROM person), ' if person is not None else ''}"
            "(SELECT COUNT(*) FROM marked), (SELECT COUNT(*) FROM changed)",
            [*lock_params, EXPIRED, now, *expired_params, WORK, overlap, project.pk],
        )
        return row[-2]
    expired = sql.fetch_all(
        f"UPDATE {assignments} SET status = %s, updated_at = %s "
        f"WHERE project_id = %s AND status = '{LEASED}' AND lease_expires_at < %s RETURNING tree_id, kind",
        [EXPIRED, sql.value(Assignment, "updated_at", now), *expired_params],
    )
    freed = Counter(tree_id for tree_id, kind in expired if kind == WORK)
    if freed:
        cases = " ".join("WHEN %s THEN %s" for _ in freed)
        places = [value for pair in freed.items() for value in pair]
        change = f"(CASE tree_id {cases} END)"
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {items} SET active_count = active_count - {change}, "
                f"is_full = active_count - {change} >= %s "
                f"WHERE project_id = %s AND tree_id IN ({', '.join(['%s'] * len(freed))})",
                [*places, *places, overlap, project.pk, *freed],
            )
    return len(expired)


@dataclass(frozen=True)
class Lease:
    """What ``item_lease`` hands out: the assignment with its tree loaded, and the answers it
    starts with when they are known without reading them (a fresh lease of an item that
    needs no drafts starts with none); None when they must be read."""

    assignment: Assignment
    answers: dict[str, Any] | None


# When each project's expired leases are next looked for, per process (time.monotonic()).
_reclaim_due_at: dict[int, float] = {}


def _reclaim_due(project: Project) -> bool:
    """Whether this hand-out looks for expired leases: on PostgreSQL at most every
    ``settings.LEASE_RECLAIM_SECONDS`` per project and process. Leases run for minutes, so a
    second's delay frees nobody's place noticeably later, and most hand-outs skip the sweep's
    work (its statement is the person's lock's, whichever it is). On SQLite, every hand-out:
    its sweep is a statement of its own, which must not come and go (bench/annotate_page.py
    counts them), and costs little in process."""
    seconds = settings.LEASE_RECLAIM_SECONDS
    if seconds <= 0 or not connection.features.has_select_for_update:
        return True  # SQLite: every hand-out (see ``leases_reclaim``)
    moment = time.monotonic()
    if _reclaim_due_at.get(project.pk, 0.0) > moment:
        return False
    _reclaim_due_at[project.pk] = moment + seconds
    return True


def item_next(*, project: Project, user: AbstractBaseUser, now: datetime | None = None) -> Assignment:
    """Lease the next item for ``user`` (or give back the one they hold), with its tree.

    Raises NoItemAvailable when the user's quota is reached or no item has
    room left for them.
    """
    return item_lease(project=project, user=user, now=now).assignment


def item_lease(*, project: Project, user: AbstractBaseUser, now: datetime | None = None) -> Lease:
    """``item_next``, telling also whether the item starts with no answers (saving the API's
    next-item response a read)."""
    # A new lease and its log entry are one statement (``sql.together``).
    with transaction.atomic(), sql.together():
        moment = now or timezone.now()
        assignment, answers = _item_next(project, user, moment)
        if not Assignment.tree.is_cached(assignment):  # a fresh pick comes with its tree
            tree_columns = sql.columns(ConversationTree, "tree")
            row = sql.fetch_one(
                f"SELECT {tree_columns.sql} FROM {sql.table(ConversationTree)} tree WHERE tree.id = %s",
                [assignment.tree_id],
            )
            assignment.tree = tree_columns.load(row)
        if assignment.leased_at == moment:  # a new lease, not the one they held (renewed)
            audit_record("assignment.lease", target=assignment.tree, scope=project.name, actor=user)
    return Lease(assignment, answers)


def _person_lock(user: AbstractBaseUser) -> None:
    """Lock ``user``'s row until the hand-out ends: their requests take turns (see the module's
    docstring). One statement written out (``trees.sql``); nothing on SQLite, whose
    transaction already holds the write lock."""
    if connection.features.has_select_for_update:
        people = sql.table(get_user_model())
        sql.fetch_one(f"SELECT 1 FROM {people} WHERE id = %s FOR NO KEY UPDATE", [user.pk])


def _item_next(
    project: Project, user: AbstractBaseUser, now: datetime
) -> tuple[Assignment, dict[str, Any] | None]:
    full_config = project_config(project)
    config = full_config.assignment
    lease = timedelta(minutes=config.lease_minutes)
    if _reclaim_due(project):
        # On PostgreSQL in the statement that locks the person first; SQLite has no row locks.
        leases_reclaim(project, now, person=user if connection.features.has_select_for_update else None)
    else:
        _person_lock(user)

    tree = None
    if config.max_items_per_user is None and not full_config.quality.enabled:
        # Most hand-outs: no quota, gold checks or training to reckon with, and an annotator
        # who holds nothing here, which the taking statement checks itself (one read fewer).
        tree = _take_open_item(project, user, config.annotations_per_item, config.order, unless_holding=True)
    if tree is None:
        held = _held_or_due(project, user, now, config, lease)
        if held is not None:
            return held
        tree = _take_open_item(project, user, config.annotations_per_item, config.order)
    if tree is None:
        raise NoItemAvailable("done", "no items are waiting for you in this project right now")
    assignment = _lease_new(project, user, tree.pk, now, lease)
    assignment.tree = tree
    # The user never had this item, so they have no answers to it but the drafts started now.
    return assignment, ({} if not _start_drafts(project, assignment, now) else None)


def _lease_new(
    project: Project,
    user: AbstractBaseUser,
    tree_id: int,
    now: datetime,
    lease: timedelta,
    kind: str = Assignment.Kind.WORK,
) -> Assignment:
    """A new lease of ``tree_id`` (its key set at the end of the transaction's ``sql.together``)."""
    (assignment,) = sql.insert(
        [
            Assignment(
                project=project,
                tree_id=tree_id,
                user=user,
                kind=kind,
                status=LEASED,
                leased_at=now,
                lease_expires_at=now + lease,
                updated_at=now,
            )
        ]
    )
    return assignment


def _held_or_due(
    project: Project, user: AbstractBaseUser, now: datetime, config: Any, lease: timedelta
) -> tuple[Assignment, dict[str, Any] | None] | None:
    """What comes before new work: the lease the user holds, the work they lost to an expired
    lease, a gold check or training item when due (raising NoItemAvailable past their quota).
    None when it is new work's turn."""
    # The lease they hold, else the work they lost to an expired lease: one read of both, the
    # held lease first (work a reviewer sent back before the rest).
    assignment_columns = sql.columns(Assignment, "mine")
    own = [
        assignment_columns.load(row)
        for row in sql.fetch_all(
            # The statuses written out: the plan PostgreSQL keeps for the prepared statement
            # can then use the index of exactly these (models.Assignment, assignment_held).
            f"SELECT {assignment_columns.sql} FROM {sql.table(Assignment)} mine "
            f"WHERE mine.project_id = %s AND mine.user_id = %s AND mine.status IN ('{LEASED}', '{EXPIRED}') "
            "ORDER BY CASE WHEN mine.status = %s THEN 0 ELSE 1 END, "
            "CASE WHEN mine.review_status = %s THEN 0 ELSE 1 END, mine.leased_at" + sql.lock(),
            [project.pk, user.pk, LEASED, Assignment.ReviewStatus.REJECTED],
        )
    ]
    if own and own[0].status == LEASED:
        current = own[0]
        current.lease_expires_at = now + lease
        sql.update(current, ["lease_expires_at"])  # with the transaction's closing writes
        return current, None

    if config.max_items_per_user is not None:
        # Counted under the person's lock (``_person_lock``): two tabs cannot pass it twice. Their
        # submitted items are kept (AnnotatorProgress); the leases they hold are a few rows of
        # the index of held work (models.Assignment, assignment_held): one statement, whatever
        # their history.
        (taken,) = sql.fetch_one(
            f"SELECT COALESCE((SELECT submitted FROM {sql.table(AnnotatorProgress)} "
            "WHERE project_id = %s AND user_id = %s), 0) + "
            f"(SELECT COUNT(*) FROM {sql.table(Assignment)} WHERE project_id = %s AND user_id = %s "
            f"AND status IN ('{LEASED}', '{EXPIRED}') AND status = '{LEASED}' AND kind <> '{TRAINING}')",
            [project.pk, user.pk, project.pk, user.pk],
        )
        if taken >= config.max_items_per_user:
            raise NoItemAvailable(
                "quota", f"you have done your {config.max_items_per_user} items in this project — thank you"
            )

    # Work the user started and lost to an expired lease comes back first, if it still has room.
    for assignment in own:
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
                items = ProjectItem.objects.filter(pk=item.pk)
                items.places_change(overlap=config.annotations_per_item, active=1)
            assignment.status, assignment.leased_at = LEASED, now
            assignment.lease_expires_at, assignment.updated_at = now + lease, now
            assignment.save(update_fields=["status", "leased_at", "lease_expires_at", "updated_at"])
            return assignment, None

    # -- gold checks and training (annotation.quality.gold): handed out outside the overlap, when due --
    pick = gold_pick(project=project, user=user)
    if pick is not None:
        kind, tree_id = pick
        assignment = _lease_new(project, user, tree_id, now, lease, kind)
        _start_drafts(project, assignment, now)
        return assignment, None
    # -- end of gold checks and training --
    return None


# The order items are handed out in, by ``assignment.order`` (ties broken by tree, so that it
# is total); each has an index on the project's items that walks it (annotation.models). The
# orders with a cursor name the columns an item's place in them is (see ``_take_open_item``).
ORDER_BY = {
    "random": "item.shuffle_key, item.tree_id",
    "fewest_annotations_first": "item.submitted_count, item.active_count, item.tree_id",
    "sequential": "item.tree_id",
}
CURSOR = {
    "random": ("item.shuffle_key", "item.tree_id"),
    "sequential": ("item.tree_id",),
}


def _take_open_item(
    project: Project, user: AbstractBaseUser, overlap: int, order: str, *, unless_holding: bool = False
) -> ConversationTree | None:
    """Take a place in the next item, in ``order``, with room under ``overlap`` that ``user``
    never had; returns its tree (None when there is none, or ``unless_holding`` when the user
    holds a lease or lost one to expiry here). One statement: the hot path of the hand-out,
    written as SQL so that it costs one round trip and no query building (bench/scale.py).
    On PostgreSQL the same statement returns the tree (the taking UPDATE a ``WITH`` of the
    tree's read: one statement fewer per hand-out, page_cycle's submit cycle); SQLite allows
    no UPDATE in a ``WITH``, and reads it in a second statement.

    In the orders with a cursor (``CURSOR``) each annotator walks on from the item they last
    took, so the walk never passes the items they already had (with an overlap above one,
    those stay open, and a walk from the start passed all of them: 7.5 ms at 8,000 done). A
    new annotator in random order starts at a random point, which also spreads concurrent
    annotators over the project. Past the end, the walk starts again from the beginning, for
    items that opened again (expired leases). Each part is one index range: the planner has
    one good plan whatever the statistics (tests/annotation/work/test_plans.py).

    On PostgreSQL the candidate is locked with SKIP LOCKED, so concurrent hand-outs each take
    a different item, and the overlap is checked again on the locked row; on SQLite the
    transaction already holds the write lock.
    """
    items, assignments = sql.table(ProjectItem), sql.table(Assignment)
    # Checked once for the statement; the statuses written out for the index of exactly those
    # (models.Assignment, assignment_held), as in the read of held leases.
    holding = (
        f"AND NOT EXISTS (SELECT 1 FROM {assignments} held WHERE held.project_id = %s "
        f"AND held.user_id = %s AND held.status IN ('{LEASED}', '{EXPIRED}')) "
        if unless_holding
        else ""
    )
    # The conditions of the orders' partial indexes (models.OPEN), then the overlap itself,
    # which is_full follows (``ProjectItemQuerySet.places_change`` in SQL).
    candidate = (
        f"SELECT item.id FROM {items} item WHERE item.project_id = %s AND NOT item.is_gold "
        f"AND NOT item.is_full AND item.active_count < %s {holding}"
        f"AND NOT EXISTS (SELECT 1 FROM {assignments} mine "
        f"WHERE mine.project_id = %s AND mine.user_id = %s AND mine.tree_id = item.tree_id{sql.per_row()}) "
    )
    candidate_params = [
        project.pk,
        overlap,
        *([project.pk, user.pk] if unless_holding else []),
        project.pk,
        user.pk,
    ]
    ending = f" ORDER BY {ORDER_BY[order]} LIMIT 1{sql.lock(skip_locked=True)}"
    # The walks tried in turn, each (its SQL, its parameters): the first that finds an item wins.
    walks: list[tuple[str, list[Any]]] = []
    cursor = CURSOR.get(order)
    if cursor is not None:
        place = f"({', '.join(cursor)})" if len(cursor) > 1 else cursor[0]
        # Where the annotator's latest work is, in the order (models.Assignment, assignment_latest).
        latest = (
            f"SELECT {', '.join(cursor)} FROM {assignments} latest JOIN {items} item "
            "ON item.project_id = latest.project_id AND item.tree_id = latest.tree_id "
            f"WHERE latest.project_id = %s AND latest.user_id = %s AND latest.kind = '{WORK}' "
            "ORDER BY latest.leased_at DESC, latest.id DESC LIMIT 1"
        )
        walks.append(
            (f"{candidate}AND {place} > ({latest}){ending}", [*candidate_params, project.pk, user.pk])
        )
        if order == "random":
            # Nothing after their latest work, or none yet: on from a random point.
            walks.append((f"{candidate}AND {place} > (%s, 0){ending}", [*candidate_params, random.random()]))
    walks.append((candidate + ending, candidate_params))
    chosen = ", ".join(f"({walk})" for walk, _ in walks)
    take = (
        f"UPDATE {items} SET active_count = active_count + 1, is_full = active_count + 1 >= %s "
        f"WHERE id = {f'COALESCE({chosen})' if len(walks) > 1 else chosen} RETURNING tree_id"
    )
    params = [overlap, *(param for _, walk_params in walks for param in walk_params)]
    tree_columns, trees = sql.columns(ConversationTree, "tree"), sql.table(ConversationTree)
    if connection.vendor == "postgresql":
        row = sql.fetch_one(
            f"WITH taken AS ({take}) SELECT {tree_columns.sql} FROM taken JOIN {trees} tree "
            "ON tree.id = taken.tree_id",
            params,
        )
        return tree_columns.load(row) if row else None
    row = sql.fetch_one(take, params)
    if row is None:
        return None
    row = sql.fetch_one(f"SELECT {tree_columns.sql} FROM {trees} tree WHERE tree.id = %s", [row[0]])
    return tree_columns.load(row)


def _start_drafts(project: Project, assignment: Assignment, now: datetime) -> bool:
    """Fix what must not change between visits: the shuffled order of compared siblings.
    Returns whether the item needed any."""
    schemes = [
        scheme
        for scheme in project_config(project).schemes
        if isinstance(scheme, TreeAnnotation) and scheme.comparison_enabled
    ]
    if not schemes:
        return False
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
    return True


# -- gold checks and training in the hand-out -------------------------------------------------


def gold_pick(*, project: Project, user: AbstractBaseUser) -> tuple[str, int] | None:
    """The kind and tree of the gold item ``user`` gets next, or None for regular work.

    Training comes first while it is on and not passed; an annotator who
    failed it gets nothing more. Then a gold item when one is due. At most
    three queries: the training's state, the gold count, the item.
    """
    quality = project_config(project).quality
    if not quality.enabled:
        return None
    if quality.training.enabled:
        status = training_status(project=project, user=user, training=quality.training)
        if status.state == FAILED:
            raise NoItemAvailable(
                "training_failed", "you did not pass this project's training; its managers can tell you more"
            )
        if status.state != PASSED:
            tree_id = _unseen_gold(project, user, ("tree_id",))
            if tree_id is None:
                raise NoItemAvailable(
                    "training", "the training is not ready yet (too few gold items); try again later"
                )
            return TRAINING, tree_id
    if quality.gold_rate > 0 and _gold_due(project, user, quality.gold_rate):
        tree_id = _unseen_gold(project, user, ("shuffle_key", "tree_id"))
        if tree_id is not None:
            return GOLD, tree_id
    return None


def _gold_due(project: Project, user: AbstractBaseUser, rate: float) -> bool:
    counts = (
        Assignment.objects.filter(project=project, user=user)
        .exclude(kind=TRAINING)
        .aggregate(handed=Count("pk"), gold=Count("pk", filter=Q(kind=GOLD)))
    )
    # The tolerance keeps 10 · 0.1 at 1, not 0.999….
    return counts["gold"] < math.floor((counts["handed"] + 1) * rate + 1e-9)


def _unseen_gold(project: Project, user: AbstractBaseUser, order: tuple[str, ...]) -> int | None:
    seen = Assignment.objects.filter(project=project, user=user, tree_id=OuterRef("tree_id"))
    return (
        ProjectItem.objects.filter(project=project, is_gold=True)
        .filter(~Exists(seen))
        .order_by(*order)
        .values_list("tree_id", flat=True)
        .first()
    )
