"""Growing branches through its doors, each running the same service: the API (202 with the
job), the datasets admin's action (an intermediate form, then a job per dataset) and the
``grow_branches`` command (in the foreground). The job counts turns, its result is the
run's report, its problems the turns that failed; the API key is in none of them.

Personas: Root is a superuser; Maggie manages the project over the dataset; Alice annotates.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from annotation.projects.services import membership_add, project_create
from evaluation.llm.grow_tasks import branches_grow_job
from evaluation.llm.models import ModelCall
from evaluation.llm.services import endpoint_delete, endpoint_update
from tests.annotation.annotator_items import person
from tests.evaluation.llm.chat_server import error
from tests.evaluation.llm.conftest import API_KEY
from tests.evaluation.llm.grow_world import generated, grow_dataset, last_user_text
from trees.jobs.models import Job
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DUMMY = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
CONFIG = "annotation_schemes:\n  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}\n"


@pytest.fixture
def dataset(endpoint, settings):
    settings.TASKS = IMMEDIATE
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 1})  # no threads: SQLite runs these
    return grow_dataset()


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_api_answers_202_with_the_job_which_grows_the_dataset(chat_server, dataset):
    root = person("root", is_superuser=True, is_staff=True)

    response = api(root).post(
        "/api/v1/datasets/grown/grow", {"endpoint": "local", "n": 2, "temperature": 0.3}, format="json"
    )

    assert response.status_code == 202, response.content
    assert response["Location"] == f"/api/v1/jobs/{response.json()['id']}"
    job = api(root).get(response["Location"]).json()
    assert (job["kind"], job["state"], job["unit"], job["done"], job["total"]) == (
        "branches.grow",
        "done",
        "turns",
        2,
        2,
    )
    assert job["result"]["added"] == 4 and job["problems"] == []
    assert job["message"].startswith("2 of 2 turns grown: 4 replies added")
    assert len(generated("q1")) == 2
    assert {call.job_id for call in ModelCall.objects.all()} == {job["id"]}
    entry = AuditEntry.objects.filter(action="replies.add").first()
    assert (entry.actor, entry.via) == (root, "api")


def test_bad_options_are_a_400_naming_each(dataset):
    root = person("root", is_superuser=True, is_staff=True)

    response = api(root).post(
        "/api/v1/datasets/grown/grow",
        {"endpoint": "elsewhere", "rule": "sideways", "n": 0, "temperature": 9, "colour": "red"},
        format="json",
    )

    assert response.status_code == 400
    paths = {problem["path"]: problem["message"] for problem in response.json()["errors"]}
    assert paths == {
        "colour": "not an option",
        "endpoint": "no model endpoint is called 'elsewhere'",
        "rule": "one of unanswered, leaves, nodes, got 'sideways'",
        "n": "must be between 1 and 20, got 0",
        "temperature": "must be between 0 and 2, got 9",
    }
    assert Job.objects.count() == 0
    unknown = api(root).post(
        "/api/v1/datasets/grown/grow", {"endpoint": "local", "trees": ["fruit", "pear"]}, format="json"
    )
    assert unknown.status_code == 400
    assert unknown.json()["errors"] == [
        {"code": "invalid", "path": "trees", "message": "no such trees in grown: pear"}
    ]


def test_a_projects_managers_grow_its_items_and_annotators_may_not(chat_server, dataset):
    maggie, alice = person("maggie"), person("alice")
    project = project_create(name="judge-grown", dataset=dataset, config_yaml=CONFIG)
    membership_add(project=project, user=maggie, role="manager")
    membership_add(project=project, user=alice, role="annotator")
    body = {"endpoint": "local", "trees": ["fruit"]}

    assert api(alice).post("/api/v1/projects/judge-grown/grow", body, format="json").status_code == 403
    response = api(maggie).post("/api/v1/projects/judge-grown/grow", body, format="json")

    assert response.status_code == 202
    assert Job.objects.get().project_name == "judge-grown"
    assert len(generated("q1")) == 1 and generated("p2") == []


def test_the_jobs_problems_name_the_turns_that_failed_and_never_the_key(chat_server, dataset):
    root = person("root", is_superuser=True, is_staff=True)

    def respond(body):
        if last_user_text(body) == "Name a fruit":
            return error(400, f"Invalid request with key {API_KEY}")
        return "Fine."

    chat_server.respond = respond
    response = api(root).post("/api/v1/datasets/grown/grow", {"endpoint": "local"}, format="json")

    job = Job.objects.get(pk=response.json()["id"])
    assert (job.state, job.done, job.total) == ("done", 2, 2)
    (problem,) = job.problems
    assert (problem["tree"], problem["node"]) == ("fruit", "q1")
    assert problem["message"].startswith("local: the server refused the request")
    shown = json.dumps(
        [job.problems, job.result, job.message, [call.error for call in ModelCall.objects.all()]]
    )
    assert API_KEY not in shown


def test_a_job_run_again_after_its_worker_died_makes_up_only_what_is_missing(chat_server, dataset, settings):
    settings.TASKS = DUMMY
    root = person("root", is_superuser=True, is_staff=True)
    job_id = (
        api(root)
        .post("/api/v1/datasets/grown/grow", {"endpoint": "local", "n": 2}, format="json")
        .json()["id"]
    )
    # As if the first run had died after one reply: the reaper puts the job back in the queue.
    chat_server.respond = lambda body: "First."
    branches_grow_job.call(job_id)
    generated("q1")[1].delete()
    Job.objects.filter(pk=job_id).update(state="queued")

    branches_grow_job.call(job_id)

    job = Job.objects.get(pk=job_id)
    assert (job.state, job.attempts, job.result["added"], job.result["existing"]) == ("done", 2, 1, 3)
    assert len(generated("q1")) == 2 and len(generated("p2")) == 2


def test_a_job_whose_endpoint_went_fails_saying_so(chat_server, dataset, settings, endpoint):
    settings.TASKS = DUMMY
    root = person("root", is_superuser=True, is_staff=True)
    job_id = api(root).post("/api/v1/datasets/grown/grow", {"endpoint": "local"}, format="json").json()["id"]
    endpoint_delete(endpoint=endpoint)

    branches_grow_job.call(job_id)

    job = Job.objects.get(pk=job_id)
    assert (job.state, job.message) == ("failed", "model endpoint 'local' is gone")
    assert chat_server.chats == []


def test_the_datasets_admin_asks_for_the_settings_then_grows_in_a_job(chat_server, dataset, client: Client):
    client.force_login(person("root", is_superuser=True, is_staff=True))
    selected = {"action": "grow_branches", "_selected_action": [str(dataset.pk)]}

    form = client.post("/admin/trees/dataset/", selected)

    assert form.status_code == 200
    assert b'id="grow-branches-form"' in form.content and b"grown" in form.content
    wrong = client.post(
        "/admin/trees/dataset/",
        {**selected, "grow_apply": "1", "endpoint": "local", "rule": "nodes", "n": "1"},
    )
    assert wrong.status_code == 200 and b"rule nodes needs the ids of the turns to grow" in wrong.content
    done = client.post(
        "/admin/trees/dataset/",
        {
            **selected,
            "grow_apply": "1",
            "endpoint": "local",
            "rule": "nodes",
            "nodes": "q1",
            "n": "2",
            "seed": "5",
        },
        follow=True,
    )

    messages = [str(message) for message in done.context["messages"]]
    job = Job.objects.get()
    assert messages == [f"grown: job {job.pk} grows its branches (its progress: /admin/jobs/job/)"]
    assert (job.state, job.via, job.params["nodes"], job.params["seed"]) == ("done", "admin", ["q1"], 5)
    assert [reply.metadata["generation"]["settings"]["seed"] for reply in generated("q1")] == [5, 6]


def test_the_command_grows_in_the_foreground_and_says_what_it_did(chat_server, dataset):
    out = io.StringIO()

    call_command(
        "grow_branches", "grown", "--endpoint", "local", "-n", "2", "--temperature", "0.2", stdout=out
    )

    assert out.getvalue().startswith("2 of 2 turns grown: 4 replies added, 0 already there, 0 turns failed")
    again = io.StringIO()
    call_command(
        "grow_branches", "grown", "--endpoint", "local", "-n", "2", "--temperature", "0.2", stdout=again
    )
    assert again.getvalue().startswith("2 of 2 turns grown: 0 replies added, 4 already there")
    entry = AuditEntry.objects.filter(action="replies.add").first()
    assert (entry.via, entry.actor_name) == ("command", "manage.py grow_branches")


def test_the_command_refuses_bad_options_and_lists_failed_turns(chat_server, dataset):
    err = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("grow_branches", "grown", "--endpoint", "local", "-n", "50", stderr=err)
    assert refused.value.returncode == 2 and "--n: must be between 1 and 20, got 50" in err.getvalue()

    chat_server.respond = lambda body: error(400, "no")
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 turns failed"):
        call_command("grow_branches", "grown", "--endpoint", "local", stdout=io.StringIO(), stderr=err)
    assert "tree fruit, node q1: local: the server refused the request" in err.getvalue()


def test_a_job_out_of_budget_is_done_with_what_it_made_and_says_why_it_stopped(chat_server, dataset):
    root = person("root", is_superuser=True, is_staff=True)

    response = api(root).post(
        "/api/v1/datasets/grown/grow", {"endpoint": "local", "n": 2, "budget_tokens": 15}, format="json"
    )

    job = Job.objects.get(pk=response.json()["id"])
    assert (job.state, job.result["added"], job.result["requests"]) == ("done", 1, 1)
    assert job.result["stopped"] == "the run used its 15 tokens (15 used)"
    assert job.message.endswith("; stopped: the run used its 15 tokens (15 used)")
    assert (job.done, job.total) == (0, 2)


def test_the_projects_admin_grows_a_projects_items(chat_server, dataset, client: Client):
    client.force_login(person("root", is_superuser=True, is_staff=True))
    project = project_create(name="judge-grown", dataset=dataset, config_yaml=CONFIG)
    selected = {"action": "grow_branches", "_selected_action": [str(project.pk)]}

    form = client.post("/admin/annotation/project/", selected)
    assert form.status_code == 200 and b'id="grow-branches-form"' in form.content
    done = client.post(
        "/admin/annotation/project/",
        {**selected, "grow_apply": "1", "endpoint": "local", "rule": "leaves", "n": "1"},
        follow=True,
    )

    job = Job.objects.get()
    assert [str(message) for message in done.context["messages"]] == [
        f"judge-grown: job {job.pk} grows its branches (its progress: /admin/jobs/job/)"
    ]
    assert (job.state, job.project_name, job.dataset_name, job.result["added"]) == (
        "done",
        "judge-grown",
        "",
        2,
    )
