"""The final-answer endpoints: ``GET/PUT projects/{name}/items/{tree}/final``.

Rita (reviewer) reads an item's fields side by side, disagreements first, and
saves its final answer by field, at the version she saw; a stale version is a
409 with the current one, a field left undecided a located 400, an annotator a
403 — the shapes of every API error. Reading it takes seven queries whatever the number of fields.
"""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.api.tokens import token_create
from tests.annotation.review.adjudicated import adjudicated_project, all_submit, people

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    who = people()
    project = adjudicated_project(who)
    tree_id = all_submit(project, who)
    clients = {
        name: Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=who[name], name='t').secret}")
        for name in ("rita", "maggie", "alice")
    }
    return project, tree_id, clients


def url(project, tree_id) -> str:
    return f"/api/v1/projects/{project.name}/items/{tree_id}/final"


def test_get_lists_the_fields_disagreements_first_with_each_annotators_value(
    scene, django_assert_num_queries
):
    project, tree_id, clients = scene

    with django_assert_num_queries(7):
        response = clients["rita"].get(url(project, tree_id))

    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 0 and body["answers"] is None
    assert body["annotators"] == ["alice", "bob", "carol"]
    assert [field["name"] for field in body["fields"]] == [
        "response/node/resp_a",
        "response/path",
        "response/comparison/root",
        "overall",
        "response/node/resp_b",
    ]
    assert body["fields"][0]["values"] == {
        "alice": {"rating": 4},
        "bob": {"rating": 5},
        "carol": {"rating": 4},
    }
    assert body["fields"][-1] == {
        "name": "response/node/resp_b",
        "values": {"alice": {"rating": 2}, "bob": {"rating": 2}, "carol": {"rating": 2}},
        "agreed": True,
        "prefilled": True,
    }


def test_put_saves_the_final_answer_by_field_and_a_stale_version_is_a_409(scene):
    project, tree_id, clients = scene
    body = {
        "version": 0,
        "take": "alice",
        "fields": {"overall": {"from": "carol"}, "response/node/resp_a": {"value": {"rating": 3}}},
    }

    saved = clients["rita"].put(url(project, tree_id), body, content_type="application/json")

    assert saved.status_code == 200, saved.json()
    final = saved.json()
    assert final["version"] == 1 and final["decided_by"] == "rita"
    assert final["answers"]["overall"] == {"label": "Unhelpful"}
    assert final["provenance"]["response/node/resp_a"] == "edited"
    assert final["provenance"]["response/path"] == "alice"
    stale = clients["maggie"].put(url(project, tree_id), body, content_type="application/json")
    assert stale.status_code == 409
    assert stale.json() | {"message": ""} == {"code": "stale_version", "current_version": 1, "message": ""}


def test_undecided_fields_are_a_located_400_and_annotators_are_refused(scene):
    project, tree_id, clients = scene

    refused = clients["rita"].put(url(project, tree_id), {"version": 0}, content_type="application/json")

    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "invalid"
    assert {(error["path"], error["code"]) for error in body["errors"]} == {
        ("fields.overall", "undecided"),
        ("fields.response/node/resp_a", "undecided"),
        ("fields.response/path", "undecided"),
        ("fields.response/comparison/root", "undecided"),
    }
    assert clients["alice"].get(url(project, tree_id)).status_code == 403
    put = clients["alice"].put(
        url(project, tree_id), {"version": 0, "take": "alice"}, content_type="application/json"
    )
    assert put.status_code == 403 and put.json()["code"] == "permission_denied"
