"""Judges over the API: ``GET judges`` lists them (never a key); ``POST judges/{judge}/runs``
starts a run over a project as a job (202 Accepted, its URL in ``Location``), for the
project's managers only; a run the judge cannot do is a 400 that says why, before anything
is queued.

Personas: Dana manages the project, Erin reviews it, Alice annotates it.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.models import Annotation, Membership
from annotation.projects.services import membership_add
from evaluation.llm.judges import judge_create
from evaluation.llm.models import JudgeVerdict
from tests.annotation.annotator_items import person
from tests.evaluation.llm.conftest import API_KEY
from tests.evaluation.llm.judging_projects import rubric_project, rubric_reply
from trees.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(settings: Any) -> dict[str, Any]:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    return {name: person(name) for name in ("dana", "erin", "alice")}


@pytest.fixture
def project(people: dict[str, Any]) -> Any:
    project = rubric_project(items=2)
    for name, role in (("dana", "manager"), ("erin", "reviewer"), ("alice", "annotator")):
        membership_add(project=project, user=people[name], role=Membership.Role(role))
    return project


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_manager_starts_a_run_whose_job_says_what_it_did(chat_server, endpoint, people, project):
    judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()

    response = api(people["dana"]).post(
        "/api/v1/judges/helper/runs", {"project": project.name, "max_tokens": 1000}, format="json"
    )

    assert response.status_code == 202, response.content
    job = api(people["dana"]).get(response["Location"]).json()
    assert (job["kind"], job["state"], job["unit"], job["done"], job["total"]) == (
        "judge.run",
        "done",
        "items",
        2,
        2,
    )
    assert job["result"]["judged"] == 2 and job["result"]["failures"] == 0
    assert job["message"].startswith("judge helper on rubrics: 2 of 2 items judged")
    assert Annotation.objects.filter(user__username="judge:helper", source="model").count() == 2
    assert API_KEY not in str(job)


def test_a_runs_failures_are_the_jobs_problems_naming_item_and_question(
    chat_server, endpoint, people, project
):
    judge_create(name="sloppy", kind="rubric", endpoint=endpoint, max_attempts=1)
    chat_server.respond = lambda body: "I think it is fine."

    response = api(people["dana"]).post(
        "/api/v1/judges/sloppy/runs", {"project": project.name}, format="json"
    )

    job = Job.objects.get(pk=response.json()["id"])
    assert job.state == "done" and job.result["failed"] == 2
    assert [problem["path"] for problem in job.problems] == [
        "conv_0/review/conversation",
        "conv_1/review/conversation",
    ]
    assert JudgeVerdict.objects.filter(status="failed").count() == 2
    assert JudgeVerdict.objects.first().failures[0]["raw"] == "I think it is fine."


@pytest.mark.parametrize("who", ["erin", "alice"])
def test_only_managers_start_a_run(chat_server, endpoint, people, project, who):
    judge_create(name="helper", kind="rubric", endpoint=endpoint)

    response = api(people[who]).post("/api/v1/judges/helper/runs", {"project": project.name}, format="json")

    assert response.status_code == 403
    assert not Job.objects.exists() and chat_server.chats == []


def test_a_run_the_judge_cannot_do_is_refused_before_it_is_queued(chat_server, endpoint, people, project):
    judge_create(name="pairs", kind="comparison", endpoint=endpoint)

    response = api(people["dana"]).post("/api/v1/judges/pairs/runs", {"project": project.name}, format="json")

    assert response.status_code == 400
    assert "tree_annotation scheme" in response.content.decode()
    assert not Job.objects.exists()


def test_the_judges_list_names_the_endpoint_and_model_never_the_key(endpoint, people, project):
    judge_create(name="helper", kind="rubric", endpoint=endpoint, sampling={"temperature": 0})

    response = api(people["dana"]).get("/api/v1/judges")

    assert response.status_code == 200
    assert response.json()["results"] == [
        {
            "name": "helper",
            "kind": "rubric",
            "account": "judge:helper",
            "endpoint": "local",
            "model": "test-model",
            "max_attempts": 3,
            "sampling": {"temperature": 0},
            "custom_prompt": False,
        }
    ]
    assert API_KEY not in response.content.decode()
    assert api(people["alice"]).get("/api/v1/judges").status_code == 403
