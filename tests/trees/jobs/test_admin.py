"""The admin and jobs: an upload above the threshold becomes a job; the jobs page lists them
with their progress, and cancels them (a row's button, or the action on the selected ones).

Small uploads stay synchronous (tests/trees/test_admin.py). The jobs here run with
django-tasks' immediate backend, or wait in the dummy one.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.factories import StaffFactory
from tests.trees.test_admin import IMPORT_URL, import_form, saved
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue
from trees.models import ConversationTree
from trees.tasks import trees_import_job

pytestmark = pytest.mark.django_db

JOBS = reverse("admin:jobs_job_changelist")
IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DUMMY = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def as_admin(client: Client, settings: Any, tmp_path: Any) -> Client:
    settings.BRANCHPOINT_JOB_THRESHOLD_BYTES = 300
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path / "jobs")
    client.force_login(saved(StaffFactory(username="root", is_superuser=True)))
    return client


def potato_file(count: int) -> SimpleUploadedFile:
    lines = "".join(
        json.dumps({"id": f"t-{n}", "tree": {"id": "0", "role": "user", "content": f"Hi {n}"}}) + "\n"
        for n in range(count)
    )
    return SimpleUploadedFile("trees.jsonl", lines.encode(), content_type="application/octet-stream")


def test_an_upload_above_the_threshold_is_imported_by_a_job_and_the_jobs_page_follows_it(
    as_admin: Client, settings: Any
) -> None:
    settings.TASKS = IMMEDIATE

    response = as_admin.post(
        IMPORT_URL, import_form(new_dataset="big", file=potato_file(10), format_name="potato")
    )

    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == JOBS
    assert [str(message) for message in get_messages(response.wsgi_request)] == [
        f"Job {job.pk} imports the file: its progress is below."
    ]
    assert (job.state, job.dataset_name, job.via) == ("done", "big", "admin")
    assert ConversationTree.objects.filter(dataset__name="big").count() == 10
    page = as_admin.get(JOBS).content.decode()
    assert f'data-job-url="{reverse("api:job", args=[job.pk])}"' in page
    assert "imported into big: 10 trees created, 10 messages" in page


def test_a_failed_job_keeps_no_new_dataset_and_its_page_lists_the_problems(
    as_admin: Client, settings: Any
) -> None:
    settings.TASKS = IMMEDIATE
    bad = SimpleUploadedFile("bad.jsonl", potato_file(10).read() + b'{"id": "no-tree"}\n')

    as_admin.post(IMPORT_URL, import_form(new_dataset="doomed", file=bad, format_name="potato"))

    job = Job.objects.get()
    assert job.state == "failed"
    assert not ConversationTree.objects.filter(dataset__name="doomed").exists()
    detail = as_admin.get(reverse("admin:jobs_job_change", args=[job.pk])).content.decode()
    assert "line 11: tree: " in detail


def test_a_rows_cancel_button_cancels_a_waiting_job(as_admin: Client, settings: Any) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(kind="trees.import", task=trees_import_job, dataset_name="later")
    page = as_admin.get(JOBS).content.decode()
    cancel = reverse("admin:jobs_job_cancel", args=[job.pk])
    assert f'formaction="{cancel}"' in page

    response = as_admin.post(cancel)

    job.refresh_from_db()
    assert response["Location"] == JOBS
    assert job.state == "cancelled"
    assert 'formaction="' not in as_admin.get(JOBS).content.decode()


def test_the_cancel_action_cancels_the_selected_jobs(as_admin: Client, settings: Any) -> None:
    settings.TASKS = DUMMY
    jobs = [job_enqueue(kind="trees.import", task=trees_import_job) for _ in range(2)]

    as_admin.post(JOBS, {"action": "cancel_selected", "_selected_action": [job.pk for job in jobs]})

    assert sorted(Job.objects.values_list("state", flat=True)) == ["cancelled", "cancelled"]


def test_cancel_takes_a_post_only(as_admin: Client, settings: Any) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(kind="trees.import", task=trees_import_job)

    assert as_admin.get(reverse("admin:jobs_job_cancel", args=[job.pk])).status_code == 405
    job.refresh_from_db()
    assert job.state == "queued"


def test_the_jobs_page_costs_the_same_queries_for_few_jobs_or_many(
    as_admin: Client, settings: Any, django_assert_max_num_queries: Any
) -> None:
    settings.TASKS = DUMMY
    job_enqueue(kind="trees.import", task=trees_import_job)
    with django_assert_max_num_queries(12) as few:
        as_admin.get(JOBS)
    for _ in range(10):
        job_enqueue(kind="trees.import", task=trees_import_job)

    with django_assert_max_num_queries(len(few.captured_queries)):
        page = as_admin.get(JOBS)

    assert page.content.decode().count('class="job-progress"') == 11


def test_a_cancel_the_database_cannot_take_yet_says_so(
    as_admin: Client, settings: Any, monkeypatch: Any
) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(kind="trees.import", task=trees_import_job)

    def locked(job: Job) -> Job:
        raise OperationalError("database is locked")

    monkeypatch.setattr("trees.jobs.admin.job_cancel", locked)
    response = as_admin.post(reverse("admin:jobs_job_cancel", args=[job.pk]))

    assert [str(message) for message in get_messages(response.wsgi_request)] == [
        f"Job {job.pk} holds the database while it runs: it cannot be cancelled yet."
    ]


def test_a_done_exports_row_links_its_file_while_it_is_kept(as_admin: Client, tmp_path: Any) -> None:
    made = tmp_path / "alpha.potato.jsonl"
    made.write_text("{}\n")
    job = Job.objects.create(
        kind="annotations.export",
        task_path=trees_import_job.module_path,
        state="done",
        message="exported alpha as potato",
        result={"file_name": made.name, "media_type": "application/jsonl"},
        result_file=str(made),
        result_expires_at=timezone.now() + timedelta(days=1),
    )
    link = f'<a class="job-file" href="{reverse("api:job-file", args=[job.pk])}">download the file</a>'

    assert link in as_admin.get(JOBS).content.decode()
    assert b"".join(as_admin.get(reverse("api:job-file", args=[job.pk])).streaming_content) == b"{}\n"
    Job.objects.filter(pk=job.pk).update(result_expires_at=timezone.now() - timedelta(seconds=1))
    assert link not in as_admin.get(JOBS).content.decode()
