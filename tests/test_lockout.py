"""Logins lock out after repeated failures (django-axes, config/lockout.py):

- After ``AXES_FAILURE_LIMIT`` failed logins (5) the account is locked, and so is the
  address they came from, each on its own: the right password is refused too, at the
  site's login and at the admin's, with a page saying why, for how long and what to do
  (429).
- The address is the one ``trees.client_address`` decides: rotating ``X-Forwarded-For``
  is no way out, and behind a trusted proxy each client behind it counts apart.
- A success does not wipe the failures (a caller with an account of their own could
  otherwise clear their address's count between guesses); failures older than the
  cool-off no longer count. ``AXES_RESET_ON_SUCCESS=1`` turns wiping on.
- Every failed attempt and lockout is in the admin, read-only; deleting an attempt there
  unlocks, and is in the audit log. ``manage.py axes_reset_username`` and ``axes_reset_ip``
  unlock too.
- API tokens are not passwords: a locked account's token still works.

Dora and Eve have accounts; Mallory guesses passwords from 203.0.113.66; Root is an admin.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.api.tokens import token_create
from tests.factories import PASSWORD, StaffFactory, UserFactory
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
ADMIN_LOGIN = reverse("admin:login")
MALLORY = "203.0.113.66"
LIMIT = 5


def person(username: str, **extra: Any) -> Any:
    user = (StaffFactory if extra.pop("staff", False) else UserFactory)(username=username, **extra)
    user.save()  # the factory's password, hashed, stored
    return user


@pytest.fixture
def dora() -> Any:
    return person("dora")


@pytest.fixture
def eve() -> Any:
    return person("eve")


def log_in(client: Client, username: str, password: str, url: str = LOGIN, **headers: Any) -> Any:
    return client.post(url, {"username": username, "password": password}, **headers)


def fail(client: Client, username: str, times: int, url: str = LOGIN, **headers: Any) -> list[int]:
    return [log_in(client, username, "wrong-guess", url, **headers).status_code for _ in range(times)]


def signed_in(response: Any) -> bool:
    return response.status_code == 302 and settings.SESSION_COOKIE_NAME in response.cookies


def test_the_limit_is_five_failures_in_a_quarter_hour() -> None:
    assert (settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME) == (LIMIT, 0.25)
    assert settings.AXES_LOCKOUT_PARAMETERS == ["username", "ip_address"]


# Locking


def test_after_the_limit_the_right_password_is_refused_too(dora: Any) -> None:
    mallory = Client(REMOTE_ADDR=MALLORY)

    answers = fail(mallory, "dora", 60)
    right = log_in(mallory, "dora", PASSWORD)

    assert answers[: LIMIT - 1] == [200] * (LIMIT - 1)  # the form again, saying it did not match
    assert set(answers[LIMIT - 1 :]) == {429}
    assert right.status_code == 429
    assert not signed_in(right)


def test_the_lockout_page_says_why_for_how_long_and_what_to_do(dora: Any) -> None:
    mallory = Client(REMOTE_ADDR=MALLORY)
    fail(mallory, "dora", LIMIT)

    page = log_in(mallory, "dora", PASSWORD)

    assert page.status_code == 429
    assert {"registration/locked_out.html", "base.html"} <= {template.name for template in page.templates}
    text = page.content.decode()
    assert "<h1>Login paused</h1>" in text
    assert (
        '<p role="alert">Too many failed logins for this account or from this address, '
        "so logging in is paused for 15 minutes.</p>"
    ) in text
    assert "ask an administrator: they can unlock the account" in text


def test_the_admin_login_locks_out_too_with_the_page_in_the_admins_look() -> None:
    person("root", staff=True)
    mallory = Client(REMOTE_ADDR=MALLORY)

    answers = fail(mallory, "root", LIMIT, ADMIN_LOGIN)
    right = log_in(mallory, "root", PASSWORD, ADMIN_LOGIN)

    assert answers == [200] * (LIMIT - 1) + [429]
    assert right.status_code == 429
    assert not signed_in(right)
    assert "admin/locked_out.html" in [template.name for template in right.templates]
    assert "so logging in is paused for 15 minutes" in right.content.decode()


def test_another_account_from_the_same_address_is_locked(dora: Any, eve: Any) -> None:
    mallory = Client(REMOTE_ADDR=MALLORY)
    fail(mallory, "dora", LIMIT)

    assert log_in(mallory, "eve", PASSWORD).status_code == 429


def test_the_same_account_from_another_address_is_locked(dora: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)

    elsewhere = log_in(Client(REMOTE_ADDR="198.51.100.7"), "dora", PASSWORD)

    assert elsewhere.status_code == 429


def test_other_accounts_from_other_addresses_are_untouched(dora: Any, eve: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)

    assert signed_in(log_in(Client(REMOTE_ADDR="198.51.100.7"), "eve", PASSWORD))


def test_spreading_guesses_over_accounts_is_still_counted_by_address(dora: Any, eve: Any) -> None:
    mallory = Client(REMOTE_ADDR=MALLORY)
    for n in range(LIMIT):
        log_in(mallory, f"guess{n}", "wrong-guess")

    assert log_in(mallory, "dora", PASSWORD).status_code == 429


# Whose address


def test_rotating_x_forwarded_for_does_not_escape_the_lock_by_address(dora: Any, eve: Any) -> None:
    mallory = Client(REMOTE_ADDR=MALLORY)
    for n in range(LIMIT):
        log_in(mallory, f"guess{n}", "wrong-guess", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")

    assert log_in(mallory, "eve", PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200").status_code == 429
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {MALLORY}


def test_behind_a_trusted_proxy_each_client_counts_apart(settings: Any, dora: Any, eve: Any) -> None:
    settings.BRANCHPOINT_TRUSTED_PROXIES = 1
    proxy = Client(REMOTE_ADDR="10.0.0.2")
    for n in range(LIMIT):
        log_in(proxy, f"guess{n}", "wrong-guess", HTTP_X_FORWARDED_FOR=MALLORY)

    locked = log_in(proxy, "eve", PASSWORD, HTTP_X_FORWARDED_FOR=f"192.0.2.9, {MALLORY}")
    other_client = log_in(proxy, "eve", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7")

    assert locked.status_code == 429
    assert signed_in(other_client)


# Successes, the cool-off and resets


def test_a_success_is_logged_and_does_not_wipe_the_failures(dora: Any) -> None:
    client = Client(REMOTE_ADDR=MALLORY)
    fail(client, "dora", LIMIT - 1)

    assert signed_in(log_in(client, "dora", PASSWORD))
    assert AccessLog.objects.filter(username="dora", ip_address=MALLORY).count() == 1
    client.post(reverse("logout"))
    assert fail(client, "dora", 1) == [429]


def test_a_success_wipes_the_failures_when_reset_on_success_is_on(settings: Any, dora: Any) -> None:
    settings.AXES_RESET_ON_SUCCESS = True
    client = Client(REMOTE_ADDR=MALLORY)
    fail(client, "dora", LIMIT - 1)

    assert signed_in(log_in(client, "dora", PASSWORD))
    client.post(reverse("logout"))
    assert fail(client, "dora", LIMIT - 1) == [200] * (LIMIT - 1)


def test_failures_older_than_the_cool_off_no_longer_count(dora: Any) -> None:
    client = Client(REMOTE_ADDR=MALLORY)
    fail(client, "dora", LIMIT)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))

    assert signed_in(log_in(client, "dora", PASSWORD))


def test_the_reset_commands_unlock_an_account_and_an_address(dora: Any, eve: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)

    call_command("axes_reset_username", "dora")
    assert signed_in(log_in(Client(REMOTE_ADDR="198.51.100.7"), "dora", PASSWORD))

    fail(Client(REMOTE_ADDR=MALLORY), "nobody", LIMIT)
    call_command("axes_reset_ip", MALLORY)
    assert signed_in(log_in(Client(REMOTE_ADDR=MALLORY), "eve", PASSWORD))


# What the admin shows


def test_the_admin_lists_the_attempts_and_the_lockout(dora: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)
    root = person("root", staff=True)
    admin = Client()
    admin.force_login(root)

    attempts = admin.get(reverse("admin:axes_accessattempt_changelist"))
    failures = admin.get(reverse("admin:axes_accessfailurelog_changelist"))

    assert attempts.status_code == failures.status_code == 200
    [row] = attempts.context["cl"].result_list
    assert (row.username, row.ip_address, row.failures_since_start) == ("dora", MALLORY, LIMIT)
    logged = failures.context["cl"].result_list
    assert [entry.locked_out for entry in logged] == [True] + [False] * (LIMIT - 1)  # newest first
    assert "wrong-guess" not in row.post_data  # the password is masked


def test_deleting_an_attempt_in_the_admin_unlocks_and_is_logged(dora: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)
    admin = Client()
    admin.force_login(person("root", staff=True))
    [attempt] = AccessAttempt.objects.all()

    admin.post(reverse("admin:axes_accessattempt_delete", args=[attempt.pk]), {"post": "yes"})

    assert signed_in(log_in(Client(REMOTE_ADDR=MALLORY), "dora", PASSWORD))
    entry = AuditEntry.objects.get(action="login.unlock")
    assert (entry.actor_name, entry.via, entry.scope) == ("root", "admin", "dora")


def test_the_admin_cannot_edit_or_delete_the_records(dora: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", 1)
    admin = Client()
    admin.force_login(person("root", staff=True))
    failure = AccessFailureLog.objects.get()

    page = admin.get(reverse("admin:axes_accessfailurelog_change", args=[failure.pk]))
    deleting = admin.post(reverse("admin:axes_accessfailurelog_delete", args=[failure.pk]), {"post": "yes"})

    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert deleting.status_code == 403
    assert AccessFailureLog.objects.count() == 1


# Not passwords


def test_an_api_token_still_works_for_a_locked_account(dora: Any) -> None:
    fail(Client(REMOTE_ADDR=MALLORY), "dora", LIMIT)
    token = token_create(user=dora, name="integration")

    me = Client(REMOTE_ADDR=MALLORY).get(reverse("api:me"), HTTP_AUTHORIZATION=f"Bearer {token.secret}")

    assert me.status_code == 200


def test_signing_in_without_a_password_form_still_works_for_tests_and_tools(dora: Any) -> None:
    """``force_login`` (the tests' and the browser tests' way in) passes no password."""
    client = Client()
    client.force_login(dora)

    assert client.get(reverse("annotation:projects")).status_code == 200
