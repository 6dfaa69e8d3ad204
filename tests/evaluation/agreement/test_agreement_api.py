"""GET /api/v1/projects/NAME/agreement: the agreement figures as JSON for managers and reviewers,
in the shape the schema documents, with the API's permissions and error shape.

Dana manages the project, Erin reviews it, Alice annotates it, Oscar belongs to no project.
"""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from evaluation.agreement.project import agreement_current
from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_agreement_page import rated_project

pytestmark = pytest.mark.django_db

URL = "/api/v1/projects/rated/agreement"


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "erin", "alice", "oscar")}


@pytest.fixture
def project(people):
    return rated_project("rated", people)


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize("who", ["dana", "erin"])
def test_managers_and_reviewers_read_the_figures(project, people, who):
    response = api(people[who]).get(URL)

    assert response.status_code == 200
    body = response.json()
    assert body["project"] == "rated"
    assert body["annotators"] == ["ann", "ben", "cleo"]
    assert body["annotations"] == 30
    rating = body["schemes"][0]["fields"][0]
    assert (rating["field"], rating["n_items"], rating["n_annotators"]) == ("rating", 5, 3)
    assert [(pair["a"], pair["b"]) for pair in rating["pairs"]] == [
        ("ann", "ben"),
        ("ann", "cleo"),
        ("ben", "cleo"),
    ]


def test_the_figures_are_the_kept_ones_the_page_and_the_command_show(project, people):
    body = api(people["dana"]).get(URL).json()

    kept = agreement_current(project)
    assert kept.recomputed is False
    assert body["schemes"] == kept.figures["schemes"]
    assert body["computed_at"].replace("Z", "+00:00") == kept.figures["computed_at"]


def test_an_undefined_measure_is_null_with_its_reason(project, people):
    verdict = api(people["dana"]).get(URL).json()["schemes"][1]["fields"][0]

    fleiss = next(measure for measure in verdict["measures"] if measure["measure"] == "Fleiss' kappa")
    assert fleiss["value"] is None
    assert fleiss["undefined_reason"] == "every rating is 'good': no variation, so chance agreement is 1"


@pytest.mark.parametrize(
    ("who", "status", "body"),
    [
        (
            "alice",
            403,
            {"code": "permission_denied", "message": "agreement is for the project's managers and reviewers"},
        ),
        ("oscar", 404, {"code": "not_found", "message": "no such project"}),
    ],
)
def test_annotators_are_refused_and_outsiders_do_not_see_the_project(project, people, who, status, body):
    response = api(people[who]).get(URL)

    assert (response.status_code, response.json()) == (status, body)


def test_anonymous_callers_must_authenticate(project):
    assert APIClient().get(URL).status_code == 401


def test_the_schema_documents_the_figures_shape():
    schema = SchemaGenerator().get_schema(request=None, public=True)

    operation = schema["paths"]["/api/v1/projects/{name}/agreement"]["get"]
    assert operation["operationId"] == "projects_agreement"
    reference = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert reference == "#/components/schemas/Agreement"
    components = schema["components"]["schemas"]
    field = components["AgreementField"]["properties"]
    assert {"field", "unit", "values", "n_items", "n_units", "n_annotators", "measures", "pairs"} <= set(
        field
    )
    measure = components["AgreementMeasure"]["properties"]
    assert measure["value"]["nullable"] is True
    assert set(components["AgreementPair"]["required"]) == {
        "a",
        "b",
        "measure",
        "value",
        "undefined_reason",
        "shown",
        "n_units",
    }
