"""Limits: requests per caller and window (``API_THROTTLE_RATES``), counted in the database so
that every worker shares them, answered with a 429 and ``Retry-After``; and request bodies
over their size limit, answered with a 413 before they are read.

Alice annotates project support and Bob annotates it too; both call the API with tokens.
"""

from __future__ import annotations

import io
import json
import threading
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client, RequestFactory
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import reverse

from annotation.api import throttling
from annotation.api.parsers import JSONParser, MultiPartParser, RequestTooLarge
from annotation.api.tokens import token_create
from annotation.models import RateWindow
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db

ME = reverse("api:me")
PROJECTS = reverse("api:projects")
NEXT = reverse("api:item-next", kwargs={"name": "support"})
IMPORT = reverse("api:dataset-import", kwargs={"name": "support-trees"})
CONFIG = "annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n"


@pytest.fixture
def callers() -> dict[str, Client]:
    """Alice and Bob annotate support; Root is a superuser; each has a token."""
    people = {
        "alice": person("alice"),
        "bob": person("bob"),
        "root": person("root", is_superuser=True, is_staff=True),
    }
    project = project_create(
        name="support", dataset=dataset_with("support-trees", potato_items("s", "S", 3)), config_yaml=CONFIG
    )
    for name in ("alice", "bob"):
        membership_add(project=project, user=people[name], role="annotator")
    return {
        name: Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, name='t').secret}")
        for name, user in people.items()
    }


@pytest.fixture
def rates(settings: Any) -> dict[str, str]:
    """Small rates for the specs to reach; each test sets what it needs."""
    settings.API_THROTTLE_RATES = {"user": "3/min", "anon": "2/min", "loop": "2/min"}
    return settings.API_THROTTLE_RATES


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The throttle's clock, 10 seconds into a minute; move it by changing ``clock[0]``."""
    now = [1_800_000_010.0]
    monkeypatch.setattr(throttling.time, "time", lambda: now[0])
    return now


# Throttling


def test_a_caller_over_the_rate_gets_a_429_saying_when_to_come_back(
    callers: dict[str, Client], rates: Any, clock: list[float]
) -> None:
    answers = [callers["alice"].get(ME).status_code for _ in range(4)]

    assert answers == [200, 200, 200, 429]
    refused = callers["alice"].get(ME)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "50"
    assert refused.json() == {
        "code": "throttled",
        "message": "Request was throttled. Expected available in 50 seconds.",
    }


def test_each_caller_has_a_count_of_their_own(
    callers: dict[str, Client], rates: Any, clock: list[float]
) -> None:
    for _ in range(3):
        callers["alice"].get(ME)

    assert callers["alice"].get(ME).status_code == 429
    assert callers["bob"].get(ME).status_code == 200


def test_the_count_starts_again_with_the_next_window(
    callers: dict[str, Client], rates: Any, clock: list[float]
) -> None:
    for _ in range(4):
        callers["alice"].get(ME)

    clock[0] += 50
    assert callers["alice"].get(ME).status_code == 200
    [window] = RateWindow.objects.filter(key__startswith="user:")
    assert (window.window_start, window.count) == (1_800_000_060, 1)


def test_the_annotators_loop_has_a_rate_of_its_own(
    callers: dict[str, Client], rates: Any, clock: list[float]
) -> None:
    """An annotator's autosaves must not starve their other calls, nor the other way round."""
    for _ in range(3):
        assert callers["alice"].get(ME).status_code == 200
    assert callers["alice"].get(ME).status_code == 429

    loop = [callers["alice"].post(NEXT).status_code for _ in range(3)]

    assert loop == [200, 200, 429]


def test_rates_come_from_settings_and_off_means_none(
    callers: dict[str, Client], rates: Any, clock: list[float]
) -> None:
    rates["user"] = "off"

    assert {callers["alice"].get(ME).status_code for _ in range(10)} == {200}
    assert not RateWindow.objects.filter(key__startswith="user:").exists()


def test_anonymous_callers_are_counted_by_address(rates: Any, clock: list[float]) -> None:
    """Only the schema and its docs answer anonymous callers; they are throttled per address."""
    here, there = Client(REMOTE_ADDR="10.0.0.1"), Client(REMOTE_ADDR="10.0.0.2")

    assert [here.get("/api/docs/").status_code for _ in range(3)] == [200, 200, 429]
    assert there.get("/api/docs/").status_code == 200
    assert RateWindow.objects.filter(key="anon:ip:10.0.0.1").get().count == 3


# Whose address: the connection's, unless trusted proxies are configured (trees.client_address)


def test_rotating_x_forwarded_for_does_not_escape_the_limit_nor_add_rows(
    rates: Any, clock: list[float]
) -> None:
    """Without trusted proxies the header is the caller's own words: one address, one count."""
    caller = Client(REMOTE_ADDR="203.0.113.9")

    answers = [caller.get("/api/docs/", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(5)]

    assert answers == [200, 200, 429, 429, 429]
    assert list(RateWindow.objects.values_list("key", "count")) == [("anon:ip:203.0.113.9", 5)]


def test_behind_one_trusted_proxy_callers_are_counted_by_the_address_it_saw(
    rates: Any, clock: list[float], settings: Any
) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 1
    proxy = Client(REMOTE_ADDR="10.0.0.2")

    spoofing = [
        proxy.get("/api/docs/", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, 203.0.113.9").status_code
        for n in range(3)
    ]
    other = proxy.get("/api/docs/", HTTP_X_FORWARDED_FOR="203.0.113.10").status_code

    assert spoofing == [200, 200, 429]
    assert other == 200
    assert sorted(RateWindow.objects.values_list("key", flat=True)) == [
        "anon:ip:203.0.113.10",
        "anon:ip:203.0.113.9",
    ]


def test_a_huge_or_malformed_x_forwarded_for_is_no_error_and_no_key(rates: Any, clock: list[float]) -> None:
    """A header over the key's 200 characters was a 500 on PostgreSQL."""
    caller = Client(REMOTE_ADDR="203.0.113.9")

    answers = [
        caller.get("/api/docs/", HTTP_X_FORWARDED_FOR=header).status_code
        for header in ("9" * 10_240, "1.2.3.4, " * 1_200, "not an address,,,[::1", "\x00")
    ]

    assert answers == [200, 200, 429, 429]
    assert list(RateWindow.objects.values_list("key", flat=True)) == ["anon:ip:203.0.113.9"]


def test_an_ipv6_caller_is_counted_by_its_64_block(rates: Any, clock: list[float]) -> None:
    """One host is usually given a /64: rotating within it is still one caller."""
    answers = [Client(REMOTE_ADDR=f"2001:db8:1:2::{n:x}").get("/api/docs/").status_code for n in range(1, 4)]

    assert answers == [200, 200, 429]
    assert list(RateWindow.objects.values_list("key", flat=True)) == ["anon:ip:2001:db8:1:2::/64"]


def test_each_request_costs_one_statement_and_the_counts_are_shared_rows(
    callers: dict[str, Client], rates: Any, clock: list[float], django_assert_num_queries: Any
) -> None:
    callers["alice"].get(ME)

    with django_assert_num_queries(1):
        assert throttling.window_hit("user:probe", 60) == 1
    with django_assert_num_queries(1):
        assert throttling.window_hit("user:probe", 60) == 2
    assert throttling.window_hit("user:probe", 120) == 1  # a new window starts at one
    assert RateWindow.objects.filter(key__startswith="user:").count() == 2


@pytest.mark.parametrize(
    ("rate", "parsed"),
    [
        ("600/min", (600, 60)),
        ("5/s", (5, 1)),
        ("100/hour", (100, 3600)),
        ("1000/day", (1000, 86400)),
        ("off", None),
        ("", None),
    ],
)
def test_rates_are_read_as_requests_per_period(rate: str, parsed: tuple[int, int] | None) -> None:
    assert throttling.parse_rate(rate) == parsed


@pytest.mark.parametrize("rate", ["600", "many/min", "600/fortnight"])
def test_a_rate_that_cannot_be_read_is_named(rate: str) -> None:
    with pytest.raises(ValueError, match=f'bad rate "{rate}": expected N/sec, N/min, N/hour or N/day'):
        throttling.parse_rate(rate)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_are_each_counted_once() -> None:
    """The upsert counts atomically: no two workers read the same count and both pass."""
    counts: list[int] = []
    lock = threading.Lock()

    def hit() -> None:
        try:
            found = [throttling.window_hit("user:race", 60) for _ in range(10)]
            with lock:
                counts.extend(found)
        finally:
            connection.close()

    threads = [threading.Thread(target=hit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(counts) == list(range(1, 81))
    assert RateWindow.objects.get(key="user:race").count == 80


# Body size


def test_a_json_body_over_the_limit_is_a_413_before_it_is_read(
    callers: dict[str, Client], settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"name": "x", "dataset": "support-trees", "config_yaml": "#" * 2000})

    response = callers["root"].post(PROJECTS, data=body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "message": "the request body is over the limit of 1,000 bytes",
    }


def test_imports_may_send_up_to_their_own_larger_limit(callers: dict[str, Client], settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.BRANCHPOINT_MAX_UPLOAD_BYTES = 5000
    items = potato_items("big", "B" * 100, 6)
    assert 1000 < len(json.dumps({"format": "potato", "items": items})) < 5000

    response = callers["root"].post(
        IMPORT, data=json.dumps({"format": "potato", "items": items}), content_type="application/json"
    )

    assert response.status_code == 200, response.content
    assert response.json()["trees_created"] == 6


@pytest.mark.parametrize("kind", ["file", "items"])
def test_an_import_over_the_upload_limit_is_a_413_and_imports_nothing(
    callers: dict[str, Client], settings: Any, kind: str
) -> None:
    settings.BRANCHPOINT_MAX_UPLOAD_BYTES = 5000
    items = potato_items("big", "B" * 1000, 6)
    if kind == "file":
        content = "".join(json.dumps(item) + "\n" for item in items).encode()
        response = callers["root"].post(
            IMPORT, {"format": "potato", "file": SimpleUploadedFile("i.jsonl", content)}
        )
    else:
        body = json.dumps({"format": "potato", "items": items})
        response = callers["root"].post(IMPORT, data=body, content_type="application/json")

    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "message": "the request body is over the limit of 5,000 bytes",
    }
    assert not ConversationTree.objects.filter(external_id__startswith="big").exists()


def test_multipart_fields_over_the_form_limit_are_a_413(callers: dict[str, Client], settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    upload = SimpleUploadedFile("i.jsonl", b"")

    response = callers["root"].post(IMPORT, {"format": "potato", "id_key": "k" * 2000, "file": upload})

    assert response.status_code == 413
    assert response.json()["code"] == "too_large"


class View:
    accepts_uploads = False


class UploadView:
    accepts_uploads = True


def test_a_json_body_longer_than_it_said_is_stopped_at_the_limit(settings: Any) -> None:
    """A body is never trusted to be as long as its Content-Length says."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    stream = io.BytesIO(b'{"a": "' + b"x" * 500 + b'"}')

    with pytest.raises(RequestTooLarge):
        JSONParser().parse(stream, "application/json", {"view": View(), "request": None})


def test_a_multipart_body_longer_than_it_said_is_stopped_at_the_limit(settings: Any) -> None:
    settings.BRANCHPOINT_MAX_UPLOAD_BYTES = 1000
    body = encode_multipart(
        BOUNDARY, {"format": "potato", "file": SimpleUploadedFile("i.jsonl", b"x" * 5000)}
    )
    request = RequestFactory().generic("POST", IMPORT, data=body, content_type=MULTIPART_CONTENT)
    request.META["CONTENT_LENGTH"] = "900"  # a lie

    with pytest.raises(RequestTooLarge, match="over the limit of 1,000 bytes"):
        MultiPartParser().parse(
            io.BytesIO(body),
            MULTIPART_CONTENT,
            {"view": UploadView(), "request": request, "encoding": "utf-8"},
        )


def test_the_limit_is_read_for_each_view(settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    settings.BRANCHPOINT_MAX_UPLOAD_BYTES = 1000
    body = b'{"a": "' + b"x" * 500 + b'"}'

    assert JSONParser().parse(io.BytesIO(body), "application/json", {"view": UploadView()}) == {
        "a": "x" * 500
    }
    with pytest.raises(RequestTooLarge, match="over the limit of 100 bytes"):
        JSONParser().parse(io.BytesIO(body), "application/json", {"view": View()})
