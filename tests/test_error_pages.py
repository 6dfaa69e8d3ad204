"""What a request gets when nothing else answered it (config/errors.py):

- Under ``/api/`` every error is the API's JSON shape ``{"code", "message"}``: a bug that
  escapes a view is a 500 ``server_error`` that names nothing of the bug; a path no
  endpoint matches is a 404, outside ``/api/v1/`` too; the schema and docs views answer
  their errors (405, 406) in JSON, not in YAML or HTML; a request Django refuses before
  any view (a host not allowed) is a 400.
- Pages get the site's own pages: 404, 403 and a 500 that stands alone (it renders
  nothing that could fail again), none of them with a traceback.

(With DEBUG on Django shows its debug pages instead; the specs run with it off, as
production does.)
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from drf_spectacular.views import SpectacularAPIView

from annotation.api.me import MeApi
from annotation.projects import views as project_views
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SECRET = "the database password is hunter2"


def boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(SECRET)


@pytest.fixture
def client() -> Client:
    """A client that gets the 500 response rather than the exception."""
    return Client(raise_request_exception=False)


@pytest.fixture
def signed_in(client: Client) -> Client:
    user = UserFactory(username="dora")
    user.save()
    client.force_login(user)
    return client


def assert_api_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"code", "message"}
    assert body["code"] == code
    return body


# The API


def test_a_bug_in_an_api_view_is_a_json_500_that_names_nothing(
    signed_in: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(MeApi, "get", boom)

    response = signed_in.get(reverse("api:me"))

    body = assert_api_error(response, 500, "server_error")
    assert body["message"] == "something went wrong on our side; it has been logged for the admins"
    assert SECRET not in response.content.decode()
    assert "RuntimeError" not in response.content.decode()


def test_a_bug_in_the_schema_view_is_a_json_500(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SpectacularAPIView, "get", boom)

    assert_api_error(client.get("/api/schema/"), 500, "server_error")


@pytest.mark.parametrize("path", ["/api/", "/api/v2/projects", "/api/schema/extra", "/api/v1/no-such-thing"])
def test_a_path_no_endpoint_matches_is_a_json_404(client: Client, path: str) -> None:
    assert_api_error(client.get(path), 404, "not_found")


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/", "/api/redoc/"])
def test_the_schema_and_docs_answer_a_wrong_method_in_json(client: Client, path: str) -> None:
    assert_api_error(client.delete(path), 405, "method_not_allowed")


def test_the_schema_answers_an_accept_it_cannot_serve_in_json(client: Client) -> None:
    assert_api_error(client.get("/api/schema/", HTTP_ACCEPT="image/png"), 406, "not_acceptable")


def test_a_host_not_allowed_is_a_json_400_under_the_api(client: Client) -> None:
    assert_api_error(client.get("/api/v1/me", HTTP_HOST="evil.example"), 400, "bad_request")


# Pages


def test_a_bug_in_a_page_is_the_sites_own_500_page(
    signed_in: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(project_views, "projects_with_progress", boom)

    response = signed_in.get(reverse("annotation:projects"))

    assert response.status_code == 500
    assert response["Content-Type"] == "text/html; charset=utf-8"
    text = response.content.decode()
    assert "<h1>Something went wrong</h1>" in text
    assert "annotation/site.css" in text
    assert SECRET not in text


def test_a_missing_page_is_the_sites_own_404_page(signed_in: Client) -> None:
    response = signed_in.get("/no/such/page")

    assert response.status_code == 404
    assert "<h1>Not found</h1>" in response.content.decode()
    assert "Signed in as <strong>dora</strong>" in response.content.decode()  # the site's header


def test_a_host_not_allowed_is_the_sites_own_400_page(client: Client) -> None:
    response = client.get("/accounts/login/", HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert "<h1>Bad request</h1>" in response.content.decode()


def test_an_expired_form_is_the_sites_own_page(db: Any) -> None:
    client = Client(enforce_csrf_checks=True)

    response = client.post(reverse("login"), {"username": "dora", "password": "x"})

    assert response.status_code == 403
    assert "<h1>This form has expired</h1>" in response.content.decode()
