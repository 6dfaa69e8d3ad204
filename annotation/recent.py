"""What each process remembers for a moment of the rows every API request reads again: the
caller's token with its user, the project with the caller's roles in it.

An annotator's loop sends a request or two a second, each of which would read both anew:
two statements, and three models built, per request: a seventh of the loop's work. They are
kept ``settings.API_AUTH_CACHE_SECONDS`` (1 by default; 0 keeps nothing). The process that
revokes a token or changes a membership or a project forgets at once; the others follow
within those seconds — the time a revoked token or a removed member may still be served.
"""

from __future__ import annotations

import time
from typing import Generic, TypeVar

from django.conf import settings

K = TypeVar("K")
V = TypeVar("V")

# Enough for every live token and project of a large install; past it, the expired go first.
MOST = 10_000


class Recent(Generic[K, V]):
    """Values by key, each kept ``API_AUTH_CACHE_SECONDS`` from when it was read."""

    def __init__(self) -> None:
        self._kept: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | None:
        kept = self._kept.get(key)
        if kept is None or kept[0] <= time.monotonic() or settings.API_AUTH_CACHE_SECONDS <= 0:
            return None
        return kept[1]

    def keep(self, key: K, value: V) -> None:
        seconds = settings.API_AUTH_CACHE_SECONDS
        if seconds <= 0:
            return
        now = time.monotonic()
        if len(self._kept) >= MOST:
            self._kept = {k: kept for k, kept in self._kept.items() if kept[0] > now}
            if len(self._kept) >= MOST:
                self._kept.clear()
        self._kept[key] = (now + seconds, value)

    def forget(self, key: K) -> None:
        self._kept.pop(key, None)

    def forget_all(self) -> None:
        self._kept.clear()
