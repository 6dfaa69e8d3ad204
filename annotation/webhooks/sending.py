"""Sending deliveries: a signed POST each, retried with exponential backoff.

A delivery is claimed before it is sent (its next attempt moved past the
request's timeout in one conditional UPDATE), so two senders never send the
same one at once. An answer in 2xx delivers it; anything else (an error, a
timeout, a redirect — never followed) counts an attempt and schedules the
next one ``BRANCHPOINT_WEBHOOK_BACKOFF_SECONDS * 2 ** (attempts - 1)`` later,
until ``BRANCHPOINT_WEBHOOK_MAX_ATTEMPTS``: then it is failed (an admin can
replay it). Only http and https URLs are sent, and when
``BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS`` is set only to those hosts (docs/webhooks.md:
what a webhook URL can reach from the server).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from annotation.webhooks.models import Delivery
from annotation.webhooks.signing import HEADER, signature

PENDING, DELIVERED, FAILED = Delivery.Status.PENDING, Delivery.Status.DELIVERED, Delivery.Status.FAILED
MAX_ERROR_LENGTH = 1000
USER_AGENT = "Branchpoint-Webhooks/1"


def url_problem(url: str) -> str | None:
    """Why ``url`` may not be sent to (None: it may)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "only http and https URLs with a host are sent to"
    allowed = settings.BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS
    if allowed and parts.hostname.lower() not in {host.lower() for host in allowed}:
        return f'"{parts.hostname}" is not in BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS'
    return None


def delivery_body(delivery: Delivery) -> bytes:
    """The bytes POSTed: the payload with the delivery's id (the same on every attempt)."""
    return json.dumps({"id": delivery.pk, **delivery.payload}, separators=(",", ":"), sort_keys=True).encode()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not an instruction: following it could reach another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects())


@dataclass(frozen=True)
class Attempt:
    code: int | None
    error: str


def _post(url: str, body: bytes, headers: dict[str, str]) -> Attempt:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=settings.BRANCHPOINT_WEBHOOK_TIMEOUT_SECONDS) as response:
            return Attempt(response.status, "")
    except urllib.error.HTTPError as error:
        where = f" (to {error.headers.get('Location')}, not followed)" if 300 <= error.code < 400 else ""
        return Attempt(error.code, f"HTTP {error.code}{where}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return Attempt(None, f"{type(error).__name__}: {reason}")


def delivery_send(delivery: Delivery, *, now: datetime | None = None) -> Delivery:
    """One attempt at ``delivery`` (already claimed), its outcome saved."""
    webhook = delivery.webhook
    problem = url_problem(webhook.url)
    if problem is not None:
        attempt = Attempt(None, problem)
    else:
        body = delivery_body(delivery)
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Branchpoint-Event": delivery.event,
            "X-Branchpoint-Delivery": str(delivery.pk),
            HEADER: signature(webhook.secret, body, int(time.time())),
        }
        attempt = _post(webhook.url, body, headers)
    now = now or timezone.now()
    delivery.attempts += 1
    delivery.response_code = attempt.code
    if attempt.code is not None and 200 <= attempt.code < 300:
        delivery.status, delivery.delivered_at, delivery.last_error = DELIVERED, now, ""
    else:
        delivery.last_error = attempt.error[:MAX_ERROR_LENGTH]
        if delivery.attempts >= settings.BRANCHPOINT_WEBHOOK_MAX_ATTEMPTS:
            delivery.status = FAILED
        else:
            delay = settings.BRANCHPOINT_WEBHOOK_BACKOFF_SECONDS * 2 ** (delivery.attempts - 1)
            delivery.next_attempt_at = now + timedelta(seconds=delay)
    delivery.save(
        update_fields=[
            "attempts",
            "response_code",
            "status",
            "delivered_at",
            "last_error",
            "next_attempt_at",
            "updated_at",
        ]
    )
    return delivery


def _claimed(delivery: Delivery, now: datetime) -> bool:
    """Whether this sender took ``delivery`` (no other one did since it was read)."""
    hold = now + timedelta(seconds=settings.BRANCHPOINT_WEBHOOK_TIMEOUT_SECONDS * 2 + 5)
    taken = Delivery.objects.filter(
        pk=delivery.pk, status=PENDING, next_attempt_at=delivery.next_attempt_at
    ).update(next_attempt_at=hold)
    delivery.next_attempt_at = hold
    return taken == 1


def deliveries_send(*, limit: int = 100, ids: Iterable[int] | None = None) -> list[Delivery]:
    """Send up to ``limit`` due pending deliveries (or those of ``ids`` that are pending), oldest first."""
    now = timezone.now()
    due = Delivery.objects.filter(status=PENDING).select_related("webhook").order_by("next_attempt_at", "pk")
    due = due.filter(pk__in=list(ids)) if ids is not None else due.filter(next_attempt_at__lte=now)
    sent = []
    for delivery in due[:limit]:
        if _claimed(delivery, now):
            sent.append(delivery_send(delivery))
    return sent
