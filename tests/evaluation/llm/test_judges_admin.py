"""Judges in the admin, as an admin sets one up and runs it.

- A judge added in the admin gets its account ``judge:<name>``; a template with a
  placeholder its kind does not fill is refused on the form.
- "Run the selected judges on a project…" asks for the project, redo and a budget, and
  starts a job; the judge's answers are then annotations of its account.
- Neither the judges' pages nor the verdicts' show the endpoint's key.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation
from evaluation.llm.judges import judge_create
from evaluation.llm.models import Judge, JudgeVerdict
from tests.evaluation.llm.conftest import API_KEY
from tests.evaluation.llm.judging_projects import rubric_project, rubric_reply
from tests.factories import StaffFactory
from trees.jobs.models import Job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admin_client(settings) -> Client:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    client = Client()
    client.force_login(StaffFactory(username="root", is_superuser=True))
    return client


def judge_form(endpoint, **changes):
    return {
        "name": "helper",
        "kind": "rubric",
        "endpoint": endpoint.pk,
        "system_prompt": "",
        "prompt_template": "",
        "sampling": "{}",
        "max_attempts": "3",
    } | changes


def test_a_judge_added_in_the_admin_gets_its_account(admin_client, endpoint):
    response = admin_client.post(reverse("admin:llm_judge_add"), judge_form(endpoint))

    assert response.status_code == 302, response.content.decode()[:2000]
    judge = Judge.objects.get(name="helper")
    assert judge.user.username == "judge:helper" and not judge.user.is_active


def test_a_template_its_kind_cannot_fill_is_refused_on_the_form(admin_client, endpoint):
    response = admin_client.post(
        reverse("admin:llm_judge_add"), judge_form(endpoint, prompt_template="Compare $response_a")
    )

    assert response.status_code == 200
    assert "unknown placeholder $response_a" in response.content.decode()
    assert not Judge.objects.exists()


def test_the_run_action_starts_a_job_whose_answers_are_the_judges(admin_client, chat_server, endpoint):
    project = rubric_project(items=2)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()
    changelist = reverse("admin:llm_judge_changelist")

    asked = admin_client.post(changelist, {"action": "run_on_project", ACTION_CHECKBOX_NAME: [judge.pk]})
    assert asked.status_code == 200 and b"max_cost" in asked.content
    started = admin_client.post(
        changelist,
        {
            "action": "run_on_project",
            ACTION_CHECKBOX_NAME: [judge.pk],
            "apply": "Start",
            "project": project.name,
            "max_cost": "1.5",
        },
    )

    assert started.status_code == 302 and started["Location"] == reverse("admin:jobs_job_changelist")
    job = Job.objects.get()
    assert (job.kind, job.state, job.params["max_cost"]) == ("judge.run", "done", "1.5")
    assert Annotation.objects.filter(user=judge.user, source="model").count() == 2


def test_no_judge_page_shows_the_key(admin_client, chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()
    admin_client.post(
        reverse("admin:llm_judge_changelist"),
        {
            "action": "run_on_project",
            ACTION_CHECKBOX_NAME: [judge.pk],
            "apply": "Start",
            "project": project.name,
        },
    )
    verdict = JudgeVerdict.objects.get()

    pages = [
        admin_client.get(reverse("admin:llm_judge_changelist")),
        admin_client.get(reverse("admin:llm_judge_change", args=[judge.pk])),
        admin_client.get(reverse("admin:llm_judgeverdict_changelist")),
        admin_client.get(reverse("admin:llm_judgeverdict_change", args=[verdict.pk])),
        admin_client.get(reverse("admin:llm_modelendpoint_change", args=[endpoint.pk])),
        admin_client.get(reverse("admin:jobs_job_changelist")),
    ]

    for page in pages:
        assert page.status_code == 200
        assert API_KEY not in page.content.decode()


def test_a_judge_changed_in_the_admin_keeps_its_name_and_account(admin_client, endpoint):
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    form = judge_form(endpoint, max_attempts="5", sampling='{"temperature": 0}')
    del form["name"]

    response = admin_client.post(reverse("admin:llm_judge_change", args=[judge.pk]), form)

    assert response.status_code == 302, response.content.decode()[:2000]
    judge.refresh_from_db()
    assert (judge.name, judge.user.username, judge.max_attempts, judge.sampling) == (
        "helper",
        "judge:helper",
        5,
        {"temperature": 0},
    )
