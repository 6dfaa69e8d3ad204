"""The row locks of the collection workflow, in one place and in one order.

Lock order, everywhere (a transaction takes the locks it needs in this
order, never the other way round):

    task row → user row → project row → tree row → message rows → annotation rows

* The tree lock is the ``ConversationTree`` row: its ``state`` is read from
  the locked row itself, so it is never stale, and every change of state
  happens under it. The message lock guards a message's reviews and a
  parent's rankings; the project lock, the prompts wanted and the lottery;
  the user lock, a person's pending tasks.
* Locks are FOR NO KEY UPDATE, so inserting messages and tasks that refer
  to a locked row does not wait on it.
* Hand-outs take tree, message and project locks with SKIP LOCKED and never
  wait while holding one; submissions and moderation wait. So a hand-out
  can never close a cycle of waits, and the others follow the order.

On SQLite there are no row locks: the transaction holds the database's
write lock from its start (``IMMEDIATE``), which serialises everything
outright, and these functions only read.

The locking reads are plain SQL: the lock clauses are the point, and the
ORM would spend more time compiling them than the database runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from annotation.collection.models import CollectedTree
from annotation.models import Project
from trees.models import ConversationTree, Message


def rows_lock() -> bool:
    """Whether the database locks rows (PostgreSQL) rather than itself whole (SQLite)."""
    return connection.features.has_select_for_update


def _for_update(*, skip_locked: bool = False, of: tuple[str, ...] = ()) -> str:
    if not rows_lock():
        return ""
    return " " + connection.ops.for_update_sql(skip_locked=skip_locked, of=of, no_key=True)


def _one(sql: str, params: list) -> tuple | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


@dataclass
class LockedTree:
    """A collected tree under its lock: what moving it needs."""

    pk: int
    external_id: str
    state: str
    project_id: int
    goal_tree_size: int
    project_name: str  # the scope of the audit entries its moves write


def tree_lock(tree_id: int, *, skip_locked: bool = False) -> LockedTree | None:
    """Lock the tree's row; None if it is not a collected tree (or ``skip_locked`` and someone holds it).

    The ``CollectedTree`` row is read, not locked: the limits in it never change.
    """
    quote = connection.ops.quote_name
    row = _one(
        f"SELECT t.id, t.external_id, t.state, c.project_id, c.goal_tree_size, p.name"
        f" FROM {quote(ConversationTree._meta.db_table)} t"
        f" JOIN {quote(CollectedTree._meta.db_table)} c ON c.tree_id = t.id"
        f" JOIN {quote(Project._meta.db_table)} p ON p.id = c.project_id WHERE t.id = %s"
        + _for_update(skip_locked=skip_locked, of=("t",)),
        [tree_id],
    )
    return LockedTree(*row) if row is not None else None


@dataclass
class LockedMessage:
    pk: int
    tree_id: int
    parent_id: int | None
    external_id: str
    role: str
    depth: int
    lang: str | None
    deleted: bool
    review_count: int | None
    review_result: bool | None


_MESSAGE_COLUMNS = (
    "id, tree_id, parent_id, external_id, role, depth, lang, deleted, review_count, review_result"
)


def message_lock(message_id: int, *, skip_locked: bool = False) -> LockedMessage | None:
    """Lock a message's row (its reviews, or the rankings of its replies)."""
    row = _one(
        f"SELECT {_MESSAGE_COLUMNS} FROM {connection.ops.quote_name(Message._meta.db_table)} WHERE id = %s"
        + _for_update(skip_locked=skip_locked),
        [message_id],
    )
    if row is None:
        return None
    values = list(row)
    values[7] = bool(values[7])
    values[9] = None if values[9] is None else bool(values[9])
    return LockedMessage(*values)


def project_lock(project: Project) -> None:
    """Lock the project's row (the prompts wanted, the lottery)."""
    if rows_lock():
        table = connection.ops.quote_name(Project._meta.db_table)
        _one(f"SELECT id FROM {table} WHERE id = %s" + _for_update(), [project.pk])


def user_lock(user: AbstractBaseUser) -> None:
    """Lock the person's row: two requests of theirs at once (two tabs) queue for the pending limit."""
    if rows_lock():
        table = connection.ops.quote_name(get_user_model()._meta.db_table)
        _one(f"SELECT id FROM {table} WHERE id = %s" + _for_update(), [user.pk])
