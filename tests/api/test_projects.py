"""Projects over the API: each caller lists the projects they belong to, reads one with its
configuration and progress, and its managers manage its members.

Root is a superuser; in project support Maggie manages, Rita reviews and Alice and Olga
annotate (two answers per item, at most two items each); Bob belongs to nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Membership, Project
from annotation.projects.services import membership_add, project_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client

pytestmark = pytest.mark.django_db

PROJECTS = reverse("api:projects")
CONFIG = """annotation_task_name: Support replies
instructions: Rate each reply.
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
assignment: {annotations_per_item: 2, max_items_per_user: 2}
"""


def project_url(name: str) -> str:
    return reverse("api:project", kwargs={"name": name})


def members_url(name: str, membership_id: int | None = None) -> str:
    if membership_id is None:
        return reverse("api:members", kwargs={"name": name})
    return reverse("api:member", kwargs={"name": name, "membership_id": membership_id})


def post_json(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


@pytest.fixture
def people() -> dict[str, Any]:
    people = {
        name: person(name, is_superuser=name == "root", is_staff=name == "root")
        for name in ("root", "maggie", "rita", "alice", "olga", "bob")
    }
    support = project_create(
        name="support", dataset=dataset_with("support-trees", potato_items("s", "S", 3)), config_yaml=CONFIG
    )
    project_create(
        name="hidden",
        dataset=dataset_with("hidden-trees", potato_items("h", "H", 1)),
        config_yaml="annotation_schemes: [{annotation_type: text, name: note, description: Note}]\n",
    )
    for name, role in (
        ("maggie", "manager"),
        ("rita", "reviewer"),
        ("alice", "annotator"),
        ("olga", "annotator"),
    ):
        membership_add(project=support, user=people[name], role=role)
    # Alice submits one item, Olga the same one: one item is complete.
    for name in ("alice", "olga"):
        held = item_next(project=support, user=people[name])
        item_submit(
            project=support, tree=held.tree, user=people[name], answers={"quality": {"rating": 4}}, version=1
        )
    return people


def as_user(people: dict[str, Any], name: str) -> Client:
    return session_client(people[name])


# Listing and reading


def test_each_caller_lists_the_projects_they_belong_to(people: dict[str, Any]) -> None:
    def listed(name: str) -> list[str]:
        return [row["name"] for row in as_user(people, name).get(PROJECTS).json()["results"]]

    assert listed("root") == ["hidden", "support"]
    assert listed("maggie") == listed("rita") == listed("alice") == ["support"]
    assert listed("bob") == []


def test_a_listed_project_shows_the_callers_roles_and_progress(people: dict[str, Any]) -> None:
    [row] = as_user(people, "alice").get(PROJECTS).json()["results"]

    assert row | {"created_at": None} == {
        "name": "support",
        "title": "Support replies",
        "mode": "annotate",
        "dataset": "support-trees",
        "roles": ["annotator"],
        "progress": {"submitted": 1, "quota": 2, "items": 3, "complete": 1},
        "created_at": None,
    }


def test_reading_a_project_gives_its_configuration_instructions_and_progress(people: dict[str, Any]) -> None:
    body = as_user(people, "maggie").get(project_url("support")).json()

    assert body["config_yaml"] == CONFIG
    assert body["instructions"] == "Rate each reply."
    assert body["config"]["annotation_schemes"][0]["name"] == "quality"
    assert body["config"]["assignment"]["annotations_per_item"] == 2
    assert body["roles"] == ["manager"]
    assert body["progress"] == {"submitted": 0, "quota": 2, "items": 3, "complete": 1}


def test_a_project_the_caller_may_not_see_is_not_found(people: dict[str, Any]) -> None:
    for name in ("hidden", "no-such-project"):
        response = as_user(people, "maggie").get(project_url(name))
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "message": "no such project"}


def test_listing_projects_costs_the_same_queries_for_one_or_many(
    people: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    client = as_user(people, "root")
    with django_assert_max_num_queries(10) as one:
        client.get(PROJECTS)
    for index in range(5):
        project_create(
            name=f"more-{index}",
            dataset=dataset_with(f"more-{index}", potato_items(f"m{index}", "M", 2)),
            config_yaml=CONFIG,
        )

    with django_assert_max_num_queries(len(one.captured_queries)):
        response = client.get(PROJECTS)

    assert response.json()["count"] == 7


def test_the_list_is_paginated_by_page_number(people: dict[str, Any]) -> None:
    page = as_user(people, "root").get(PROJECTS, {"page_size": 1, "page": 2}).json()

    assert page["count"] == 2
    assert [row["name"] for row in page["results"]] == ["support"]
    assert page["next"] is None


# Creating


def test_an_admin_creates_a_project_whose_trees_become_its_items(people: dict[str, Any]) -> None:
    response = post_json(
        as_user(people, "root"),
        PROJECTS,
        {"name": "second", "dataset": "support-trees", "config_yaml": CONFIG, "title": "Again"},
    )

    assert response.status_code == 201, response.content
    assert response.json()["title"] == "Again"
    assert response.json()["progress"]["items"] == 3
    assert Project.objects.get(name="second").dataset.name == "support-trees"


@pytest.mark.parametrize(
    ("body", "path", "message"),
    [
        (
            {
                "config_yaml": "annotation_schemes:\n  - {annotation_type: likert, name: q, description: Q, size: 1}\n"
            },
            "config_yaml.annotation_schemes[0].size",
            "must be an integer ≥ 2",
        ),
        (
            {"config_yaml": "annotation_schemes: [\n"},
            "config_yaml",
            "line 1 column 22: not valid YAML: expected the node content, but found '<stream end>'",
        ),
        ({"dataset": "nothing"}, "dataset", 'no dataset named "nothing"'),
        ({"name": "support"}, "name", 'a project named "support" already exists'),
        ({"name": "two words"}, "name", None),
        ({"mode": "judge"}, "mode", '"judge" is not a valid choice.'),
    ],
)
def test_a_bad_new_project_is_a_400_naming_the_problem(
    people: dict[str, Any], body: dict[str, Any], path: str, message: str | None
) -> None:
    request = {"name": "second", "dataset": "support-trees", "config_yaml": CONFIG} | body

    response = post_json(as_user(people, "root"), PROJECTS, request)

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    errors = {error["path"]: error["message"] for error in response.json()["errors"]}
    assert path in errors, errors
    if message is not None:
        assert errors[path] == message
    assert not Project.objects.filter(name="second").exists()


def test_only_admins_and_staff_with_the_permission_create_projects(people: dict[str, Any]) -> None:
    body = {"name": "second", "dataset": "support-trees", "config_yaml": CONFIG}

    response = post_json(as_user(people, "maggie"), PROJECTS, body)

    assert response.status_code == 403
    assert response.json() == {"code": "permission_denied", "message": "you may not create projects"}


# Members


def test_managers_and_reviewers_list_the_members_with_their_roles(people: dict[str, Any]) -> None:
    rows = as_user(people, "rita").get(members_url("support")).json()["results"]

    assert [(row["username"], row["role"]) for row in rows] == [
        ("maggie", "manager"),
        ("rita", "reviewer"),
        ("alice", "annotator"),
        ("olga", "annotator"),
    ]
    refused = as_user(people, "alice").get(members_url("support"))
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"


def test_a_manager_gives_a_role_once_and_the_person_then_sees_the_project(people: dict[str, Any]) -> None:
    manager = as_user(people, "maggie")

    added = post_json(manager, members_url("support"), {"username": "bob", "role": "annotator"})
    again = post_json(manager, members_url("support"), {"username": "bob", "role": "annotator"})

    assert added.status_code == 201
    assert again.status_code == 200
    assert added.json()["id"] == again.json()["id"]
    assert added.json()["username"] == "bob"
    assert Membership.objects.filter(user=people["bob"]).count() == 1
    assert as_user(people, "bob").get(project_url("support")).json()["roles"] == ["annotator"]


def test_a_manager_takes_a_role_back_and_the_answers_stay(people: dict[str, Any]) -> None:
    olga = Membership.objects.get(user=people["olga"])

    response = as_user(people, "maggie").delete(members_url("support", olga.pk))

    assert response.status_code == 204
    assert as_user(people, "olga").get(project_url("support")).status_code == 404
    assert people["olga"].annotations.count() == 1
    assert as_user(people, "maggie").delete(members_url("support", olga.pk)).status_code == 404


def test_only_managers_change_members(people: dict[str, Any]) -> None:
    olga = Membership.objects.get(user=people["olga"])

    for name in ("rita", "alice"):
        client = as_user(people, name)
        assert (
            post_json(client, members_url("support"), {"username": "bob", "role": "manager"}).status_code
            == 403
        )
        assert client.delete(members_url("support", olga.pk)).status_code == 403
    assert not Membership.objects.filter(user=people["bob"]).exists()
    assert Membership.objects.filter(pk=olga.pk).exists()


def test_a_membership_of_another_project_is_not_found_here(people: dict[str, Any]) -> None:
    other = membership_add(project=Project.objects.get(name="hidden"), user=people["bob"], role="annotator")

    response = as_user(people, "maggie").delete(members_url("support", other.pk))

    assert response.status_code == 404
    assert Membership.objects.filter(pk=other.pk).exists()


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"username": "nobody", "role": "annotator"}, "username"),
        ({"username": "bob", "role": "owner"}, "role"),
        ({"role": "annotator"}, "username"),
    ],
)
def test_a_bad_member_is_a_400_naming_the_field(
    people: dict[str, Any], body: dict[str, Any], path: str
) -> None:
    response = post_json(as_user(people, "maggie"), members_url("support"), body)

    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [path]
