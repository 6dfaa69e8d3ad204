"""The annotations admin's import page and jobs: a file above ``BRANCHPOINT_JOB_THRESHOLD_BYTES``
is imported by a job (the page goes to the jobs list), all or nothing as the synchronous
import is (tests/annotation/admin/test_admin.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from annotation.models import Annotation
from tests.annotation.admin.test_admin import IMPORT_URL, messages_of, upload
from tests.annotation.admin.test_admin import alice as alice
from tests.annotation.admin.test_admin import as_alice as as_alice
from tests.annotation.admin.test_admin import quality as quality
from tests.annotation.admin.test_admin import support as support
from tests.annotation.exports.test_exports import seed_output
from trees.jobs.models import Job

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture
def jobs_at_once(settings: Any, tmp_path: Any) -> None:
    settings.TASKS = IMMEDIATE
    settings.BRANCHPOINT_JOB_THRESHOLD_BYTES = 100
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path / "jobs")


def test_a_large_file_is_imported_by_a_job(as_alice: Client, quality: Any, jobs_at_once: None) -> None:
    response = as_alice.post(
        IMPORT_URL,
        {
            "project": quality.pk,
            "file": upload({"id": "conv_001", "user": "carol", "annotations": seed_output()}),
        },
        follow=True,
    )

    job = Job.objects.get()
    assert response.redirect_chain == [("/admin/jobs/job/", 302)]
    assert messages_of(response) == [("info", f"Job {job.pk} imports the file: its progress is below.")]
    assert (job.kind, job.project_name, job.state, job.via) == (
        "annotations.import",
        "quality",
        "done",
        "admin",
    )
    assert job.message == "imported into quality: 1 record, 1 annotation; 1 annotator created: carol"
    assert Annotation.objects.get().source == "import"


def test_a_large_bad_file_fails_its_job_and_imports_nothing(
    as_alice: Client, quality: Any, jobs_at_once: None
) -> None:
    bad = {
        "id": "conv_404",
        "user": "dave",
        "annotations": {"response_quality": {"selected_path": ["resp_a"]}},
    }

    as_alice.post(
        IMPORT_URL,
        {
            "project": quality.pk,
            "file": upload({"id": "conv_001", "user": "carol", "annotations": seed_output()}, bad),
        },
    )

    job = Job.objects.get()
    assert job.state == "failed"
    assert [problem["text"] for problem in job.problems] == [
        'line 2: id: no item "conv_404" in project "quality"'
    ]
    assert not Annotation.objects.exists()
