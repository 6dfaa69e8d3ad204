"""An admin uploads a file above the job threshold and watches its job reach done on the jobs
page: the progress bar, state and result move by themselves (the page polls the jobs API),
under the Content-Security-Policy, with no serious accessibility violation, at 1280 and 390 px.

A database-backend worker runs in a thread of the test (started once the page shows the job
waiting), as ``jobs_worker`` would in a process of its own.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse
from django_tasks_db.management.commands.db_worker import Worker
from playwright.sync_api import Page, expect

from tests.factories import StaffFactory
from tests.test_csp_browser import axe_clean
from tests.trees.test_admin import saved
from trees.jobs.models import Job
from trees.models import ConversationTree

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "artifacts")


def one_job_worker() -> threading.Thread:
    """The database backend's worker, in a thread: runs one job, then stops."""

    def run() -> None:
        try:
            Worker(
                queue_names=["default"],
                interval=0.1,
                batch=False,
                backend_name="default",
                startup_delay=False,
                max_tasks=1,
                worker_id="browser-test",
                excluded_queue_names=[],
            ).run()
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_an_admin_watches_an_imports_progress_bar_reach_done(
    live_server: Any, page: Page, sign_in: Any, settings: Any, tmp_path: Path
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.BRANCHPOINT_JOB_THRESHOLD_BYTES = 300
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path / "jobs")
    upload = tmp_path / "trees.jsonl"
    upload.write_text(
        "".join(
            json.dumps({"id": f"t-{n}", "tree": {"id": "0", "role": "user", "content": f"Hi {n}"}}) + "\n"
            for n in range(50)
        )
    )
    sign_in(page, saved(StaffFactory(username="root", is_superuser=True)))

    page.goto(live_server.url + reverse("admin:trees_dataset_import"))
    page.get_by_label("New dataset").fill("watched")
    page.get_by_label("Format").select_option("potato")
    page.get_by_label("File").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()

    job = Job.objects.get()
    row = page.locator("tr", has=page.locator(f'[data-job-url="{reverse("api:job", args=[job.pk])}"]'))
    expect(row.locator(".job-state")).to_have_text("queued")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "jobs-admin-queued-1280.png"), full_page=True)

    worker = one_job_worker()

    expect(row.locator(".job-state")).to_have_text("done", timeout=30_000)
    worker.join(timeout=30)
    bar = row.locator("progress")
    assert bar.get_attribute("max") == bar.get_attribute("value") == str(upload.stat().st_size)
    expect(row.locator(".job-message")).to_have_text("imported into watched: 50 trees created, 50 messages")
    expect(row.get_by_role("button", name=f"Cancel job {job.pk}")).to_have_count(0)
    assert ConversationTree.objects.filter(dataset__name="watched").count() == 50
    page.screenshot(path=str(ARTIFACTS / "jobs-admin-done-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 900})
    page.screenshot(path=str(ARTIFACTS / "jobs-admin-done-390.png"), full_page=True)
    axe_clean(page)

    # The job's own page (the admin's own view page): the whole result.
    page.set_viewport_size({"width": 1280, "height": 900})
    row.locator(".job-message").click()
    expect(page.locator(".field-message")).to_contain_text("imported into watched: 50 trees created")
    page.screenshot(path=str(ARTIFACTS / "jobs-admin-detail-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 900})
    page.screenshot(path=str(ARTIFACTS / "jobs-admin-detail-390.png"), full_page=True)
