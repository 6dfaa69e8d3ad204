"""The evaluation API: rubrics, running the checks, results and reports as JSON, with the
permissions and error shape of the rest of /api/v1/.

Personas: Dana manages the project, Erin reviews it, Alice annotates it.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from evaluation.models import EvaluationResult
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CRITERIA, EXPECTED, RUBRIC_YAML, scheduling_project
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db

BASE = "/api/v1/projects/scheduling/rubrics/scheduling"


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "erin", "alice")}


@pytest.fixture
def project(people):
    return scheduling_project(
        annotators=[people["alice"]], managers=[people["dana"]], reviewers=[people["erin"]]
    )


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_managers_run_the_automatic_checks_over_the_api(project, people):
    response = api(people["dana"]).post(f"{BASE}/evaluate")

    assert response.status_code == 200
    body = response.json()
    assert (body["version"], body["items"], body["results"]) == (1, 8, 8)
    assert body["outcomes"] == {
        "successful_completion": 2,
        "graceful_failure": 2,
        "partial_failure": 3,
        "hard_failure": 1,
    }
    assert EvaluationResult.objects.count() == 8


@pytest.mark.parametrize("who", ["erin", "alice"])
def test_only_managers_may_run_evaluations(project, people, who):
    response = api(people[who]).post(f"{BASE}/evaluate")

    assert response.status_code == 403
    assert response.json() == {
        "code": "permission_denied",
        "message": "only the project's managers may run evaluations",
    }


def test_results_are_paginated_one_per_item_with_their_details(project, people):
    api(people["dana"]).post(f"{BASE}/evaluate")

    response = api(people["erin"]).get(f"{BASE}/results", {"page_size": 5})
    second = api(people["erin"]).get(f"{BASE}/results", {"page_size": 5, "page": 2}).json()

    body = response.json()
    assert body["count"] == 8
    assert [r["id"] for r in body["results"] + second["results"]] == sorted(EXPECTED)
    first = body["results"][0]
    assert {k: first[k] for k in ("id", "node", "source", "version", "score", "outcome", "details")} == {
        "id": "sched_001",
        "node": "",
        "source": "auto",
        "version": 1,
        "score": 1.0,
        "outcome": "successful_completion",
        "details": EXPECTED["sched_001"]["details"],
    }


def test_results_can_be_filtered_by_outcome(project, people):
    api(people["dana"]).post(f"{BASE}/evaluate")

    response = api(people["dana"]).get(f"{BASE}/results", {"outcome": "graceful_failure", "source": "auto"})

    assert [r["id"] for r in response.json()["results"]] == ["sched_003", "sched_004"]


def test_the_report_is_the_same_json_as_the_download(project, people):
    api(people["dana"]).post(f"{BASE}/evaluate")

    body = api(people["erin"]).get(f"{BASE}/report").json()

    assert (body["project"], body["rubric"], body["version"], body["source"]) == (
        "scheduling",
        "scheduling",
        1,
        "best",
    )
    assert body["overall"]["count"] == 8
    assert [p["key"] for p in body["overall"]["pass_rates"]] == [*CRITERIA, "booking_confirmed"]
    low, high = body["overall"]["mean_score_ci95"]
    assert low < body["overall"]["mean_score"] < high
    assert len(body["overall"]["histogram"]) == 10


def test_a_bad_report_parameter_is_a_400_that_names_it(project, people):
    response = api(people["erin"]).get(f"{BASE}/report", {"source": "robots"})

    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "message": 'source: "robots" is not a source (best, auto, human, combined)',
        "errors": [
            {
                "code": "invalid",
                "path": "source",
                "message": '"robots" is not a source (best, auto, human, combined)',
            }
        ],
    }


def test_annotators_cannot_read_results(project, people):
    assert api(people["alice"]).get(f"{BASE}/report").status_code == 403


def test_unknown_rubrics_and_projects_are_json_404s(project, people):
    assert api(people["dana"]).get("/api/v1/projects/scheduling/rubrics/nothing/report").json() == {
        "code": "not_found",
        "message": "no such rubric",
    }
    assert api(people["dana"]).get("/api/v1/projects/nowhere/rubrics/scheduling/report").status_code == 404


def test_rubrics_can_be_read_with_every_version(project, people):
    listing = api(people["dana"]).get("/api/v1/rubrics").json()
    detail = api(StaffFactory(username="sam")).get("/api/v1/rubrics/scheduling").json()

    assert [(r["name"], r["version"]) for r in listing["results"]] == [("scheduling", 1)]
    assert detail["versions"][0]["number"] == 1
    assert detail["versions"][0]["yaml"] == RUBRIC_YAML
    assert detail["versions"][0]["spec"]["outcomes"][0]["requires"] == ["booking_confirmed"]


def test_rubrics_are_not_for_annotators(project, people):
    assert api(people["alice"]).get("/api/v1/rubrics").status_code == 403
