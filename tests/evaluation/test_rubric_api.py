"""Writing rubrics over the API, as the admin and ``create_rubric`` do.

Root is a superuser; Sam is staff who may add and change rubrics; Erin reviews a project
(she may read rubrics, not save them); Alice belongs to nothing.

- Saving YAML makes a rubric (201, version 1), a changed YAML a new version (200, version
  2), the same YAML again nothing new.
- Problems are located under ``yaml`` (``yaml.criteria``), nothing saved; a name too long
  for its row is one of them.
- ``dry_run`` checks and says what would happen, saving nothing; rubric readers may.
- Saving is for admins and staff with the permission.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from annotation.models import Membership
from annotation.projects.services import membership_add
from evaluation.models import Rubric, RubricVersion
from tests.annotation.annotator_items import person
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/rubrics"
YAML = """name: tone
criteria:
  - {key: polite, question: 'Is the reply polite?', weight: 1}
outcomes:
  - {name: fine, min_score: 0.5}
  - {name: poor}
"""


@pytest.fixture
def people() -> dict[str, Any]:
    sam = person("sam", is_staff=True)
    sam.user_permissions.add(*Permission.objects.filter(codename__in=["add_rubric", "change_rubric"]))
    erin = person("erin")
    membership_add(project=ProjectFactory(), user=erin, role=Membership.Role.REVIEWER)
    return {"root": person("root", is_superuser=True), "sam": sam, "erin": erin, "alice": person("alice")}


def post(user: Any, body: dict[str, Any]) -> Any:
    client = APIClient()
    client.force_authenticate(user)
    return client.post(URL, body, format="json")


def test_yaml_makes_a_rubric_then_a_new_version_when_it_changes(people: dict[str, Any]) -> None:
    created = post(people["sam"], {"yaml": YAML})
    assert created.status_code == 201, created.content
    assert (created.json()["name"], created.json()["version"]) == ("tone", 1)
    again = post(people["sam"], {"yaml": YAML})
    assert (again.status_code, again.json()["version"], again.json()["changed"]) == (200, 1, False)
    changed = post(people["sam"], {"yaml": YAML.replace("polite?", "kind?")})
    assert (changed.status_code, changed.json()["version"]) == (200, 2)
    assert RubricVersion.objects.filter(rubric__name="tone").count() == 2


def test_problems_are_located_under_yaml_and_nothing_is_saved(people: dict[str, Any]) -> None:
    response = post(people["root"], {"yaml": "name: tone\ncriteria: 3\n"})
    assert response.status_code == 400
    assert any(error["path"].startswith("yaml.criteria") for error in response.json()["errors"])
    long_name = post(people["root"], {"yaml": YAML.replace("name: tone", "name: " + "t" * 101)})
    assert [error["path"] for error in long_name.json()["errors"]] == ["yaml.name"]
    assert not Rubric.objects.exists()


def test_a_dry_run_says_what_would_happen_and_saves_nothing(people: dict[str, Any]) -> None:
    response = post(people["erin"], {"yaml": YAML, "dry_run": True})
    assert response.status_code == 200, response.content
    assert response.json() | {"spec": None} == {
        "name": "tone",
        "title": "tone",
        "version": None,
        "created": True,
        "changed": True,
        "spec": None,
        "warnings": [],
    }
    assert not Rubric.objects.exists()


@pytest.mark.parametrize(("who", "status"), [("erin", 403), ("alice", 403)])
def test_saving_is_for_admins_and_staff_with_the_permission(
    people: dict[str, Any], who: str, status: int
) -> None:
    assert post(people[who], {"yaml": YAML}).status_code == status
    assert not Rubric.objects.exists()
