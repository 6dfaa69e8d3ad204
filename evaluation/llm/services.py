"""Model endpoints made, changed and deleted (audited, never with the key), and the
connection test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from evaluation.llm.client import ModelCallFailed, chat
from evaluation.llm.keys import key_encrypt
from evaluation.llm.models import ModelCall, ModelEndpoint
from trees.audit import audit_record

# The fields an endpoint's settings may change (the key goes apart: ``api_key``).
FIELDS = (
    "name",
    "base_url",
    "model",
    "api_key_env",
    "timeout_seconds",
    "max_retries",
    "max_concurrency",
    "requests_per_minute",
    "input_price_per_1k",
    "output_price_per_1k",
)
KEEP = object()  # ``api_key`` left as it is


def _key_set(endpoint: ModelEndpoint, api_key: Any) -> bool:
    """Apply ``api_key`` (a new key, "" or None to remove it, ``KEEP``); whether it changed."""
    if api_key is KEEP:
        return False
    if api_key:
        endpoint.api_key_encrypted = key_encrypt(api_key)
        endpoint.api_key_set_at = timezone.now()
        return True
    changed = bool(endpoint.api_key_encrypted)
    endpoint.api_key_encrypted, endpoint.api_key_set_at = "", None
    return changed


@transaction.atomic
def endpoint_create(*, api_key: str | None = None, **settings: Any) -> ModelEndpoint:
    """A new endpoint; ``api_key`` is stored encrypted (or leave it out and name
    ``api_key_env``)."""
    endpoint = ModelEndpoint(**{name: value for name, value in settings.items() if name in FIELDS})
    _key_set(endpoint, api_key or "")
    endpoint.full_clean()
    endpoint.save()
    audit_record(
        "endpoint.create",
        target=endpoint,
        details={"base_url": endpoint.base_url, "model": endpoint.model, "api_key": _key_said(endpoint)},
    )
    return endpoint


@transaction.atomic
def endpoint_update(
    *, endpoint: ModelEndpoint, changes: Mapping[str, Any], api_key: Any = KEEP
) -> ModelEndpoint:
    """Change the endpoint's settings and, unless ``KEEP``, its key; the log names what changed,
    and says of the key only that it did."""
    changed = [name for name in FIELDS if name in changes and getattr(endpoint, name) != changes[name]]
    for name in changed:
        setattr(endpoint, name, changes[name])
    key_changed = _key_set(endpoint, api_key)
    if not changed and not key_changed:
        return endpoint
    endpoint.full_clean()
    endpoint.save()
    details: dict[str, Any] = {"changed": changed}
    if key_changed:
        details["api_key"] = _key_said(endpoint)
    audit_record("endpoint.update", target=endpoint, details=details)
    return endpoint


def _key_said(endpoint: ModelEndpoint) -> str:
    if endpoint.api_key_env:
        return f"from ${endpoint.api_key_env}"
    return "stored" if endpoint.api_key_encrypted else "none"


@transaction.atomic
def endpoint_delete(*, endpoint: ModelEndpoint) -> None:
    """Delete the endpoint; its ledger stays, by name."""
    audit_record("endpoint.delete", target=endpoint, target_repr=str(endpoint))
    endpoint.delete()


@dataclass(frozen=True)
class ConnectionTest:
    """What a connection test came to: ``ok``, and a sentence saying so."""

    ok: bool
    message: str


TEST_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]


def endpoint_test(*, endpoint: ModelEndpoint) -> ConnectionTest:
    """Send the endpoint one short chat request and say what came back (a ledger row, no
    other change)."""
    try:
        reply = chat(
            endpoint,
            TEST_MESSAGES,
            purpose=ModelCall.Purpose.TEST,
            sampling={"max_tokens": 8, "temperature": 0},
        )
    except ModelCallFailed as failure:
        return ConnectionTest(
            False, f"Endpoint {endpoint.name} failed ({failure.kind}): {str(failure).split(': ', 1)[1]}"
        )
    said = " ".join(reply.text.split())[:80] or "(an empty reply)"
    return ConnectionTest(
        True,
        f"Endpoint {endpoint.name}: {endpoint.model} answered in {reply.duration_ms:,} ms: “{said}” "
        f"({reply.prompt_tokens} + {reply.completion_tokens} tokens)",
    )
