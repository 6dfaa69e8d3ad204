"""Fixtures shared by every test package."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def _exact_progress_counts() -> None:
    """Count progress, look for expired leases and read the caller's token and project afresh
    on every call: tests change items, leases, tokens and members between calls within a
    second. ``tests/annotation/projects/test_counts.py``, ``work/test_assignment.py`` and
    ``tests/annotation/test_recent.py`` turn the keeping back on to check it."""
    from django.conf import settings

    settings.PROGRESS_COUNTS_SECONDS = 0
    settings.LEASE_RECLAIM_SECONDS = 0
    settings.API_AUTH_CACHE_SECONDS = 0


@pytest.fixture(autouse=True, scope="session")
def _sessions_read_from_the_database() -> Iterator[None]:
    """No cache: each request reads its session from the database, whatever the tests before
    it kept, so query-count specs count the same in any order. ``tests/config/test_session_users.py``
    turns the cache back on to check what it saves."""
    from django.test import override_settings

    with override_settings(CACHES={"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}):
        yield


@pytest.fixture(autouse=True, scope="session")
def _no_chance_pruning_of_rate_windows() -> None:
    """The throttle prunes old rate windows by chance (one new window in a thousand), which
    would add a statement to a request now and then and break query-count specs."""
    from annotation.api import throttling

    throttling.PRUNE_CHANCE = 0


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing() -> None:
    """Hash test passwords with MD5: the real hasher costs a third of a second per user."""
    from django.conf import settings
    from django.contrib.auth import hashers

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    hashers.get_hashers.cache_clear()
    hashers.get_hashers_by_algorithm.cache_clear()


@pytest.fixture
def fixture_path() -> Callable[[str], Path]:
    """Path of a file under tests/fixtures/."""
    return lambda name: FIXTURES / name


@pytest.fixture
def as_bytes() -> Callable[[Any], io.BytesIO]:
    """A byte stream holding ``value``: str as is, anything else as JSON."""

    def make(value: Any) -> io.BytesIO:
        text = value if isinstance(value, str) else json.dumps(value)
        return io.BytesIO(text.encode("utf-8"))

    return make


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests that need parts this machine lacks, saying how to enable them.

    ``BRANCHPOINT_REQUIRE_BROWSER=1`` (set by CI) turns a missing browser into
    a failure instead of a skip.
    """
    from django.conf import settings

    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    chromium = shutil.which("chromium") or os.path.exists("/usr/bin/chromium")
    require_browser = os.environ.get("BRANCHPOINT_REQUIRE_BROWSER") == "1"
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()) and "browser" not in item.keywords:
            item.add_marker(pytest.mark.browser)  # so that `-m "not browser"` leaves out every page test
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(
                pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://... (CI does)")
            )
        if "browser" in item.keywords and not chromium and not require_browser:
            item.add_marker(
                pytest.mark.skip(
                    reason="needs Debian's chromium: apt-get install chromium (CI installs it and sets "
                    "BRANCHPOINT_REQUIRE_BROWSER=1)"
                )
            )


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright, shared by the session's browser tests."""
    if not os.path.exists(CHROMIUM):
        message = (
            f"browser tests need Debian's chromium at {CHROMIUM} (make browser, or apt-get install chromium)"
        )
        if os.environ.get("BRANCHPOINT_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


# Every page runs under the site's Content-Security-Policy (config/settings.py); what the
# browser refuses is reported to the test through a binding, across navigations.
CSP_WATCH = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspRefused(
    `${event.effectiveDirective} refused ${event.blockedURI || "inline"} on ${document.location.pathname}`
    + (event.sourceFile ? ` (${event.sourceFile}:${event.lineNumber})` : "")
  );
});
"""


class RequestsInFlight:
    """The requests the live server's threads are handling now, from Django's request signals.

    A browser test may end while a request its page sent is still being served by
    the live server; the database is emptied after the test, and on the shared
    in-memory SQLite that request's write then makes the flush fail ("table is
    locked"). The tab's teardown waits for those threads first. Threads, not a
    count: a request that never signals its end must not hold up every later test,
    and the test's own client requests (on the main thread) are not waited for.
    """

    def __init__(self) -> None:
        import threading

        self.threads: set[Any] = set()
        self.lock = threading.Lock()

    def started(self, **_: Any) -> None:
        import threading

        if threading.current_thread() is not threading.main_thread():
            with self.lock:
                self.threads.add(threading.current_thread())

    def finished(self, **_: Any) -> None:
        import threading

        with self.lock:
            self.threads.discard(threading.current_thread())

    def wait_for_none(self, seconds: float = 10.0) -> None:
        import time

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                self.threads = {thread for thread in self.threads if thread.is_alive()}
                if not self.threads:
                    return
            time.sleep(0.02)


@pytest.fixture(scope="session")
def requests_in_flight() -> Iterator[RequestsInFlight]:
    from django.core.signals import request_finished, request_started

    counter = RequestsInFlight()
    request_started.connect(counter.started, dispatch_uid="tests-requests-in-flight-started")
    request_finished.connect(counter.finished, dispatch_uid="tests-requests-in-flight-finished")
    yield counter
    request_started.disconnect(dispatch_uid="tests-requests-in-flight-started")
    request_finished.disconnect(dispatch_uid="tests-requests-in-flight-finished")


@pytest.fixture
def page(browser, requests_in_flight):
    """A fresh browser tab (own cookies); fails fast instead of waiting 30 s.

    ``page.csp_refused`` lists what the Content-Security-Policy refused; a test that
    ends with anything in it fails, whatever it checked. Closing the tab waits for the
    requests it left being served (see ``RequestsInFlight``).
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    refused: list[str] = []
    context.expose_binding("__cspRefused", lambda source, text: refused.append(text))
    context.add_init_script(CSP_WATCH)
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    tab.csp_refused = refused
    yield tab
    context.close()
    requests_in_flight.wait_for_none()
    assert refused == [], "the Content-Security-Policy refused:\n" + "\n".join(refused)


@pytest.fixture
def sign_in(live_server):
    """``sign_in(page, user)``: give the tab a logged-in session for ``user``."""
    from django.conf import settings
    from django.test import Client

    def login(tab, user) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        tab.context.add_cookies(
            [{"name": settings.SESSION_COOKIE_NAME, "value": cookie.value, "url": live_server.url}]
        )

    return login
