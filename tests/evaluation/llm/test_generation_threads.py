"""Growing branches with requests in threads (PostgreSQL: each thread has its own connection).

- Requests go at most ``max_concurrency`` at once, spaced by ``requests_per_minute``.
- Two runs of the same settings at once add each reply once.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from evaluation.llm.client import chat
from evaluation.llm.services import endpoint_update
from tests.evaluation.llm.chat_server import Answer
from tests.evaluation.llm.grow_world import generated, grow, grow_dataset

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


@pytest.fixture
def dataset(endpoint):
    return grow_dataset()


def test_requests_per_minute_space_the_runs_requests(chat_server, endpoint, dataset):
    chat(
        endpoint, [{"role": "user", "content": "warm up"}], purpose="test"
    )  # the client made before the clock
    endpoint_update(endpoint=endpoint, changes={"requests_per_minute": 120, "max_concurrency": 4})

    started = time.monotonic()
    report = grow(dataset, n=2)

    assert report.added == 4
    after = sorted(request.at - started for request in chat_server.chats[1:])
    assert len(after) == 4
    # The k-th slot is k half-seconds after the first, which is no earlier than the start: a
    # busy machine can only send a request later than its slot, never sooner.
    assert all(at >= k * 0.5 - 0.02 for k, at in enumerate(after)), after


def test_requests_at_once_stay_within_the_endpoints_concurrency(chat_server, endpoint, dataset):
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
    started = time.monotonic()

    report = grow(dataset, n=3)

    assert (report.added, len(chat_server.chats)) == (6, 6)
    assert most[0] == 2
    assert time.monotonic() - started >= 0.9  # 6 requests of 0.3 s, 2 at a time


def test_two_runs_at_once_add_each_reply_once(chat_server, endpoint, dataset):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 4})
    chat_server.respond = lambda body: Answer("Same.", delay=0.2)  # both runs ask before either adds
    reports = []

    def run():
        try:
            reports.append(grow(dataset, n=2))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(generated("p2")) == 2 and len(generated("q1")) == 2
    assert sum(report.added for report in reports) == 4
    assert [reply.position for reply in generated("q1")] == [0, 1]
