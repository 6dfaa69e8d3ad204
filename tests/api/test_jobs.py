"""Imports as jobs over the API, and the jobs API.

- A file above ``BRANCHPOINT_JOB_THRESHOLD_BYTES`` answers 202 Accepted with the job and
  ``Location: /api/v1/jobs/{id}``; the job's result is the report the synchronous import
  answers, its problems the report's errors. Smaller files stay synchronous.
- ``GET jobs/{id}`` shows the job to its creator, to whoever manages its project or may import
  into its dataset, and to staff; everyone else gets 404. ``GET jobs`` lists the caller's own.
- ``POST jobs/{id}/cancel`` cancels a queued job at once; a finished one stays as it was.

The jobs here run with django-tasks' immediate backend (the enqueue runs them);
tests/trees/jobs/test_worker.py runs them in real worker processes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator

from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import person
from tests.api.test_datasets import as_user, chain, dataset_url, jsonl
from tests.api.test_datasets import people as people
from tests.api.test_exports import CONFIG, download, import_url
from tests.api.test_exports import judged as judged
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue, job_files_expire
from trees.models import ConversationTree
from trees.tasks import trees_import_job

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
DUMMY = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def jobs_run_at_once(settings: Any, tmp_path: Any) -> None:
    settings.TASKS = IMMEDIATE
    settings.BRANCHPOINT_JOB_THRESHOLD_BYTES = 300
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path / "jobs")


def items_file(count: int, prefix: str = "big") -> SimpleUploadedFile:
    return SimpleUploadedFile(
        "items.jsonl", jsonl([chain(f"{prefix}-{n}", "Hi", "Hello") for n in range(count)])
    )


def test_a_file_above_the_threshold_is_imported_by_a_job_whose_result_is_the_report(
    people: dict[str, Any], jobs_run_at_once: None, settings: Any
) -> None:
    response = as_user(people, "maggie").post(
        dataset_url("support-trees", "import"), {"format": "potato", "file": items_file(5)}
    )

    assert response.status_code == 202, response.content
    job = response.json()
    assert response["Location"] == job["url"] == reverse("api:job", args=[job["id"]])
    assert job["kind"] == "trees.import"
    assert job["dataset"] == "support-trees"

    polled = as_user(people, "maggie").get(job["url"]).json()
    assert polled["state"] == "done"
    assert polled["done"] == polled["total"] > 0
    assert polled["attempts"] == 1
    assert polled["problems"] == []
    assert polled["message"] == "imported into support-trees: 5 trees created, 10 messages"
    # What the synchronous import answers for the same file.
    settings.BRANCHPOINT_JOB_THRESHOLD_BYTES = 10**9
    synchronous = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "potato", "file": items_file(5)}
    )
    assert synchronous.status_code == 200
    assert polled["result"] == synchronous.json() | {
        "dataset": "support-trees",
        "summary": "imported into support-trees: 5 trees created, 10 messages",
    }
    assert (
        ConversationTree.objects.filter(dataset__name="support-trees", external_id__startswith="big-").count()
        == 5
    )


def test_a_file_below_the_threshold_stays_synchronous(people: dict[str, Any], jobs_run_at_once: None) -> None:
    response = as_user(people, "maggie").post(
        dataset_url("support-trees", "import"), {"format": "potato", "file": items_file(1)}
    )

    assert response.status_code == 200
    assert response.json()["trees_created"] == 1
    assert not Job.objects.exists()


def test_a_failing_import_job_keeps_nothing_and_lists_its_problems(
    people: dict[str, Any], jobs_run_at_once: None
) -> None:
    items = [chain(f"ok-{n}", "Hi") for n in range(5)] + [{"id": "no-tree"}]
    upload = SimpleUploadedFile("items.jsonl", jsonl(items))

    response = as_user(people, "maggie").post(
        dataset_url("support-trees", "import"), {"format": "potato", "file": upload}
    )

    job = as_user(people, "maggie").get(response.json()["url"]).json()
    assert job["state"] == "failed"
    assert job["message"] == "nothing imported into support-trees: 1 error in 6 items"
    assert [(problem["line"], problem["path"]) for problem in job["problems"]] == [(6, "tree")]
    assert job["problems"][0]["text"].startswith("line 6: tree: ")
    assert job["result"]["committed"] is False
    assert not ConversationTree.objects.filter(external_id__startswith="ok-").exists()


def test_the_uploaded_file_is_removed_when_the_job_ends(
    people: dict[str, Any], jobs_run_at_once: None, tmp_path: Any
) -> None:
    as_user(people, "maggie").post(
        dataset_url("support-trees", "import"), {"format": "potato", "file": items_file(3)}
    )

    assert [path for path in (tmp_path / "jobs").rglob("*") if path.is_file()] == []


# Who sees a job


def test_a_job_is_seen_by_its_creator_its_datasets_managers_and_staff_only(
    people: dict[str, Any], jobs_run_at_once: None
) -> None:
    url = (
        as_user(people, "maggie")
        .post(dataset_url("support-trees", "import"), {"format": "potato", "file": items_file(3)})
        .json()["url"]
    )
    people["stan"] = person("stan", is_staff=True)

    seen = {name: as_user(people, name).get(url).status_code for name in people}

    assert seen == {"root": 200, "maggie": 200, "rita": 404, "alice": 404, "stan": 200}


def test_a_projects_manager_sees_its_jobs(people: dict[str, Any], settings: Any) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(kind="annotations.import", task=trees_import_job, project_name="support")

    seen = {name: as_user(people, name).get(reverse("api:job", args=[job.pk])).status_code for name in people}

    assert seen == {"root": 200, "maggie": 200, "rita": 404, "alice": 404}


def test_the_list_holds_the_callers_own_jobs_newest_first(people: dict[str, Any], settings: Any) -> None:
    settings.TASKS = DUMMY
    first = job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["maggie"])
    second = job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["maggie"])
    job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["root"])

    listed = as_user(people, "maggie").get(reverse("api:jobs")).json()

    assert [job["id"] for job in listed["results"]] == [second.pk, first.pk]


# Cancel


def test_cancelling_a_queued_job_cancels_it_and_it_never_runs(people: dict[str, Any], settings: Any) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(
        kind="trees.import", task=trees_import_job, created_by=people["maggie"], dataset_name="support-trees"
    )

    response = as_user(people, "maggie").post(reverse("api:job-cancel", args=[job.pk]))

    assert response.status_code == 200
    assert response.json()["state"] == "cancelled"
    trees_import_job.call(job.pk)  # the queue hands it out anyway
    job.refresh_from_db()
    assert (job.state, job.attempts) == ("cancelled", 0)


def test_a_finished_job_stays_as_it_was_when_cancelled(
    people: dict[str, Any], jobs_run_at_once: None
) -> None:
    url = (
        as_user(people, "maggie")
        .post(dataset_url("support-trees", "import"), {"format": "potato", "file": items_file(3)})
        .json()["url"]
    )

    response = as_user(people, "maggie").post(url + "/cancel")

    assert response.json()["state"] == "done"
    assert ConversationTree.objects.filter(external_id__startswith="big-").count() == 3


def test_others_cannot_cancel_a_job_they_cannot_see(people: dict[str, Any], settings: Any) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(
        kind="trees.import", task=trees_import_job, created_by=people["maggie"], dataset_name="support-trees"
    )

    response = as_user(people, "alice").post(reverse("api:job-cancel", args=[job.pk]))

    assert response.status_code == 404
    job.refresh_from_db()
    assert job.state == "queued"


def test_the_job_endpoints_are_in_the_schema(people: dict[str, Any]) -> None:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    assert {"/api/v1/jobs", "/api/v1/jobs/{job_id}", "/api/v1/jobs/{job_id}/cancel"} <= set(paths)
    assert "202" in paths["/api/v1/datasets/{name}/import"]["post"]["responses"]


def test_a_records_file_above_the_threshold_is_imported_into_the_project_by_a_job(
    judged: dict[str, Any], jobs_run_at_once: None
) -> None:
    maggie = judged["clients"]["maggie"]
    copy = project_create(name="copy", dataset=judged["project"].dataset, config_yaml=CONFIG)
    membership_add(project=copy, user=judged["people"]["maggie"], role="manager")
    exported = download(maggie, "support", format="potato")[1]
    assert len(exported) > 300

    response = maggie.post(import_url("copy"), {"file": SimpleUploadedFile("answers.jsonl", exported)})

    assert response.status_code == 202, response.content
    job = maggie.get(response["Location"]).json()
    assert (job["kind"], job["project"], job["state"]) == ("annotations.import", "copy", "done")
    assert job["result"]["annotations"] == 4
    assert job["result"]["committed"] is True
    assert download(maggie, "copy", format="potato")[1] == exported


# Exports to a file


def test_an_export_job_writes_the_file_the_streamed_export_gives_until_it_expires(
    judged: dict[str, Any], jobs_run_at_once: None, settings: Any
) -> None:
    maggie = judged["clients"]["maggie"]
    url = reverse("api:project-export-jobs", kwargs={"name": "support"})

    response = maggie.post(url, data={"format": "potato", "status": "all"}, content_type="application/json")

    assert response.status_code == 202, response.content
    job = maggie.get(response["Location"]).json()
    assert (job["kind"], job["state"], job["unit"]) == ("annotations.export", "done", "lines")
    assert job["file_url"] == reverse("api:job-file", args=[job["id"]])
    downloaded = maggie.get(job["file_url"])
    assert downloaded["Content-Disposition"] == 'attachment; filename="support.potato.jsonl"'
    assert (
        b"".join(downloaded.streaming_content)
        == download(maggie, "support", format="potato", status="all")[1]
    )

    later = timezone.now() + timedelta(days=settings.BRANCHPOINT_JOB_FILE_DAYS, seconds=1)
    assert job_files_expire(now=later) == 1
    assert maggie.get(response["Location"]).json()["file_url"] is None
    gone = maggie.get(job["file_url"])
    assert gone.status_code == 410
    assert gone.json()["code"] == "gone"


def test_export_jobs_are_for_managers_and_reviewers(judged: dict[str, Any], jobs_run_at_once: None) -> None:
    url = reverse("api:project-export-jobs", kwargs={"name": "support"})

    response = judged["clients"]["alice"].post(
        url, data={"format": "potato"}, content_type="application/json"
    )

    assert response.status_code == 403
    assert not Job.objects.exists()


def test_an_export_jobs_file_is_not_for_others(judged: dict[str, Any], jobs_run_at_once: None) -> None:
    url = reverse("api:project-export-jobs", kwargs={"name": "support"})
    job = (
        judged["clients"]["rita"].post(url, data={"format": "potato"}, content_type="application/json").json()
    )

    assert judged["clients"]["alice"].get(reverse("api:job-file", args=[job["id"]])).status_code == 404
    assert judged["clients"]["maggie"].get(reverse("api:job-file", args=[job["id"]])).status_code == 200


def test_the_list_and_a_job_cost_the_same_queries_for_few_jobs_or_many(
    people: dict[str, Any], settings: Any, django_assert_max_num_queries: Any
) -> None:
    settings.TASKS = DUMMY
    maggie = as_user(people, "maggie")
    job = job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["maggie"])
    with django_assert_max_num_queries(10) as few:
        maggie.get(reverse("api:jobs"))
    with django_assert_max_num_queries(10) as one:
        maggie.get(reverse("api:job", args=[job.pk]))
    for _ in range(5):
        job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["maggie"])

    with django_assert_max_num_queries(len(few.captured_queries)):
        listed = maggie.get(reverse("api:jobs")).json()
    with django_assert_max_num_queries(len(one.captured_queries)):
        maggie.get(reverse("api:job", args=[job.pk]))

    assert listed["count"] == 6


def test_a_cancel_the_database_cannot_take_now_is_a_409_saying_why(
    people: dict[str, Any], settings: Any, monkeypatch: Any
) -> None:
    settings.TASKS = DUMMY
    job = job_enqueue(kind="trees.import", task=trees_import_job, created_by=people["maggie"])

    def locked(job: Job) -> Job:
        raise OperationalError("database is locked")

    monkeypatch.setattr("annotation.api.jobs.job_cancel", locked)
    response = as_user(people, "maggie").post(reverse("api:job-cancel", args=[job.pk]))

    assert response.status_code == 409
    assert response.json() == {
        "code": "job_busy",
        "message": f"job {job.pk} holds the database while it runs (SQLite): it cannot be cancelled until it ends",
    }
