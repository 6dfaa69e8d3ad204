"""Model requests in threads: a run sends up to its endpoint's ``max_concurrency`` at once.

Each thread has its own database connection (Django's are per thread); the work done in a
thread closes it when the work ends, so a run leaves no connection open behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from django.db import connections

T = TypeVar("T")
R = TypeVar("R")


def _closing(function: Callable[[T], R]) -> Callable[[T], R]:
    def run(item: T) -> R:
        try:
            return function(item)
        finally:
            connections.close_all()

    return run


def map_in_threads(function: Callable[[T], R], items: Iterable[T], *, workers: int) -> Iterator[R]:
    """``function`` over ``items`` in up to ``workers`` threads; results in the items' order.
    An exception in one is raised when its result is reached (after the rest have run)."""
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="llm") as pool:
        yield from pool.map(_closing(function), items)
