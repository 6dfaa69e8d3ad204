"""What a process keeps a moment of the rows every API request reads (annotation.recent): the
caller's token with its user, the project with the caller's roles. Kept for
``API_AUTH_CACHE_SECONDS``; what changes in this process is read anew at once, what changes
elsewhere once those seconds pass.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from annotation import recent
from annotation.api.tokens import TokenInvalid, token_authenticate, token_create, tokens_forget, tokens_revoke
from annotation.models import ApiToken
from annotation.permissions import can_annotate, project_with_roles, projects_forget
from annotation.projects.services import membership_add, membership_remove
from tests.factories import PersonaFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def kept(settings: Any) -> Any:
    settings.API_AUTH_CACHE_SECONDS = 60
    tokens_forget()
    projects_forget()
    yield
    tokens_forget()
    projects_forget()


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Move this process's clock past the kept seconds."""

    def move(seconds: float) -> None:
        now = recent.time.monotonic() + seconds
        monkeypatch.setattr(recent.time, "monotonic", lambda: now)

    return move


def used_token(user: Any) -> str:
    """A token whose last use is noted already, so that checking it writes nothing."""
    secret = token_create(user=user, name="ci").secret
    token_authenticate(secret)  # notes the use, and reads the token anew next time
    token_authenticate(secret)
    return secret


def test_a_token_is_read_once_while_kept(django_assert_num_queries: Any) -> None:
    secret = used_token(PersonaFactory())

    with django_assert_num_queries(0):
        token = token_authenticate(secret)

    assert token.user.is_authenticated


def test_each_check_gets_its_own_token_and_user(django_assert_num_queries: Any) -> None:
    secret = used_token(PersonaFactory())
    first = token_authenticate(secret)
    first.user.__dict__["_branchpoint_roles"] = {1: frozenset({"manager"})}

    second = token_authenticate(secret)

    assert second is not first and second.user is not first.user
    assert "_branchpoint_roles" not in second.user.__dict__


def test_revoking_refuses_the_token_at_once_in_this_process() -> None:
    secret = used_token(PersonaFactory())

    tokens_revoke(ApiToken.objects.all())

    with pytest.raises(TokenInvalid, match="revoked"):
        token_authenticate(secret)


def test_a_user_deactivated_here_is_refused_at_once() -> None:
    user = PersonaFactory()
    secret = used_token(user)

    user.is_active = False
    user.save()

    with pytest.raises(TokenInvalid, match="inactive"):
        token_authenticate(secret)


def test_a_revocation_made_elsewhere_is_seen_once_the_seconds_pass(later: Any) -> None:
    secret = used_token(PersonaFactory())
    ApiToken.objects.update(revoked_at=timezone.now())  # another process: no signal reaches here

    token_authenticate(secret)  # still kept
    later(61)

    with pytest.raises(TokenInvalid, match="revoked"):
        token_authenticate(secret)


def test_nothing_is_kept_with_zero_seconds(settings: Any, django_assert_num_queries: Any) -> None:
    settings.API_AUTH_CACHE_SECONDS = 0
    secret = used_token(PersonaFactory())

    with django_assert_num_queries(1):
        token_authenticate(secret)


def test_a_project_and_the_callers_roles_are_read_once_while_kept(django_assert_num_queries: Any) -> None:
    project, user = ProjectFactory(), PersonaFactory()
    membership_add(project=project, user=user, role="annotator")
    project_with_roles(user, project.name)
    other_request_user = type(user).objects.get(pk=user.pk)

    with django_assert_num_queries(0):
        again = project_with_roles(other_request_user, project.name)

    assert again.pk == project.pk and again is not project
    assert can_annotate(other_request_user, again)


def test_a_member_removed_here_loses_the_role_at_once() -> None:
    project, user = ProjectFactory(), PersonaFactory()
    membership_add(project=project, user=user, role="annotator")
    project_with_roles(user, project.name)

    membership_remove(project=project, user=user, role="annotator")
    fresh = type(user).objects.get(pk=user.pk)

    assert not can_annotate(fresh, project_with_roles(fresh, project.name))


def test_a_role_changed_elsewhere_is_seen_once_the_seconds_pass(later: Any) -> None:
    project, user = ProjectFactory(), PersonaFactory()
    membership_add(project=project, user=user, role="annotator")
    project_with_roles(user, project.name)
    project.memberships.update(role="reviewer")  # another process: no signal reaches here

    assert can_annotate(user, project_with_roles(type(user).objects.get(pk=user.pk), project.name))
    later(61)
    fresh = type(user).objects.get(pk=user.pk)

    assert not can_annotate(fresh, project_with_roles(fresh, project.name))
