"""The signature of a delivery: ``X-Branchpoint-Signature: t=<unix seconds>,v1=<hex>``.

``v1`` is the HMAC-SHA256, keyed with the webhook's secret, of the timestamp, a
full stop and the body's bytes (``b"<t>." + body``). The timestamp lets a receiver
refuse an old delivery replayed by someone who captured it; the comparison is in
constant time. Pure functions: the receiver's side is the same ten lines
(docs/webhooks.md).
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "X-Branchpoint-Signature"
TOLERANCE_SECONDS = 300


def signature(secret: str, body: bytes, timestamp: int) -> str:
    """The header's value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def signature_valid(
    secret: str, body: bytes, header: str, *, now: int, tolerance: int = TOLERANCE_SECONDS
) -> bool:
    """Whether ``header`` signs ``body`` with ``secret``, within ``tolerance`` seconds of ``now``."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts.get("t", ""))
    except ValueError:
        return False
    if abs(now - timestamp) > tolerance:
        return False
    return hmac.compare_digest(signature(secret, body, timestamp), f"t={timestamp},v1={parts.get('v1', '')}")
