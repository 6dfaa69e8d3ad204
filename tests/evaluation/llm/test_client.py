"""One chat request to a model endpoint, against a real chat-completions server on 127.0.0.1.

- The reply's text, token counts and cost come back, and every request — answered or not —
  is a row of the ledger (``ModelCall``) with what it was for.
- Trouble on the way is retried as the server says: a 429's ``Retry-After`` is waited
  for, a 5xx tried again, up to the endpoint's ``max_retries``; then it is a failure
  with a kind a caller can act on (timeout, connection, auth, malformed, ...).
- Requests per minute hold across every caller; requests at once stay within
  ``max_concurrency``; a run's budget stops it before it overspends.
- The API key goes to the server as a Bearer token and nowhere else: not in failures,
  the ledger, or any log line, even when the server quotes it back.
"""

from __future__ import annotations

import logging
import threading
import time
from decimal import Decimal

import pytest

from evaluation.llm.client import ModelCallFailed, chat
from evaluation.llm.limits import Budget, BudgetExhausted
from evaluation.llm.models import ModelCall
from evaluation.llm.services import endpoint_update
from evaluation.llm.threads import map_in_threads
from tests.evaluation.llm.chat_server import Answer, error, malformed, rate_limited
from tests.evaluation.llm.conftest import API_KEY
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)
HELLO = [{"role": "user", "content": "Hello?"}]


def test_the_reply_comes_back_with_its_tokens_and_cost_and_is_in_the_ledger(chat_server, endpoint):
    endpoint_update(
        endpoint=endpoint,
        changes={"input_price_per_1k": Decimal("0.5"), "output_price_per_1k": Decimal("1.5")},
    )
    chat_server.script(Answer("Hi there", prompt_tokens=200, completion_tokens=100))

    reply = chat(
        endpoint, HELLO, purpose="judge", subject="helpfulness", sampling={"temperature": 0.2, "bogus": 1}
    )

    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("Hi there", 200, 100)
    assert reply.cost == Decimal("0.25")  # 0.2 * 0.5 + 0.1 * 1.5
    sent = chat_server.chats[0]
    assert sent.body["model"] == "test-model"
    assert sent.body["messages"] == HELLO
    assert sent.body["temperature"] == 0.2 and "bogus" not in sent.body
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"
    call = ModelCall.objects.get()
    assert (call.purpose, call.subject, call.status, call.prompt_tokens, call.completion_tokens) == (
        "judge",
        "helpfulness",
        "ok",
        200,
        100,
    )
    assert call.cost == Decimal("0.25") and call.pk == reply.call_id


def test_an_unpriced_endpoint_counts_tokens_and_no_cost(chat_server, endpoint):
    reply = chat(endpoint, HELLO, purpose="generate")
    assert reply.cost is None and ModelCall.objects.get().cost is None


def test_a_429_is_retried_after_the_servers_retry_after(chat_server, endpoint):
    chat_server.script(rate_limited(1), "fine")

    reply = chat(endpoint, HELLO, purpose="judge")

    first, second = chat_server.chats
    assert reply.text == "fine"
    assert second.at - first.at >= 0.95
    assert ModelCall.objects.filter(status="ok").count() == 1


def test_a_server_error_is_retried_then_a_failure_of_kind_server(chat_server, endpoint):
    chat_server.script(error(500, "boom"), error(502, "boom"), error(503, "boom"))

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="judge")

    assert failed.value.kind == "server" and failed.value.retryable
    assert len(chat_server.chats) == 3  # the request and max_retries = 2 more
    assert ModelCall.objects.get().status == "error"


def test_a_rate_limit_that_never_ends_is_a_failure_of_its_own_kind(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_retries": 1})
    chat_server.script(rate_limited(0.1), rate_limited(0.1))

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="judge")

    assert failed.value.kind == "rate_limited"
    assert "still rate-limited after 1 retries" in str(failed.value)


def test_malformed_json_is_a_failure_not_a_reply(chat_server, endpoint):
    chat_server.script(malformed())

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="judge")

    assert failed.value.kind == "malformed"
    assert str(failed.value).startswith("local: the answer is not a chat completion")
    call = ModelCall.objects.get()
    assert call.status == "error" and "not a chat completion" in call.error


def test_a_completion_without_choices_is_malformed(chat_server, endpoint):
    chat_server.script(Answer(text=None, raw=b'{"id": "x", "object": "chat.completion", "choices": []}'))

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="judge")

    assert failed.value.kind == "malformed" and "no choices" in str(failed.value)


def test_a_slow_server_is_a_timeout(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"timeout_seconds": 1.0, "max_retries": 0})
    chat_server.script(Answer("late", delay=2.5))

    started = time.monotonic()
    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="judge")

    assert failed.value.kind == "timeout" and "no answer within 1 s" in str(failed.value)
    assert time.monotonic() - started < 2.4


def test_a_server_that_is_not_there_is_a_connection_failure(endpoint):
    endpoint_update(endpoint=endpoint, changes={"base_url": "http://127.0.0.1:9/v1", "max_retries": 0})

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="test")

    assert failed.value.kind == "connection"
    assert "cannot reach http://127.0.0.1:9/v1" in str(failed.value)


def test_a_wrong_model_name_says_so(chat_server, endpoint):
    chat_server.script(error(404, "The model `nope` does not exist"))

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="test")

    assert failed.value.kind == "not_found" and not failed.value.retryable
    assert "no such model or path (model 'test-model'" in str(failed.value)


@pytest.mark.postgres  # callers in threads, each with its own connection
def test_requests_per_minute_hold_across_callers(chat_server, endpoint):
    chat(endpoint, HELLO, purpose="test")  # the process's client is made once, before the clock runs
    endpoint_update(endpoint=endpoint, changes={"requests_per_minute": 120})  # one every 0.5 s

    started = time.monotonic()
    list(map_in_threads(lambda _: chat(endpoint, HELLO, purpose="judge"), range(4), workers=4))

    after = sorted(request.at - started for request in chat_server.chats[1:])
    assert len(after) == 4
    # The k-th slot is k half-seconds after the first, which is no earlier than the start: a
    # busy machine can only send a request later than its slot, never sooner.
    assert all(at >= k * 0.5 - 0.02 for k, at in enumerate(after)), after


@pytest.mark.postgres  # callers in threads, each with its own connection
def test_requests_at_once_stay_within_the_endpoints_concurrency(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 2})
    in_flight, most = [0], [0]
    lock = threading.Lock()

    def respond(body):
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.3)
        with lock:
            in_flight[0] -= 1
        return "done"

    chat_server.respond = respond
    list(map_in_threads(lambda _: chat(endpoint, HELLO, purpose="judge"), range(6), workers=6))

    assert len(chat_server.chats) == 6
    assert most[0] == 2


def test_a_budget_stops_the_run_before_it_overspends(chat_server, endpoint):
    budget = Budget(max_tokens=30)  # each answer is 10 + 5 tokens

    chat(endpoint, HELLO, purpose="generate", budget=budget)
    chat(endpoint, HELLO, purpose="generate", budget=budget)
    with pytest.raises(BudgetExhausted, match="used its 30 tokens"):
        chat(endpoint, HELLO, purpose="generate", budget=budget)

    assert len(chat_server.chats) == 2 and budget.tokens == 30


def test_a_money_budget_counts_the_endpoints_prices(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"output_price_per_1k": Decimal("10")})
    budget = Budget(max_cost=Decimal("0.1"))  # each answer: 5 completion tokens = 0.05

    chat(endpoint, HELLO, purpose="generate", budget=budget)
    chat(endpoint, HELLO, purpose="generate", budget=budget)
    with pytest.raises(BudgetExhausted, match=r"spent its budget of 0\.1"):
        chat(endpoint, HELLO, purpose="generate", budget=budget)


def test_a_key_read_from_an_environment_variable(chat_server, endpoint, monkeypatch):
    endpoint_update(endpoint=endpoint, changes={"api_key_env": "JUDGE_KEY"}, api_key="")
    monkeypatch.setenv("JUDGE_KEY", "sk-from-the-environment")

    chat(endpoint, HELLO, purpose="test")

    assert chat_server.chats[0].headers["authorization"] == "Bearer sk-from-the-environment"


def test_a_missing_environment_variable_is_a_failure_before_any_request(chat_server, endpoint, monkeypatch):
    endpoint_update(endpoint=endpoint, changes={"api_key_env": "JUDGE_KEY"}, api_key="")
    monkeypatch.delenv("JUDGE_KEY", raising=False)

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="test")

    assert failed.value.kind == "key" and "JUDGE_KEY is not set" in str(failed.value)
    assert chat_server.chats == []


def test_the_key_appears_in_no_failure_ledger_audit_entry_or_log_line(chat_server, endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    # Servers quote the key they refused; the answer to a good key is logged at DEBUG as well.
    chat_server.script(error(401, f"Incorrect API key provided: {API_KEY}"), "fine")

    with pytest.raises(ModelCallFailed) as failed:
        chat(endpoint, HELLO, purpose="test")
    chat(endpoint, HELLO, purpose="test")

    assert failed.value.kind == "auth" and "[API key]" in str(failed.value)
    assert API_KEY not in str(failed.value)
    assert API_KEY not in caplog.text and caplog.records  # the client did log, at DEBUG
    assert not ModelCall.objects.filter(error__contains=API_KEY).exists()
    for entry in AuditEntry.objects.all():
        assert API_KEY not in str(entry.details) and API_KEY not in entry.target_repr
