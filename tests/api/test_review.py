"""Reviewing over the API, by the same rules as the reviewer's pages.

In project support (two answers per item) Maggie manages, Rita reviews, Alice and
Olga annotate; Bob belongs to nothing. Alice and Olga submit the first item.

- The queue lists items with work waiting for review, each annotator's work on them,
  and counts by review status; a filter that is not one is a 400 naming ``status``.
- One item shows each annotator's answers with the version a decision must name.
- A decision names the annotator and the version seen: accepted, or rejected with a
  comment (the work goes back to its annotator); at an old version it is a 409
  ``stale_version`` with the current one; a rejection without a comment, or on one's
  own work, is refused with the service's code.
- Only reviewers and managers review (403); outsiders do not see the project (404).
- The queue and the item are read in a fixed number of queries, whatever the number
  of items.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Membership, Review
from annotation.projects.services import membership_add, project_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
assignment: {annotations_per_item: 2}
"""


def submit(project: Any, user: Any, rating: int) -> Assignment:
    held = item_next(project=project, user=user)
    return item_submit(
        project=project,
        tree=held.tree,
        user=user,
        answers={"quality": {"rating": rating}},
        version=held.version,
    )


def build(items: int = 3) -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita", "alice", "olga", "bob")}
    project = project_create(
        name="support",
        dataset=dataset_with("support-trees", potato_items("s", "S", items)),
        config_yaml=CONFIG,
    )
    for name, role in (
        ("maggie", "manager"),
        ("rita", "reviewer"),
        ("alice", "annotator"),
        ("olga", "annotator"),
    ):
        membership_add(project=project, user=people[name], role=role)
    return people | {"project": project}


@pytest.fixture
def support() -> dict[str, Any]:
    world = build()
    world["alice_work"] = submit(world["project"], world["alice"], 4)
    world["olga_work"] = submit(world["project"], world["olga"], 2)
    return world


def queue_url(**query: str) -> str:
    url = reverse("api:review-queue", kwargs={"name": "support"})
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def item_url(tree_id: int) -> str:
    return reverse("api:review-item", kwargs={"name": "support", "tree_id": tree_id})


def decide(client: Client, tree_id: int, body: dict[str, Any]) -> Any:
    url = reverse("api:review-decisions", kwargs={"name": "support", "tree_id": tree_id})
    return client.post(url, data=json.dumps(body), content_type="application/json")


def test_the_queue_lists_items_with_work_waiting_and_each_annotators_work(support: dict[str, Any]) -> None:
    body = session_client(support["rita"]).get(queue_url()).json()
    assert body["status"] == "pending"
    assert body["counts"] == {"pending": 2, "accepted": 0, "rejected": 0, "all": 2}
    [row] = body["results"]
    assert row["tree_id"] == support["alice_work"].tree_id
    assert [(w["annotator"], w["review_status"], w["label"]) for w in row["work"]] == [
        ("alice", "", "waiting for review"),
        ("olga", "", "waiting for review"),
    ]


def test_a_filter_that_is_not_one_is_a_400_naming_it(support: dict[str, Any]) -> None:
    response = session_client(support["rita"]).get(queue_url(status="soon"))
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == ["status"]


def test_the_item_shows_each_annotators_answers_and_version(support: dict[str, Any]) -> None:
    body = session_client(support["rita"]).get(item_url(support["alice_work"].tree_id)).json()
    by_name = {work["annotator"]: work for work in body["work"]}
    assert by_name["alice"]["answers"] == {"quality": {"rating": 4}}
    assert by_name["alice"]["version"] == support["alice_work"].version


def test_accepting_at_the_version_seen_records_the_decision(support: dict[str, Any]) -> None:
    work = support["alice_work"]
    response = decide(
        session_client(support["rita"]),
        work.tree_id,
        {"annotator": "alice", "decision": "accepted", "version": work.version},
    )
    assert response.status_code == 201, response.content
    assert response.json()["decision"] == "accepted"
    assert Assignment.objects.get(pk=work.pk).review_status == "accepted"
    assert AuditEntry.objects.filter(action="annotation.review").count() == 1


def test_rejecting_sends_the_work_back_and_an_old_version_is_a_409(support: dict[str, Any]) -> None:
    work, client = support["alice_work"], session_client(support["rita"])
    seen = {
        "annotator": "alice",
        "decision": "rejected",
        "comment": "Rate the tone.",
        "version": work.version,
    }
    assert decide(client, work.tree_id, seen).status_code == 201
    assert Assignment.objects.get(pk=work.pk).status == Assignment.Status.LEASED
    stale = decide(client, work.tree_id, seen | {"decision": "accepted"})
    assert stale.status_code == 409
    assert stale.json() == {
        "code": "stale_version",
        "message": stale.json()["message"],
        "current_version": work.version + 1,
    }


def test_a_rejection_without_a_comment_is_refused_with_the_services_code(support: dict[str, Any]) -> None:
    work = support["alice_work"]
    body = {"annotator": "alice", "decision": "rejected", "version": work.version}
    response = decide(session_client(support["rita"]), work.tree_id, body)
    assert response.status_code == 400
    assert response.json()["code"] == "comment_required"
    assert not Review.objects.exists()


def test_nobody_reviews_their_own_work(support: dict[str, Any]) -> None:
    membership_add(project=support["project"], user=support["alice"], role=Membership.Role.REVIEWER)
    work = support["alice_work"]
    body = {"annotator": "alice", "decision": "accepted", "version": work.version}
    response = decide(session_client(support["alice"]), work.tree_id, body)
    assert (response.status_code, response.json()["code"]) == (400, "own_work")


def test_work_nobody_did_is_a_404(support: dict[str, Any]) -> None:
    body = {"annotator": "bob", "decision": "accepted", "version": 1}
    response = decide(session_client(support["rita"]), support["alice_work"].tree_id, body)
    assert response.status_code == 404


@pytest.mark.parametrize(("who", "status"), [("alice", 403), ("bob", 404), ("maggie", 200)])
def test_only_reviewers_and_managers_review(support: dict[str, Any], who: str, status: int) -> None:
    assert session_client(support[who]).get(queue_url()).status_code == status
    assert session_client(support[who]).get(item_url(support["alice_work"].tree_id)).status_code == status


@pytest.mark.parametrize("items", [2, 6])
def test_the_queue_and_an_item_take_fixed_queries(django_assert_num_queries: Any, items: int) -> None:
    world = build(items)
    works = [
        submit(world["project"], world[name], 3) for name in ("alice", "olga") for _ in range(items // 2)
    ]
    client = session_client(world["rita"])
    client.get(queue_url())  # the session and the roles are read once
    with django_assert_num_queries(8):
        assert client.get(queue_url()).status_code == 200
    with django_assert_num_queries(10):
        assert client.get(item_url(works[0].tree_id)).status_code == 200


def test_an_annotator_filter_no_database_can_store_is_a_400(support: dict[str, Any]) -> None:
    response = session_client(support["rita"]).get(queue_url(annotator="%00"))
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "annotator"
