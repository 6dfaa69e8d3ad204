"""The caller's own items over the API: what the My work page shows, as JSON.

- ``GET projects/{name}/items/mine`` lists the caller's items in the project,
  newest activity first, with where each stands and, when sent back, the
  reviewer and the comment; never anyone else's.
- ``status`` filters (a status that is not one is a 400 naming ``status``);
  50 items a page, with the counts by status and the number of pages.
- It costs the same queries whatever the number of items.

Alice and Olga annotate in project support; Rita reviews.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from annotation.models import Assignment, Project
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.api.world import session_client

pytestmark = pytest.mark.django_db

# The session and the user, the caller's rate window, the project with the caller's roles,
# then the counts by status and the page's items.
MINE_QUERIES = 6


def mine_url(**query: str) -> str:
    url = reverse("api:items-mine", kwargs={"name": "support"})
    return url + ("?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else "")


def submit_next(project: Project, user: Any) -> Assignment:
    held = item_next(project=project, user=user)
    item_submit(project=project, tree=held.tree, user=user, answers={}, version=held.version)
    held.refresh_from_db()
    return held


@pytest.fixture
def support() -> dict[str, Any]:
    alice, olga, rita = person("alice"), person("olga"), person("rita")
    project = project_over(
        "support",
        RESPONSE_QUALITY,
        [{**SEED_ITEM, "id": f"conv_{n}"} for n in range(8)],
        [alice, olga],
        reviewers=[rita],
    )
    return {"project": project, "alice": alice, "olga": olga, "rita": rita}


def test_the_callers_items_newest_first_with_the_comment_of_work_sent_back(support: dict[str, Any]) -> None:
    project, alice, rita = support["project"], support["alice"], support["rita"]
    first = submit_next(project, alice)
    submit_next(project, alice)
    submit_next(project, support["olga"])
    review_decide(
        reviewer=rita, assignment=first, decision="rejected", comment="Rate resp_b.", version=first.version
    )

    body = session_client(alice).get(mine_url()).json()

    assert [(row["external_id"], row["status"], row["label"]) for row in body["results"]] == [
        ("conv_0", "sent_back", "sent back"),
        ("conv_1", "submitted", "submitted"),
    ]
    assert body["results"][0] | {"updated_at": None} == {
        "tree_id": first.tree_id,
        "external_id": "conv_0",
        "status": "sent_back",
        "label": "sent back",
        "kind": "work",
        "score": None,
        "updated_at": None,
        "reviewer": "rita",
        "comment": "Rate resp_b.",
    }
    assert (body["status"], body["page"], body["pages"], body["count"]) == ("all", 1, 1, 2)
    assert body["counts"] == {
        "all": 2,
        "draft": 0,
        "sent_back": 1,
        "submitted": 1,
        "accepted": 0,
        "skipped": 0,
        "expired": 0,
    }


def test_status_filters_and_a_status_that_is_not_one_is_a_400_naming_it(support: dict[str, Any]) -> None:
    project, alice = support["project"], support["alice"]
    submit_next(project, alice)
    item_next(project=project, user=alice)
    client = session_client(alice)

    drafts = client.get(mine_url(status="draft")).json()
    refused = client.get(mine_url(status="lost"))

    assert [row["external_id"] for row in drafts["results"]] == ["conv_1"]
    assert (drafts["status"], drafts["count"]) == ("draft", 1)
    assert refused.status_code == 400
    assert [error["path"] for error in refused.json()["errors"]] == ["status"]


def test_the_list_costs_the_same_queries_whatever_the_number_of_items(
    support: dict[str, Any], django_assert_num_queries: Any
) -> None:
    project, alice, rita = support["project"], support["alice"], support["rita"]
    client = session_client(alice)
    submit_next(project, alice)
    with django_assert_num_queries(MINE_QUERIES):
        client.get(mine_url())

    for _ in range(5):
        done = submit_next(project, alice)
    review_decide(reviewer=rita, assignment=done, decision="rejected", comment="Again.", version=done.version)
    with django_assert_num_queries(MINE_QUERIES):
        body = client.get(mine_url()).json()
    assert body["count"] == 6
