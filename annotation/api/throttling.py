"""Rate limits per caller, counted in the database so that every worker and host shares them.

Each scope allows N requests per fixed window (``settings.API_THROTTLE_RATES``:
``600/min`` and the like, ``off`` for none). A request costs one statement:
an upsert that starts a new window or counts one more in the current one and
returns the count, atomically — no read-modify-write race between workers,
as a cache-based sliding log has. Fixed windows let a caller burst to twice
the rate across a window's edge; for a limit meant to stop runaway clients
that is the right trade for one statement per request.

A refused request is a 429 ``{"code": "throttled", "message"}`` with
``Retry-After``.

Anonymous callers are counted by address, and the address is the one
``trees.client_address`` decides (the connection's, unless trusted proxies are
configured) — never a header the caller writes, which they could rotate to
escape the limit and to fill the table with keys. An IPv6 caller counts by its
/64, the block one host is usually given.
"""

from __future__ import annotations

import ipaddress
import random
import time
from typing import Any

from django.conf import settings
from django.db import connection
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from annotation.models import RateWindow
from trees.client_address import client_address

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Windows that ended this long ago are removed now and then, by a request that opens a new one.
PRUNE_AFTER_SECONDS = 86400
PRUNE_CHANCE = 0.001


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"600/min"`` → (600, 60); None, ``""`` or ``"off"`` → no limit."""
    if not rate or rate.strip().lower() in ("off", "none"):
        return None
    count, _, period = rate.partition("/")
    try:
        return int(count), PERIODS[period.strip()[0].lower()]
    except (ValueError, KeyError, IndexError):
        raise ValueError(f'bad rate "{rate}": expected N/sec, N/min, N/hour or N/day') from None


def window_hit(key: str, window_start: int) -> int:
    """Count one request of ``key`` in the window starting at ``window_start``; returns the count."""
    table = connection.ops.quote_name(RateWindow._meta.db_table)
    with connection.cursor() as cursor:
        # PostgreSQL and SQLite (3.35+) both take ON CONFLICT ... RETURNING; the counter
        # restarts at 1 when the window moved on.
        cursor.execute(
            f'INSERT INTO {table} ("key", "window_start", "count") VALUES (%s, %s, 1) '
            f'ON CONFLICT ("key") DO UPDATE SET "count" = CASE '
            f'WHEN {table}."window_start" = excluded."window_start" THEN {table}."count" + 1 ELSE 1 END, '
            f'"window_start" = excluded."window_start" '
            f'RETURNING "count"',
            [key, window_start],
        )
        (count,) = cursor.fetchone()
    if count == 1 and random.random() < PRUNE_CHANCE:
        RateWindow.objects.filter(window_start__lt=window_start - PRUNE_AFTER_SECONDS).delete()
    return count


class WindowThrottle(BaseThrottle):
    """N requests per window for one scope; subclasses say whom they count."""

    scope = ""

    def __init__(self) -> None:
        self.retry_after: float | None = None

    def caller(self, request: Request) -> str | None:
        """Who is counted (None: this throttle does not apply to the request)."""
        raise NotImplementedError

    def allow_request(self, request: Request, view: Any) -> bool:
        rate = parse_rate(settings.API_THROTTLE_RATES.get(self.scope))
        caller = self.caller(request)
        if rate is None or caller is None:
            return True
        limit, period = rate
        now = time.time()
        window_start = int(now // period) * period
        if window_hit(f"{self.scope}:{caller}", window_start) <= limit:
            return True
        self.retry_after = window_start + period - now
        return False

    def wait(self) -> float | None:
        return self.retry_after


class UserThrottle(WindowThrottle):
    scope = "user"

    def caller(self, request: Request) -> str | None:
        return str(request.user.pk) if request.user.is_authenticated else None


class LoopThrottle(UserThrottle):
    """The annotator's loop (next item, read, draft, submit, skip) has a rate of its own."""

    scope = "loop"


class AnonThrottle(WindowThrottle):
    scope = "anon"

    def caller(self, request: Request) -> str | None:
        return None if request.user.is_authenticated else f"ip:{address_key(client_address(request))}"


def address_key(address: str) -> str:
    """What one anonymous caller is: its IPv4 address, or its IPv6 /64 network."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address  # "" when the connection had no address: all such callers count as one
    if parsed.version == 6:
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)
