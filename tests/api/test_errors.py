"""Every error the API gives is JSON in one shape — a machine-readable ``code``, a sentence,
and for refused input each problem with its ``path`` — with the status that says what
happened: 400 for bad input, 401, 403, 404, 405, 409 for a stale version, 413, 415, 429;
never a server error, whatever the body holds.

The persona world of tests/api/world.py: Alice annotates alpha and holds one of its items;
Root is a superuser; Maggie manages alpha.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema
import pytest
from django.test import Client

from annotation.api.schema import ERROR
from annotation.models import Annotation, Assignment
from tests.api.conftest import token_client
from tests.api.world import ANNOTATOR, ANONYMOUS, MANAGER, OUTSIDER, SUPERUSER, World

pytestmark = pytest.mark.django_db

V1 = "/api/v1"


def item_url(world: World, action: str) -> str:
    return f"{V1}/projects/alpha/items/{world.held.tree_id}/{action}"


@dataclass(frozen=True)
class Bad:
    """A request and the error it must get: status, code and (for refused input) the paths."""

    label: str
    persona: str
    method: str
    url: str  # may name {draft} and {skip}: the held item's endpoints
    body: bytes | None
    content_type: str
    status: int
    code: str
    paths: tuple[str, ...] | None = None
    message: str | None = None


def raw(value: Any) -> bytes:
    return json.dumps(value).encode()


CASES = [
    Bad(
        "broken json",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b'{"name": ',
        "application/json",
        400,
        "parse_error",
    ),
    Bad(
        "nan is not json",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b'{"name": NaN}',
        "application/json",
        400,
        "parse_error",
    ),
    Bad(
        "not utf-8",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b'{"name": "\xff\xfe"}',
        "application/json",
        400,
        "parse_error",
    ),
    Bad(
        "nested too deeply",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b"[" * 100_000 + b"]" * 100_000,
        "application/json",
        400,
        "parse_error",
        message="JSON parse error - the document is nested too deeply",
    ),
    Bad(
        "a list for an object",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        raw([{"name": "x"}]),
        "application/json",
        400,
        "invalid",
        paths=("",),
        message="Invalid data. Expected a dictionary, but got list.",
    ),
    Bad(
        "a missing field",
        SUPERUSER,
        "post",
        f"{V1}/projects",
        raw({"name": "gamma"}),
        "application/json",
        400,
        "invalid",
        paths=("dataset", "config_yaml"),
    ),
    Bad(
        "a version out of range",
        ANNOTATOR,
        "put",
        "{draft}",
        raw({"annotations": {}, "version": 2**40}),
        "application/json",
        400,
        "invalid",
        paths=("version",),
    ),
    Bad(
        "a bad answer, located",
        ANNOTATOR,
        "put",
        "{draft}",
        raw({"annotations": {"quality": {"rating": 9}}, "version": 1}),
        "application/json",
        400,
        "invalid",
        paths=("quality.rating",),
    ),
    Bad(
        "a NUL character in an answer",
        ANNOTATOR,
        "put",
        "{draft}",
        raw({"annotations": {"note": {"text": "a\u0000b"}}, "version": 1}),
        "application/json",
        400,
        "invalid",
        paths=("annotations.note.text",),
        message="annotations.note.text: contains a NUL character (\\u0000), which cannot be stored",
    ),
    Bad(
        "a NUL character in the key of an imported answer",
        MANAGER,
        "post",
        f"{V1}/projects/alpha/import",
        raw(
            {
                "records": [
                    {"id": "alpha-1", "user": "olga", "annotations": {"note": {"te\u0000xt": "\u0000"}}}
                ]
            }
        ),
        "application/json",
        400,
        "invalid",
        paths=("records[0].annotations.note",),
    ),
    Bad(
        "a stale version",
        ANNOTATOR,
        "put",
        "{draft}",
        raw({"annotations": {"quality": {"rating": 3}}, "version": 7}),
        "application/json",
        409,
        "stale_version",
    ),
    Bad(
        "skipping with a stale version",
        ANNOTATOR,
        "post",
        "{skip}",
        raw({"version": 7}),
        "application/json",
        409,
        "stale_version",
    ),
    Bad(
        "plain text",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b"name=x",
        "text/plain",
        415,
        "unsupported_media_type",
    ),
    Bad(
        "a form where JSON is read",
        SUPERUSER,
        "post",
        f"{V1}/datasets",
        b"name=x",
        "application/x-www-form-urlencoded",
        415,
        "unsupported_media_type",
    ),
    Bad("a method not served", SUPERUSER, "delete", f"{V1}/datasets", None, "", 405, "method_not_allowed"),
    Bad(
        "an unknown endpoint",
        SUPERUSER,
        "get",
        f"{V1}/datasets/alpha-trees/trees",
        None,
        "",
        404,
        "not_found",
    ),
    Bad("a trailing slash", SUPERUSER, "get", f"{V1}/datasets/", None, "", 404, "not_found"),
    Bad("no credentials", ANONYMOUS, "get", f"{V1}/datasets", None, "", 401, "not_authenticated"),
    Bad("no right", OUTSIDER, "get", f"{V1}/projects/beta/members", None, "", 403, "permission_denied"),
    Bad("no such project", OUTSIDER, "get", f"{V1}/projects/alpha", None, "", 404, "not_found"),
]


def send(world: World, case: Bad) -> Any:
    client: Client = token_client(world, case.persona)
    url = case.url.format(draft=item_url(world, "draft"), skip=item_url(world, "skip"))
    if case.body is None:
        return getattr(client, case.method)(url)
    return getattr(client, case.method)(url, data=case.body, content_type=case.content_type)


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_each_error_is_json_with_its_status_code_and_paths(shared_world: World, case: Bad) -> None:
    before = Annotation.objects.count(), Assignment.objects.get(pk=shared_world.held.pk).version

    response = send(shared_world, case)

    assert response.status_code == case.status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    jsonschema.validate(body, ERROR)
    assert body["code"] == case.code
    assert body["message"]
    if case.paths is not None:
        assert [error["path"] for error in body["errors"]] == list(case.paths)
    if case.message is not None:
        assert body["message"] == case.message
    # Nothing refused changed anything.
    assert (Annotation.objects.count(), Assignment.objects.get(pk=shared_world.held.pk).version) == before


def test_a_stale_version_says_which_version_is_current(shared_world: World) -> None:
    case = next(case for case in CASES if case.label == "a stale version")

    body = send(shared_world, case).json()

    assert body["current_version"] == Assignment.objects.get(pk=shared_world.held.pk).version
    assert body["message"]


def test_a_bad_answer_is_named_with_the_scheme_and_the_reason(shared_world: World) -> None:
    case = next(case for case in CASES if case.label == "a bad answer, located")

    [error] = send(shared_world, case).json()["errors"]

    assert error["code"] == "invalid"
    assert "5" in error["message"]  # the scale's top, so the caller knows what fits


def test_a_message_counts_the_problems_it_does_not_spell_out(shared_world: World) -> None:
    case = next(case for case in CASES if case.label == "a missing field")

    assert (
        send(shared_world, case).json()["message"] == "dataset: This field is required. (and 1 more problem)"
    )


def test_an_import_with_many_bad_items_lists_the_first_hundred_and_counts_them_all(
    shared_world: World,
) -> None:
    items = [{"id": f"bad-{index}"} for index in range(150)]

    response = token_client(shared_world, SUPERUSER).post(
        f"{V1}/datasets/alpha-trees/import",
        data=json.dumps({"format": "potato", "items": items}),
        content_type="application/json",
    )

    body = response.json()
    assert response.status_code == 400
    assert body["message"] == "nothing imported into alpha-trees: 150 errors in 150 items"
    assert len(body["errors"]) == 100
    assert body["errors"][99]["path"] == "items[99].tree"
    assert len(body["report"]["errors"]) == 150


def test_a_caller_accepting_only_html_is_told_so_in_json(shared_world: World) -> None:
    client = token_client(shared_world, SUPERUSER)

    refused = client.get(f"{V1}/projects/alpha", HTTP_ACCEPT="text/html")
    browser = client.get(f"{V1}/projects/alpha", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    download = client.get(f"{V1}/datasets/alpha-trees/export?format=potato", HTTP_ACCEPT="text/html")

    assert refused.status_code == 406
    assert refused.json() == {
        "code": "not_acceptable",
        "message": "Could not satisfy the request Accept header.",
    }
    assert browser.status_code == 200
    assert download.status_code == 200  # a download is its format, whatever is asked for
