"""Sessions from the cache and the signed-in user kept with them (config/session_users.py).

- With a cache, a page request reads neither its session nor its user from the database:
  two statements fewer than with none (what the test settings use).
- A user saved in this process (a password change, a deactivation) is read afresh at once:
  the session of a deactivated user no longer signs them in.
- Without Redis, a process keeps a session at most PROCESS_CACHE_SECONDS.
"""

from __future__ import annotations

import time
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LOCAL_MEMORY = {"default": {"BACKEND": "config.process_cache.ProcessCache", "LOCATION": "sessions-test"}}


def page_queries(client: Client) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("annotation:projects"))
    assert response.status_code == 200
    return [query["sql"] for query in captured]


@pytest.fixture
def alice() -> Any:
    return UserFactory(username="alice")


def test_with_a_cache_a_page_reads_neither_session_nor_user(alice: Any, settings: Any) -> None:
    uncached = Client()
    uncached.force_login(alice)
    page_queries(uncached)
    without = page_queries(uncached)

    settings.API_AUTH_CACHE_SECONDS = 60
    with override_settings(CACHES=LOCAL_MEMORY):
        client = Client()
        client.force_login(alice)
        page_queries(client)  # the first request reads the user and keeps it
        kept = page_queries(client)

    assert len(kept) == len(without) - 2
    assert not any("django_session" in sql for sql in kept)


def test_a_user_saved_here_is_read_again_at_once(alice: Any, settings: Any) -> None:
    settings.API_AUTH_CACHE_SECONDS = 60
    with override_settings(CACHES=LOCAL_MEMORY):
        client = Client()
        client.force_login(alice)
        page_queries(client)

        alice.is_active = False
        alice.save()

        response = client.get(reverse("annotation:projects"))
    assert response.status_code == 302  # to the login page


def test_a_process_keeps_a_session_no_longer_than_its_cache_allows() -> None:
    """Without Redis, a sign-out in another process reaches this one within PROCESS_CACHE_SECONDS,
    although Django asks to keep a session's copy for the session's whole age."""
    from config.process_cache import ProcessCache

    cache = ProcessCache("sessions-cap-test", {"LONGEST": 60})
    cache.set("session", {"user": 1}, timeout=14 * 24 * 3600)
    now = time.time()

    with mock.patch("django.core.cache.backends.locmem.time.time", return_value=now + 59):
        assert cache.get("session") == {"user": 1}
    with mock.patch("django.core.cache.backends.locmem.time.time", return_value=now + 61):
        assert cache.get("session") is None
