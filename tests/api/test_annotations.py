"""Annotations over the API: listed and filtered (project, tree, user, scheme, status, source,
changed since), read one by one; annotators read their own answers, managers and reviewers
everyone's in their projects.

In project support Maggie manages, Rita reviews, Alice and Olga annotate; in project other
Bob annotates and Rita annotates too (so that her rights as a reviewer do not spill over).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client
from tests.factories import AnnotationFactory
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db

ANNOTATIONS = reverse("api:annotations")
CONFIG = (
    "annotation_schemes:\n"
    "  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}\n"
    "  - {annotation_type: text, name: note, description: Note}\n"
)
MAY_1 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
# Every request: the session, its user, the throttle's count; the caller's reviewed projects
# are a subquery of the one query for the page.
LIST_QUERIES = 4


def annotation_url(annotation_id: int) -> str:
    return reverse("api:annotation", kwargs={"annotation_id": annotation_id})


@pytest.fixture
def answers() -> dict[str, Any]:
    """Alice's and Olga's answers in support, Bob's and Rita's in other, with known times."""
    people = {name: person(name) for name in ("maggie", "rita", "alice", "olga", "bob")}
    people["root"] = person("root", is_superuser=True, is_staff=True)
    support = project_create(
        name="support", dataset=dataset_with("support-trees", potato_items("s", "S", 2)), config_yaml=CONFIG
    )
    other = project_create(
        name="other", dataset=dataset_with("other-trees", potato_items("o", "O", 1)), config_yaml=CONFIG
    )
    for name, role in (
        ("maggie", "manager"),
        ("rita", "reviewer"),
        ("alice", "annotator"),
        ("olga", "annotator"),
    ):
        membership_add(project=support, user=people[name], role=role)
    membership_add(project=other, user=people["bob"], role="annotator")
    membership_add(project=other, user=people["rita"], role="annotator")
    s0, s1 = ConversationTree.objects.filter(dataset__name="support-trees").order_by("pk")
    o0 = ConversationTree.objects.get(dataset__name="other-trees")
    rows = [
        ("alice", support, s0, "quality", {"rating": 4}, "submitted", "human", 0),
        ("alice", support, s0, "note", {"text": "fine"}, "submitted", "human", 1),
        ("alice", support, s1, "quality", {"rating": 2}, "draft", "human", 2),
        ("olga", support, s0, "quality", {"rating": 5}, "submitted", "import", 3),
        ("olga", support, s1, "quality", {}, "skipped", "human", 4),
        ("bob", other, o0, "quality", {"rating": 1}, "submitted", "human", 5),
        ("rita", other, o0, "note", {"text": "mine"}, "draft", "human", 6),
    ]
    made = {}
    for user, project, tree, scheme, payload, status, source, days in rows:
        annotation = AnnotationFactory(
            project=project,
            tree=tree,
            user=people[user],
            scheme=scheme,
            payload=payload,
            status=status,
            source=source,
        )
        Annotation.objects.filter(pk=annotation.pk).update(updated_at=MAY_1 + timedelta(days=days))
        made[f"{user}:{tree.external_id}:{scheme}"] = annotation.pk
    return {"people": people, "ids": made, "s0": s0}


def listed(answers: dict[str, Any], name: str, **query: Any) -> list[str]:
    response = session_client(answers["people"][name]).get(ANNOTATIONS, query)
    assert response.status_code == 200, response.content
    names = {pk: key for key, pk in answers["ids"].items()}
    return [names[row["id"]] for row in response.json()["results"]]


# Who sees what


def test_annotators_read_only_their_own_answers(answers: dict[str, Any]) -> None:
    assert listed(answers, "alice") == ["alice:s-0:quality", "alice:s-0:note", "alice:s-1:quality"]
    assert listed(answers, "bob") == ["bob:o-0:quality"]


def test_managers_and_reviewers_read_everyones_in_their_projects_and_their_own_elsewhere(
    answers: dict[str, Any],
) -> None:
    support = [key for key in answers["ids"] if key.startswith(("alice", "olga"))]

    assert listed(answers, "maggie") == support
    assert listed(answers, "rita") == [*support, "rita:o-0:note"]  # not Bob's in other
    assert listed(answers, "root") == list(answers["ids"])


def test_an_answer_is_read_whole_by_those_who_may(answers: dict[str, Any]) -> None:
    pk = answers["ids"]["olga:s-0:quality"]

    body = session_client(answers["people"]["rita"]).get(annotation_url(pk)).json()

    assert body | {"created_at": None, "updated_at": None} == {
        "id": pk,
        "project": "support",
        "tree": answers["s0"].pk,
        "item": "s-0",
        "user": "olga",
        "scheme": "quality",
        "status": "submitted",
        "source": "import",
        "version": 1,
        "payload": {"rating": 5},
        "created_at": None,
        "updated_at": None,
        "submitted_at": None,
    }
    assert body["updated_at"] == "2025-05-04T12:00:00Z"


def test_an_answer_the_caller_may_not_read_is_not_found(answers: dict[str, Any]) -> None:
    for name, key in (("alice", "olga:s-0:quality"), ("rita", "bob:o-0:quality"), ("bob", "alice:s-0:note")):
        response = session_client(answers["people"][name]).get(annotation_url(answers["ids"][key]))
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "message": "no such annotation"}


# Filters


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"project": "other"}, ["bob:o-0:quality", "rita:o-0:note"]),
        ({"user": "olga"}, ["olga:s-0:quality", "olga:s-1:quality"]),
        ({"scheme": "note"}, ["alice:s-0:note", "rita:o-0:note"]),
        ({"status": "draft"}, ["alice:s-1:quality", "rita:o-0:note"]),
        ({"status": "skipped"}, ["olga:s-1:quality"]),
        ({"source": "import"}, ["olga:s-0:quality"]),
        ({"updated_since": "2025-05-05T12:00:00Z"}, ["olga:s-1:quality", "bob:o-0:quality", "rita:o-0:note"]),
        ({"updated_since": "2025-05-06T14:00:00+02:00"}, ["bob:o-0:quality", "rita:o-0:note"]),
        (
            {"project": "support", "status": "submitted", "scheme": "quality"},
            ["alice:s-0:quality", "olga:s-0:quality"],
        ),
        ({"project": "nothing"}, []),
        ({"user": "nobody"}, []),
    ],
)
def test_filters_narrow_the_list(answers: dict[str, Any], query: dict[str, str], expected: list[str]) -> None:
    assert listed(answers, "root", **query) == expected


def test_the_tree_filter_takes_a_trees_id(answers: dict[str, Any]) -> None:
    assert listed(answers, "maggie", tree=answers["s0"].pk) == [
        "alice:s-0:quality",
        "alice:s-0:note",
        "olga:s-0:quality",
    ]


def test_filters_never_widen_what_the_caller_may_read(answers: dict[str, Any]) -> None:
    assert listed(answers, "alice", user="olga") == []
    assert listed(answers, "bob", project="support") == []


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"status": "done"}, "status"),
        ({"source": "robot"}, "source"),
        ({"tree": "first"}, "tree"),
        ({"tree": "0"}, "tree"),
        ({"tree": str(2**64)}, "tree"),
        ({"updated_since": "yesterday"}, "updated_since"),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(answers: dict[str, Any], query: dict[str, str], path: str) -> None:
    response = session_client(answers["people"]["root"]).get(ANNOTATIONS, query)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert [error["path"] for error in response.json()["errors"]] == [path]


# Pages


def test_the_list_is_read_a_page_at_a_time_by_cursor(answers: dict[str, Any]) -> None:
    client: Client = session_client(answers["people"]["root"])
    seen, response = [], client.get(ANNOTATIONS, {"page_size": 3, "project": "support"})
    while True:
        body = response.json()
        seen.append([row["id"] for row in body["results"]])
        if body["next"] is None:
            break
        assert "project=support" in body["next"]
        response = client.get(body["next"])

    assert [len(page) for page in seen] == [3, 2]
    ids = [annotation for page in seen for annotation in page]
    assert sorted(ids) == ids


@pytest.mark.parametrize("name", ["alice", "rita"])
def test_a_page_costs_the_same_queries_whatever_the_number_of_answers(
    answers: dict[str, Any], name: str, django_assert_num_queries: Any
) -> None:
    client = session_client(answers["people"][name])
    with django_assert_num_queries(LIST_QUERIES):
        few = len(client.get(ANNOTATIONS).json()["results"])
    support = answers["s0"].dataset.projects.get()
    trees = list(ConversationTree.objects.filter(dataset=answers["s0"].dataset))
    for index in range(20):
        AnnotationFactory(
            project=support, tree=trees[index % 2], user=answers["people"]["alice"], scheme=f"s{index}"
        )

    with django_assert_num_queries(LIST_QUERIES):
        many = len(client.get(ANNOTATIONS).json()["results"])

    assert many == few + 20
