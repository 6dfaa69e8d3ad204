"""One chat request to a model endpoint: through its limits, into the ledger.

``chat`` waits for the endpoint's request slot (``limits``), holds one of its places in
this process, sends the messages with the official ``openai`` client (which retries what
failed on the way, as long as the server's ``Retry-After`` says, up to the endpoint's
``max_retries``), and writes one ``ModelCall`` whatever the outcome. A failure is raised as
``ModelCallFailed``: a kind a caller can act on and a message that names the endpoint and
never holds its key.

Call it outside any transaction: the ledger row is written when the call ends, and a
network wait inside a transaction would hold its locks.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import openai

from evaluation.llm.keys import KeyUnavailable, endpoint_key, redacted
from evaluation.llm.limits import Budget, concurrency_slot, pace_wait
from evaluation.llm.models import ModelCall, ModelEndpoint
from evaluation.llm.writes import writes_serialized

# Sampling settings passed through to the server, as the chat-completions protocol names them.
SAMPLING_KEYS = frozenset(
    {"temperature", "top_p", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty"}
)
# Sent as the key to servers that take none: the openai client refuses an empty one.
NO_KEY = "no-key"
ERROR_CHARS = 1000


@dataclass(frozen=True)
class ChatReply:
    """What the model answered, and what it cost."""

    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    duration_ms: int
    call_id: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelCallFailed(Exception):
    """A request that did not give an answer. ``kind`` says what to do about it:

    ``connection``, ``timeout``, ``server``, ``rate_limited`` — the endpoint's trouble, worth
    trying later; ``auth``, ``not_found``, ``bad_request``, ``key`` — the settings' trouble,
    worth fixing first; ``malformed`` — an answer that is not a chat completion.
    """

    RETRYABLE = frozenset({"connection", "timeout", "server", "rate_limited", "malformed"})

    def __init__(self, endpoint: str, kind: str, message: str):
        super().__init__(f"{endpoint}: {message}")
        self.endpoint = endpoint
        self.kind = kind

    @property
    def retryable(self) -> bool:
        return self.kind in self.RETRYABLE


_clients: dict[tuple[int, str, str, float, int], openai.OpenAI] = {}
_clients_lock = threading.Lock()


def _client(endpoint: ModelEndpoint, key: str) -> openai.OpenAI:
    """The process's client for the endpoint as it is now configured (one per setting)."""
    cache_key = (endpoint.pk, endpoint.base_url, key, endpoint.timeout_seconds, endpoint.max_retries)
    with _clients_lock:
        client = _clients.get(cache_key)
        if client is None:
            for old in [known for known in _clients if known[0] == endpoint.pk]:
                _clients.pop(old).close()
            client = openai.OpenAI(
                api_key=key or NO_KEY,
                base_url=endpoint.base_url,
                timeout=endpoint.timeout_seconds,
                max_retries=endpoint.max_retries,
            )
            _clients[cache_key] = client
        return client


def _failure(endpoint: ModelEndpoint, error: Exception, key: str) -> ModelCallFailed:
    """The exception of the openai client as a failure people can act on."""
    if isinstance(error, openai.APITimeoutError):
        kind, what = "timeout", f"no answer within {endpoint.timeout_seconds:g} s"
    elif isinstance(error, openai.APIConnectionError):
        kind, what = "connection", f"cannot reach {endpoint.base_url}"
    elif isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
        kind, what = "auth", "the server refused the API key"
    elif isinstance(error, openai.NotFoundError):
        kind, what = "not_found", f"no such model or path (model {endpoint.model!r} at {endpoint.base_url})"
    elif isinstance(error, openai.RateLimitError):
        kind, what = "rate_limited", f"still rate-limited after {endpoint.max_retries} retries"
    elif isinstance(error, openai.BadRequestError | openai.UnprocessableEntityError):
        kind, what = "bad_request", "the server refused the request"
    elif isinstance(error, openai.InternalServerError):
        kind, what = "server", "the server failed"
    elif isinstance(error, openai.APIStatusError):
        kind, what = "server", f"the server answered {error.status_code}"
    else:
        kind, what = "malformed", "the answer is not a chat completion"
    detail = redacted(str(error), key)[:ERROR_CHARS]
    return ModelCallFailed(endpoint.name, kind, f"{what}: {detail}" if detail else what)


def _reply_of(completion: Any) -> tuple[str, str | None, int, int]:
    """Text, finish reason and token counts of a completion; ValueError if it has none."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise ValueError("it has no choices")
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str):
        raise ValueError("its first choice has no text content")
    usage = getattr(completion, "usage", None)
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    return text, getattr(choices[0], "finish_reason", None), prompt, completion_tokens


def chat(
    endpoint: ModelEndpoint,
    messages: Sequence[Mapping[str, str]],
    *,
    purpose: str,
    subject: str = "",
    job_id: int | None = None,
    sampling: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
) -> ChatReply:
    """Send ``messages`` to ``endpoint`` and return its answer; raises ``ModelCallFailed``
    (recorded in the ledger too) or ``BudgetExhausted`` (before sending)."""
    if budget is not None:
        budget.check()
    options = {name: value for name, value in (sampling or {}).items() if name in SAMPLING_KEYS}
    try:
        key = endpoint_key(endpoint)
    except KeyUnavailable as missing:
        failure = ModelCallFailed(endpoint.name, "key", str(missing))
        _record(endpoint, purpose, subject, job_id, failure=failure, duration_ms=0)
        raise failure from None
    pace_wait(endpoint)
    with concurrency_slot(endpoint):
        started = time.monotonic()
        try:
            completion = _client(endpoint, key).chat.completions.create(
                model=endpoint.model, messages=list(messages), **options
            )
            text, finish, prompt_tokens, completion_tokens = _reply_of(completion)
        except (openai.OpenAIError, ValueError, json.JSONDecodeError, AttributeError, TypeError) as error:
            failure = _failure(endpoint, error, key)
            _record(endpoint, purpose, subject, job_id, failure=failure, duration_ms=_since(started))
            raise failure from None
    duration_ms = _since(started)
    cost = endpoint.cost(prompt_tokens, completion_tokens)
    if budget is not None:
        budget.spend(prompt_tokens + completion_tokens, cost)
    call = _record(
        endpoint,
        purpose,
        subject,
        job_id,
        duration_ms=duration_ms,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost=cost,
    )
    return ChatReply(text, finish, prompt_tokens, completion_tokens, cost, duration_ms, call.pk)


def _since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _record(
    endpoint: ModelEndpoint,
    purpose: str,
    subject: str,
    job_id: int | None,
    *,
    duration_ms: int,
    failure: ModelCallFailed | None = None,
    prompt_tokens: int = 0,
    completion_tokens: int = 0,
    cost: Decimal | None = None,
) -> ModelCall:
    with writes_serialized():
        return ModelCall.objects.create(
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            model=endpoint.model,
            purpose=purpose,
            subject=subject[:200],
            job_id=job_id,
            status=ModelCall.Status.ERROR if failure else ModelCall.Status.OK,
            error=str(failure) if failure else "",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=cost,
            duration_ms=duration_ms,
        )
