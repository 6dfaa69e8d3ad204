"""Query counts that differ between the two databases."""

from __future__ import annotations

from django.db import connection


def closing_writes(count: int) -> int:
    """What ``count`` closing writes of a transaction cost (``trees.sql.together``): one
    statement on PostgreSQL, one each on SQLite."""
    return min(count, 1) if connection.vendor == "postgresql" else count


def taken_tree_read() -> int:
    """What reading a freshly taken item's tree costs: nothing on PostgreSQL, where the statement
    that takes the item returns it (annotation.work.assignment._take_open_item); a statement on
    SQLite, which allows no UPDATE in a WITH."""
    return 0 if connection.vendor == "postgresql" else 1


def row_locks(count: int) -> int:
    """What ``count`` row locks taken on their own (``SELECT ... FOR NO KEY UPDATE``) cost: a
    statement each on PostgreSQL, none on SQLite, whose transaction holds the write lock."""
    return count if connection.vendor == "postgresql" else 0
