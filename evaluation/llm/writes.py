"""One writer at a time among a run's threads, on SQLite.

A run's threads each write (the ledger, the pace, the verdicts). PostgreSQL takes them as
they come. SQLite has one writer: a database file queues the others (the busy timeout),
but the in-memory database the test suite runs on shares one cache between connections,
where a second writer fails at once ("database table is locked") instead of waiting. So
on SQLite the writes of this process's threads take turns behind one lock; elsewhere the
lock is not taken.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

_lock = threading.RLock()


@contextmanager
def writes_serialized() -> Iterator[None]:
    """Hold the process's write turn (SQLite only) for the statements inside."""
    if connection.vendor != "sqlite":
        yield
        return
    with _lock:
        yield
