"""Evaluation's jobs over the API: a rubric's checks over a whole project, and agreement
recomputed, each answering 202 Accepted with the job, whose result is what the synchronous
call answers. For the project's managers only (reviewers and annotators get 403).

Personas: Dana manages the projects, Erin reviews them, Alice annotates.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from evaluation.agreement.project import agreement_current
from evaluation.models import EvaluationResult
from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_agreement_page import rated_project
from tests.evaluation.samples import scheduling_project

pytestmark = pytest.mark.django_db

RUBRIC = "/api/v1/projects/scheduling/rubrics/scheduling"


@pytest.fixture
def people(settings: Any) -> dict[str, Any]:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    return {name: person(name) for name in ("dana", "erin", "alice", "oscar")}


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_an_evaluation_job_stores_the_results_and_answers_what_evaluate_does(people: dict[str, Any]) -> None:
    scheduling_project(annotators=[people["alice"]], managers=[people["dana"]], reviewers=[people["erin"]])

    response = api(people["dana"]).post(f"{RUBRIC}/evaluate-jobs")

    assert response.status_code == 202, response.content
    job = api(people["dana"]).get(response["Location"]).json()
    assert (job["kind"], job["state"], job["unit"]) == ("rubric.evaluate", "done", "items")
    assert (job["done"], job["total"]) == (8, 8)
    assert EvaluationResult.objects.count() == 8
    synchronous = api(people["dana"]).post(f"{RUBRIC}/evaluate").json()
    assert {key: job["result"][key] for key in ("version", "items", "results", "outcomes")} == {
        key: synchronous[key] for key in ("version", "items", "results", "outcomes")
    }
    assert job["message"].startswith("evaluated 8 items of scheduling with rubric scheduling v1")


@pytest.mark.parametrize("who", ["erin", "alice"])
def test_only_managers_start_evaluation_jobs(people: dict[str, Any], who: str) -> None:
    scheduling_project(annotators=[people["alice"]], managers=[people["dana"]], reviewers=[people["erin"]])

    response = api(people[who]).post(f"{RUBRIC}/evaluate-jobs")

    assert response.status_code == 403


def test_an_agreement_job_keeps_the_figures_the_api_then_reads(people: dict[str, Any]) -> None:
    project = rated_project("rated", people)

    response = api(people["dana"]).post("/api/v1/projects/rated/agreement-jobs")

    assert response.status_code == 202, response.content
    job = api(people["dana"]).get(response["Location"]).json()
    assert (job["kind"], job["state"], job["message"]) == (
        "agreement.refresh",
        "done",
        "agreement of rated recomputed",
    )
    kept = agreement_current(project)
    assert kept.recomputed is False
    assert job["result"]["schemes"] == kept.figures["schemes"]


def test_only_managers_start_agreement_jobs(people: dict[str, Any]) -> None:
    rated_project("rated", people)

    assert api(people["erin"]).post("/api/v1/projects/rated/agreement-jobs").status_code == 403
