"""API tokens: made in the admin or with ``manage.py create_token USER``, shown once, stored
only as a hash, sent as ``Authorization: Bearer <token>``, revocable; and the session for
the pages' scripts.

Alice is an integration's owner; Root is a superuser who manages tokens in the admin.
"""

from __future__ import annotations

import hashlib
import io
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.api.tokens import (
    LAST_USED_RESOLUTION,
    TokenInvalid,
    token_authenticate,
    token_create,
    tokens_revoke,
)
from annotation.models import ApiToken
from tests.annotation.annotator_items import person

pytestmark = pytest.mark.django_db

ME = reverse("api:me")
TOKEN_ADD = reverse("admin:annotation_apitoken_add")
TOKEN_CHANGELIST = reverse("admin:annotation_apitoken_changelist")


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def as_root() -> Client:
    client = Client()
    client.force_login(person("root", is_superuser=True, is_staff=True))
    return client


def me(secret: str | None, scheme: str = "Bearer", **options: Any) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"{scheme} {secret}"} if secret is not None else {}
    return Client(**options).get(ME, **headers)


# Made, stored, sent


def test_a_token_is_stored_only_as_the_sha256_of_its_secret(alice: Any) -> None:
    made = token_create(user=alice, name="etl")

    row = ApiToken.objects.values().get(pk=made.token.pk)
    assert made.secret.startswith(f"bp_{row['prefix']}_")
    assert row["key_hash"] == hashlib.sha256(made.secret.encode()).hexdigest()
    assert not any(made.secret in str(value) for value in row.values())
    assert len(made.secret) > 40


def test_each_token_is_a_fresh_secret_with_its_own_prefix(alice: Any) -> None:
    first, second = token_create(user=alice, name="one"), token_create(user=alice, name="two")

    assert first.secret != second.secret
    assert first.token.prefix != second.token.prefix


def test_a_bearer_token_acts_as_its_user_and_names_itself(alice: Any) -> None:
    made = token_create(user=alice, name="etl")

    response = me(made.secret)

    assert response.status_code == 200
    assert response.json() == {"username": "alice", "is_superuser": False, "token": "etl"}


def test_the_token_keyword_is_read_too_in_any_case(alice: Any) -> None:
    made = token_create(user=alice, name="etl")

    assert me(made.secret, scheme="Token").json()["username"] == "alice"
    assert me(made.secret, scheme="bearer").json()["username"] == "alice"


def test_a_token_needs_no_csrf_token_for_writes(alice: Any) -> None:
    """CSRF protects cookies; a header an attacker's page cannot set needs none."""
    made = token_create(user=alice, name="etl")
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {made.secret}")

    response = client.post(reverse("api:projects"), data={}, content_type="application/json")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"  # refused for rights, not for CSRF
    assert "CSRF" not in response.json()["message"]


def test_without_a_token_the_session_identifies_the_caller(alice: Any) -> None:
    client = Client()
    client.force_login(alice)

    response = client.get(ME)

    assert response.json() == {"username": "alice", "is_superuser": False, "token": None}


def test_with_neither_the_answer_is_a_401_asking_for_a_bearer_token() -> None:
    response = me(None)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response.json() == {
        "code": "not_authenticated",
        "message": "Authentication credentials were not provided.",
    }


def test_a_token_beats_the_session_it_comes_with(alice: Any) -> None:
    """A script holding a token acts as the token's user even from a signed-in browser."""
    bob = person("bob")
    made = token_create(user=bob, name="bob's")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {made.secret}")
    client.force_login(alice)

    assert client.get(ME).json()["username"] == "bob"


# Refused tokens


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("revoked", "the token was revoked"),
        ("expired", "the token has expired"),
        ("inactive", "the token's user is inactive"),
        ("wrong secret", "the token is not valid"),
        ("unknown prefix", "the token is not valid"),
        ("not ours", "the token is not a Branchpoint API token (bp_...)"),
    ],
)
def test_a_token_that_does_not_work_is_a_401_saying_why_not_an_anonymous_request(
    alice: Any, state: str, message: str
) -> None:
    made = token_create(user=alice, name="etl")
    secret = made.secret
    if state == "revoked":
        tokens_revoke(ApiToken.objects.filter(pk=made.token.pk))
    elif state == "expired":
        ApiToken.objects.filter(pk=made.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    elif state == "inactive":
        type(alice).objects.filter(pk=alice.pk).update(is_active=False)
    elif state == "wrong secret":
        secret = secret[:-4] + ("aaaa" if not secret.endswith("aaaa") else "bbbb")
    elif state == "unknown prefix":
        secret = "bp_zzzzzzzz_" + secret.split("_", 2)[2]
    else:
        secret = "ghp_0123456789abcdef"

    response = me(secret)

    assert response.status_code == 401
    assert response.json() == {"code": "authentication_failed", "message": message}


def test_a_wrong_secret_is_not_told_apart_from_a_revoked_one(alice: Any) -> None:
    """Only a token whose secret matched learns that it was revoked or expired."""
    made = token_create(user=alice, name="etl")
    tokens_revoke(ApiToken.objects.filter(pk=made.token.pk))

    assert me(made.secret[:-1] + "x").json()["message"] == "the token is not valid"


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer a b", "Bearer bp_\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9_x"]
)
def test_a_malformed_authorization_header_is_a_json_401(alice: Any, header: str) -> None:
    response = Client().get(ME, HTTP_AUTHORIZATION=header)

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_other_authorization_schemes_are_left_to_the_session(alice: Any) -> None:
    client = Client(HTTP_AUTHORIZATION="Basic YWxpY2U6c2VjcmV0")
    client.force_login(alice)

    assert client.get(ME).json()["username"] == "alice"


def test_revoking_stops_the_token_at_once_and_leaves_the_others(alice: Any) -> None:
    kept, dropped = token_create(user=alice, name="kept"), token_create(user=alice, name="dropped")
    assert me(dropped.secret).status_code == 200

    assert tokens_revoke(ApiToken.objects.filter(pk=dropped.token.pk)) == 1
    assert tokens_revoke(ApiToken.objects.filter(pk=dropped.token.pk)) == 0  # revoked once only

    assert me(dropped.secret).status_code == 401
    assert me(kept.secret).status_code == 200


def test_last_use_is_noted_at_most_once_a_minute(alice: Any, django_assert_num_queries: Any) -> None:
    made = token_create(user=alice, name="etl")
    start = timezone.now()

    with django_assert_num_queries(2):  # the token with its user, the note
        token_authenticate(made.secret, now=start)
    with django_assert_num_queries(1):
        token_authenticate(made.secret, now=start + LAST_USED_RESOLUTION / 2)
    assert ApiToken.objects.get(pk=made.token.pk).last_used_at == start
    later = start + LAST_USED_RESOLUTION
    token_authenticate(made.secret, now=later)
    assert ApiToken.objects.get(pk=made.token.pk).last_used_at == later


def test_an_expiry_in_the_future_still_works_until_it_passes(alice: Any) -> None:
    soon = timezone.now() + timedelta(hours=1)
    made = token_create(user=alice, name="etl", expires_at=soon)

    assert token_authenticate(made.secret).pk == made.token.pk
    with pytest.raises(TokenInvalid, match="expired"):
        token_authenticate(made.secret, now=soon)


# manage.py create_token


def create_token(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_token_prints_the_token_alone_on_standard_output_and_it_works(alice: Any) -> None:
    out, err = create_token("alice", "--name", "nightly export")

    secret = out.strip()
    assert out == secret + "\n"
    assert me(secret).json() == {"username": "alice", "is_superuser": False, "token": "nightly export"}
    token = ApiToken.objects.get(user=alice)
    assert f"bp_{token.prefix}_…" in err
    assert "not shown again" in err
    assert secret not in err
    assert token.expires_at is None


def test_create_token_names_a_token_cli_by_default_and_can_make_it_expire(alice: Any) -> None:
    before = timezone.now()

    create_token("alice", "--expires-days", "30")

    token = ApiToken.objects.get(user=alice)
    assert token.name == "cli"
    assert before + timedelta(days=30) <= token.expires_at <= timezone.now() + timedelta(days=30)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nobody"], 'no user named "nobody"'),
        (["alice", "--expires-days", "0"], "--expires-days must be from 1 to 36,500"),
        (["alice", "--expires-days", "1000000000"], "--expires-days must be from 1 to 36,500"),
        (["alice", "--name", "x" * 101], "--name must be at most 100 characters (it has 101)"),
    ],
)
def test_create_token_refuses_bad_arguments_with_exit_code_2_and_makes_nothing(
    alice: Any, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError) as caught:
        create_token(*args)

    assert caught.value.returncode == 2
    assert str(caught.value) == message
    assert not ApiToken.objects.exists()


# The admin


def test_adding_a_token_in_the_admin_shows_its_secret_once_and_keeps_only_its_hash(
    as_root: Client, alice: Any
) -> None:
    response = as_root.post(
        TOKEN_ADD, {"user": alice.pk, "name": "dashboard", "expires_at_0": ""}, follow=True
    )

    assert response.redirect_chain == [(TOKEN_CHANGELIST, 302)]
    token = ApiToken.objects.get(user=alice)
    [shown] = [str(message) for message in response.context["messages"] if "<code>" in str(message)]
    secret = shown.split("<code>")[1].split("</code>")[0]
    assert secret.encode() in response.content
    assert secret.startswith(f"bp_{token.prefix}_")
    assert token.key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert me(secret).json()["token"] == "dashboard"
    # Never again: not on the list, not on the token's page.
    for url in (TOKEN_CHANGELIST, reverse("admin:annotation_apitoken_change", args=[token.pk])):
        page = as_root.get(url)
        assert page.status_code == 200
        assert secret.encode() not in page.content
        assert f"bp_{token.prefix}_…".encode() in page.content


def test_a_token_cannot_be_edited_in_the_admin(as_root: Client, alice: Any) -> None:
    made = token_create(user=alice, name="etl")
    url = reverse("admin:annotation_apitoken_change", args=[made.token.pk])

    response = as_root.post(url, {"user": alice.pk, "name": "renamed"})

    assert response.status_code == 403
    assert ApiToken.objects.get(pk=made.token.pk).name == "etl"


def test_the_admin_revokes_the_selected_tokens(as_root: Client, alice: Any) -> None:
    dropped, kept = token_create(user=alice, name="dropped"), token_create(user=alice, name="kept")

    response = as_root.post(
        TOKEN_CHANGELIST, {"action": "revoke", "_selected_action": [dropped.token.pk]}, follow=True
    )

    assert "1 token revoked." in [str(message) for message in response.context["messages"]]
    assert me(dropped.secret).status_code == 401
    assert me(kept.secret).status_code == 200
    assert b"revoked" in as_root.get(TOKEN_CHANGELIST).content


def test_tokens_are_managed_by_admins_only(alice: Any) -> None:
    client = Client()
    client.force_login(person("staffer", is_staff=True))

    assert client.get(TOKEN_CHANGELIST).status_code == 403
    assert client.post(TOKEN_ADD, {"user": alice.pk, "name": "mine"}).status_code == 403
    assert not ApiToken.objects.exists()
