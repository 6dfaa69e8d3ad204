"""Text no database can store is refused at the API's door, with its place, and nothing is
written: a lone UTF-16 surrogate (``"\\ud800"``, which Python's JSON reads but which is not
UTF-8, so psycopg cannot send it and orjson cannot write it back) or a NUL (which
PostgreSQL refuses), in any string or key of a JSON body, a YAML escape inside one, or a
line of an uploaded file. The answer is a 400 in the one error shape, never a server
error, on SQLite and PostgreSQL alike — even where the refusal names the value.

The persona world of tests/api/world.py: Alice annotates alpha and holds one of its items
and a review task of alpha-collect; Maggie manages alpha; Root is a superuser.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.api.schema import ERROR
from annotation.models import Assignment
from tests.api.conftest import token_client
from tests.api.world import ANNOTATOR, MANAGER, SUPERUSER, World, rows_digest

pytestmark = pytest.mark.django_db

V1 = "/api/v1"
SURROGATE = "surrogate_characters_not_allowed"
TEXT_SCHEMES = "annotation_schemes:\n  - {annotation_type: text, name: note"


@dataclass(frozen=True)
class Case:
    label: str
    persona: str
    method: str
    url: str  # may name {item} (Alice's held item) and {task} (her review task)
    body: Any  # JSON, or a file's bytes (a multipart upload)
    path: str  # where the refusal says the text is
    code: str = SURROGATE


def potato(content: str) -> dict[str, Any]:
    return {"id": "s1", "tree": {"id": "r", "role": "user", "content": content}}


CASES = [
    Case(
        "a draft's answer",
        ANNOTATOR,
        "put",
        "{item}/draft",
        {"annotations": {"note": {"text": "a\ud800b"}}, "version": "{version}"},
        "annotations.note.text",
    ),
    Case(
        "a submitted answer",
        ANNOTATOR,
        "post",
        "{item}/submit",
        {"annotations": {"note": {"text": "\udfff"}}, "version": "{version}"},
        "annotations.note.text",
    ),
    Case(
        "a member's role, which the refusal would echo",
        MANAGER,
        "post",
        f"{V1}/projects/alpha/members",
        {"username": "olga", "role": "\ud800"},
        "role",
    ),
    Case(
        "a key of a dataset import's item",
        SUPERUSER,
        "post",
        f"{V1}/datasets/alpha-trees/import",
        {"format": "potato", "items": [{**potato("fine"), "note\ud800": 1}]},
        "items[0]",
    ),
    Case(
        "a dataset import's text",
        SUPERUSER,
        "post",
        f"{V1}/datasets/alpha-trees/import",
        {"format": "potato", "items": [potato("\ud800")]},
        "items[0].tree.content",
    ),
    Case(
        "a project's title",
        SUPERUSER,
        "post",
        f"{V1}/projects",
        {"name": "gamma", "dataset": "alpha-trees", "config_yaml": TEXT_SCHEMES + "}\n", "title": "\ud800"},
        "title",
    ),
    Case(
        "a YAML escape in a project's config",
        SUPERUSER,
        "post",
        f"{V1}/projects",
        {
            "name": "gamma",
            "dataset": "alpha-trees",
            "config_yaml": TEXT_SCHEMES + ', description: "\\ud800"}\n',
        },
        "config_yaml.line 2 column 54",
    ),
    Case(
        "an imported answer",
        MANAGER,
        "post",
        f"{V1}/projects/alpha/import",
        {"records": [{"id": "alpha-1", "user": "olga", "annotations": {"note": {"text": "\ud800"}}}]},
        "records[0].annotations.note.text",
    ),
    Case(
        "a collection task's language",
        ANNOTATOR,
        "post",
        f"{V1}/projects/alpha-collect/collect/tasks/next",
        {"type": "initial_prompt", "lang": "\ud800"},
        "lang",
    ),
    Case(
        "a collection task's answer",
        ANNOTATOR,
        "post",
        "{task}/submit",
        {"labels": {"spam": 0, "\ud800": 1}},
        "labels",
    ),
    Case(
        "a NUL in a collection task's answer",
        ANNOTATOR,
        "post",
        "{task}/submit",
        {"labels": {"spam": 0}, "text": "a\u0000"},
        "text",
        "null_characters_not_allowed",
    ),
]
FILES = [
    Case(
        "a line of an uploaded tree file",
        SUPERUSER,
        "post",
        f"{V1}/datasets/alpha-trees/import",
        (json.dumps(potato("ok")) + "\n" + json.dumps(potato("\ud800"))).encode(),
        "tree.content",
    ),
    Case(
        "a line of an uploaded answers file",
        MANAGER,
        "post",
        f"{V1}/projects/alpha/import",
        json.dumps({"id": "alpha-1", "user": "olga", "annotations": {"note": {"text": "x\udc00"}}}).encode(),
        "annotations.note.text",
    ),
]


def url_of(world: World, case: Case) -> str:
    item = f"{V1}/projects/alpha/items/{world.held.tree_id}"
    task = f"{V1}/projects/alpha-collect/collect/tasks/{world.task.pk}"
    return case.url.format(item=item, task=task)


def with_version(body: Any, world: World) -> Any:
    if isinstance(body, dict) and body.get("version") == "{version}":
        return body | {"version": Assignment.objects.get(pk=world.held.pk).version}
    return body


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_a_json_body_with_unstorable_text_is_a_located_400_and_writes_nothing(
    shared_world: World, case: Case
) -> None:
    client = token_client(shared_world, case.persona)
    before = rows_digest()

    # json.dumps writes the characters as the escapes a client sends.
    body = json.dumps(with_version(case.body, shared_world))
    response = getattr(client, case.method)(
        url_of(shared_world, case), data=body, content_type="application/json"
    )

    assert response.status_code == 400, response.content
    payload = response.json()
    jsonschema.validate(payload, ERROR)
    assert (payload["errors"][0]["path"], payload["errors"][0]["code"]) == (case.path, case.code)
    assert rows_digest() == before


@pytest.mark.parametrize("case", FILES, ids=[case.label for case in FILES])
def test_an_uploaded_file_with_unstorable_text_is_refused_by_line(shared_world: World, case: Case) -> None:
    client = token_client(shared_world, case.persona)
    fields = {"format": "potato"} if "datasets" in case.url else {}
    before = rows_digest()

    response = client.post(case.url, {**fields, "file": SimpleUploadedFile("f.jsonl", case.body)})

    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    line = case.body.count(b"\n") + 1
    assert (error["line"], error["path"]) == (line, case.path)
    assert "lone UTF-16 surrogate" in error["message"]
    assert rows_digest() == before


def test_the_refusal_names_the_character_and_why(shared_world: World) -> None:
    body = {"annotations": {"note": {"text": "a\ud83db"}}, "version": "{version}"}

    response = token_client(shared_world, ANNOTATOR).put(
        f"{V1}/projects/alpha/items/{shared_world.held.tree_id}/draft",
        data=json.dumps(with_version(body, shared_world)),
        content_type="application/json",
    )

    assert response.json()["message"] == (
        "annotations.note.text: contains a lone UTF-16 surrogate (\\ud83d), which is not text and cannot be stored"
    )


def test_characters_beyond_the_first_plane_are_text_and_kept(shared_world: World) -> None:
    """A surrogate pair (how JSON escapes an emoji) is one character, not a lone surrogate."""
    body = {"annotations": {"note": {"text": "ok \U0001f600"}}, "version": "{version}"}

    response = token_client(shared_world, ANNOTATOR).put(
        f"{V1}/projects/alpha/items/{shared_world.held.tree_id}/draft",
        data=json.dumps(with_version(body, shared_world)),
        content_type="application/json",
    )

    assert response.status_code == 200, response.content
