"""Gold items and quality over the API, by the rules of the admin, ``import_gold`` and the
quality page.

In project support Maggie manages, Rita reviews, Alice annotates; Bob belongs to nothing.

- Managers mark an item gold with expected answers checked by the schemes (a wrong one is a
  400 located under ``answers``), unmark it (its answers kept), and import records all or
  nothing (a bad record is located by its index); reviewers read the list but change nothing.
- The quality figures list each annotator's accuracy and training; the training endpoint
  gives the caller's own state.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from annotation.models import ProjectItem
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
quality: {training: {items: 1, pass_accuracy: 0.5}}
"""


@pytest.fixture
def support() -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita", "alice", "bob")}
    project = project_create(
        name="support", dataset=dataset_with("support-trees", potato_items("s", "S", 3)), config_yaml=CONFIG
    )
    for name, role in (("maggie", "manager"), ("rita", "reviewer"), ("alice", "annotator")):
        membership_add(project=project, user=people[name], role=role)
    items = list(ProjectItem.objects.filter(project=project).order_by("tree_id"))
    return people | {"project": project, "items": items}


def url(name: str, **kwargs: Any) -> str:
    return reverse(f"api:{name}", kwargs={"name": "support", **kwargs})


def put(client: Any, tree_id: int, body: Any) -> Any:
    return client.put(
        url("gold-item", tree_id=tree_id), data=json.dumps(body), content_type="application/json"
    )


def test_a_manager_marks_an_item_gold_and_reviewers_read_it(support: dict[str, Any]) -> None:
    item = support["items"][0]
    body = {"answers": {"quality": {"rating": 4}}, "explanation": "Polite and right."}
    response = put(session_client(support["maggie"]), item.tree_id, body)
    assert response.status_code == 200, response.content
    assert ProjectItem.objects.get(pk=item.pk).is_gold
    listed = session_client(support["rita"]).get(url("gold-items")).json()["results"]
    assert [(row["external_id"], row["answers"]) for row in listed] == [("s-0", {"quality": {"rating": 4}})]
    assert AuditEntry.objects.filter(action="gold.set").count() == 1


def test_a_wrong_expected_answer_is_located_under_answers(support: dict[str, Any]) -> None:
    response = put(
        session_client(support["maggie"]),
        support["items"][0].tree_id,
        {"answers": {"quality": {"rating": 9}}},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"].startswith("answers.quality")
    assert not ProjectItem.objects.filter(is_gold=True).exists()


def test_unmarking_keeps_the_expected_answers(support: dict[str, Any]) -> None:
    item, client = support["items"][0], session_client(support["maggie"])
    put(client, item.tree_id, {"answers": {"quality": {"rating": 4}}})
    assert client.delete(url("gold-item", tree_id=item.tree_id)).status_code == 204
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (False, {"quality": {"rating": 4}})


@pytest.mark.parametrize(("who", "status"), [("rita", 403), ("alice", 403), ("bob", 404)])
def test_only_managers_change_gold_items(support: dict[str, Any], who: str, status: int) -> None:
    response = put(
        session_client(support[who]), support["items"][0].tree_id, {"answers": {"quality": {"rating": 4}}}
    )
    assert response.status_code == status
    assert not ProjectItem.objects.filter(is_gold=True).exists()


def test_an_import_is_all_or_nothing_with_problems_located_by_record(support: dict[str, Any]) -> None:
    client = session_client(support["maggie"])
    records = [{"id": "s-0", "annotations": {"quality": 4}}, {"id": "s-1", "annotations": {"quality": 7}}]
    refused = client.post(
        url("gold-import"), data=json.dumps({"records": records}), content_type="application/json"
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["path"].startswith("records[1]")
    assert not ProjectItem.objects.filter(is_gold=True).exists()
    done = client.post(
        url("gold-import"), data=json.dumps({"records": records[:1]}), content_type="application/json"
    )
    assert (done.status_code, done.json()["items"]) == (200, 1)
    assert ProjectItem.objects.get(project=support["project"], tree__external_id="s-0").is_gold


def test_quality_lists_each_annotator_with_training(support: dict[str, Any]) -> None:
    body = session_client(support["rita"]).get(url("quality")).json()
    [alice] = body["annotators"]
    assert (alice["username"], alice["accuracy"], alice["training"]["state"]) == (
        "alice",
        None,
        "not_started",
    )
    assert session_client(support["alice"]).get(url("quality")).status_code == 403


def test_training_is_the_callers_own_state(support: dict[str, Any]) -> None:
    body = session_client(support["alice"]).get(url("training")).json()
    assert body["state"] == "not_started"
    assert body["items"] == 1


@pytest.mark.parametrize("gold", [1, 3])
def test_the_gold_list_and_quality_take_fixed_queries(
    support: dict[str, Any], django_assert_num_queries: Any, gold: int
) -> None:
    for item in support["items"][:gold]:
        put(session_client(support["maggie"]), item.tree_id, {"answers": {"quality": {"rating": 3}}})
    client = session_client(support["rita"])
    client.get(url("gold-items"))  # the session and the roles are read once
    with django_assert_num_queries(6):
        assert len(client.get(url("gold-items")).json()["results"]) == gold
    with django_assert_num_queries(9):
        assert client.get(url("quality")).status_code == 200
