"""Query counts that differ between the two databases."""

from __future__ import annotations

from django.db import connection


def closing_writes(count: int) -> int:
    """What ``count`` closing writes of a transaction cost (``trees.sql.together``): one
    statement on PostgreSQL, one each on SQLite."""
    return min(count, 1) if connection.vendor == "postgresql" else count


def row_locks(count: int) -> int:
    """What ``count`` row locks taken on their own (``SELECT ... FOR NO KEY UPDATE``) cost: a
    statement each on PostgreSQL, none on SQLite, whose transaction holds the write lock."""
    return count if connection.vendor == "postgresql" else 0
