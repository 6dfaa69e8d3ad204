"""How fast and how much: requests per minute across processes, requests at once within
one, and a run's budget of tokens and money.

Requests per minute are kept by spacing: each request reserves the endpoint's next free
slot (``EndpointPace``, one short transaction) and waits for it, so any number of worker
processes on any number of machines stay within the limit together. Requests at once are
counted per process (a semaphore per endpoint): a job runs its requests in threads up to
the endpoint's ``max_concurrency``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from evaluation.llm.models import EndpointPace, ModelEndpoint
from evaluation.llm.writes import writes_serialized


def pace_reserve(endpoint: ModelEndpoint) -> float:
    """Reserve the endpoint's next request slot; the seconds to wait for it (0 without a limit)."""
    if not endpoint.requests_per_minute:
        return 0.0
    interval = timedelta(seconds=60.0 / endpoint.requests_per_minute)
    with writes_serialized(), transaction.atomic():
        pace, _ = EndpointPace.objects.select_for_update().get_or_create(endpoint_id=endpoint.pk)
        now = timezone.now()
        slot = max(now, pace.next_at)
        pace.next_at = slot + interval
        pace.save(update_fields=["next_at"])
    return max(0.0, (slot - now).total_seconds())


def pace_wait(endpoint: ModelEndpoint) -> None:
    """Wait for the endpoint's next request slot."""
    wait = pace_reserve(endpoint)
    if wait > 0:
        time.sleep(wait)


_semaphores: dict[int, tuple[int, threading.BoundedSemaphore]] = {}
_semaphores_lock = threading.Lock()


@contextmanager
def concurrency_slot(endpoint: ModelEndpoint) -> Iterator[None]:
    """Hold one of the endpoint's ``max_concurrency`` places in this process."""
    size = max(1, endpoint.max_concurrency)
    with _semaphores_lock:
        known = _semaphores.get(endpoint.pk)
        if known is None or known[0] != size:
            known = (size, threading.BoundedSemaphore(size))
            _semaphores[endpoint.pk] = known
        semaphore = known[1]
    with semaphore:
        yield


class BudgetExhausted(Exception):
    """A run has spent what it was allowed."""


@dataclass
class Budget:
    """What a run may spend: tokens (prompt and completion together) and money (at the
    endpoint's prices); ``None`` is no limit. Thread-safe: a run's threads share one."""

    max_tokens: int | None = None
    max_cost: Decimal | None = None
    tokens: int = 0
    cost: Decimal = Decimal(0)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def check(self) -> None:
        """Raise ``BudgetExhausted`` when nothing is left for another request."""
        with self._lock:
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                raise BudgetExhausted(f"the run used its {self.max_tokens:,} tokens ({self.tokens:,} used)")
            if self.max_cost is not None and self.cost >= self.max_cost:
                raise BudgetExhausted(f"the run spent its budget of {self.max_cost} ({self.cost:.4f} spent)")

    def spend(self, tokens: int, cost: Decimal | None) -> None:
        with self._lock:
            self.tokens += tokens
            if cost is not None:
                self.cost += cost
