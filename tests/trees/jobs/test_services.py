"""A job's run (``trees.jobs.services``): claimed once, all or nothing, cancellable, reaped.

- A job runs once however often the queue hands it out: the claim moves it from queued to
  running and counts the attempt, and only one claim wins.
- The work and the job's finish are one transaction: a run that fails, is cancelled, or lost
  its job to the reaper keeps none of its writes.
- The reaper requeues a running job whose heartbeat is stale, and fails it with the reason
  once it has had ``BRANCHPOINT_JOB_ATTEMPTS`` attempts; a job still beating is left alone.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from trees.jobs.models import Job
from trees.jobs.services import JobRun, Outcome, job_cancel, job_enqueue, job_execute, jobs_reap
from trees.models import Dataset
from trees.tasks import trees_import_job

pytestmark = pytest.mark.django_db

DUMMY = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def job(settings: Any) -> Job:
    settings.TASKS = DUMMY
    return job_enqueue(kind="trees.import", task=trees_import_job, dataset_name="made")


def writes_a_dataset(run: JobRun) -> Outcome:
    Dataset.objects.create(name="made")
    run.progress(10, 10)
    return Outcome(ok=True, result={"made": 1}, message="made one")


def test_a_job_handed_out_twice_runs_once(job: Job) -> None:
    runs = []

    def work(run: JobRun) -> Outcome:
        runs.append(run.attempt)
        return writes_a_dataset(run)

    job_execute(job.pk, work)
    job_execute(job.pk, work)

    job.refresh_from_db()
    assert runs == [1]
    assert (job.state, job.attempts, job.result, job.message) == ("done", 1, {"made": 1}, "made one")
    assert (job.done, job.total) == (10, 10)
    assert job.started_at <= job.finished_at


def test_a_failing_run_keeps_nothing_and_says_why(job: Job) -> None:
    def work(run: JobRun) -> Outcome:
        Dataset.objects.create(name="made")
        raise ValueError("the file vanished")

    job_execute(job.pk, work)

    job.refresh_from_db()
    assert (job.state, job.message) == ("failed", "ValueError: the file vanished")
    assert not Dataset.objects.filter(name="made").exists()


def test_work_that_reports_problems_fails_with_them(job: Job) -> None:
    problem = {"line": 3, "path": "tree", "message": "missing", "text": "line 3: tree: missing"}

    job_execute(
        job.pk, lambda run: Outcome(ok=False, result={}, message="nothing imported", problems=[problem])
    )

    job.refresh_from_db()
    assert (job.state, job.message, job.problems) == ("failed", "nothing imported", [problem])


def test_a_running_job_cancelled_stops_at_its_next_check_and_keeps_nothing(job: Job) -> None:
    def work(run: JobRun) -> Outcome:
        Dataset.objects.create(name="made")
        job_cancel(Job.objects.get(pk=job.pk))  # someone presses Cancel meanwhile
        run.check_cancelled(every=0)
        return Outcome(ok=True, result={})

    job_execute(job.pk, work)

    job.refresh_from_db()
    assert (job.state, job.message) == ("cancelled", "cancelled; nothing was kept")
    assert not Dataset.objects.filter(name="made").exists()


def test_work_that_commits_as_it_goes_keeps_its_steps_when_cancelled(job: Job) -> None:
    def work(run: JobRun) -> Outcome:
        Dataset.objects.create(name="step-1")
        job_cancel(Job.objects.get(pk=job.pk))
        run.progress(1, 2)
        Dataset.objects.create(name="step-2")
        return Outcome(ok=True, result={})

    job_execute(job.pk, work, atomic=False)

    job.refresh_from_db()
    assert (job.state, job.message) == ("cancelled", "cancelled; the steps done before are kept")
    assert list(Dataset.objects.values_list("name", flat=True)) == ["step-1"]


def reaped_elsewhere(now: Any) -> int:
    """The reaper of another worker process: a connection of its own."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: (jobs_reap(now=now), connection.close())[0]).result()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_run_that_lost_its_job_to_the_reaper_commits_nothing(job: Job, settings: Any) -> None:
    def work(run: JobRun) -> Outcome:
        Dataset.objects.create(name="made")
        later = timezone.now() + timedelta(seconds=settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS + 1)
        assert reaped_elsewhere(later) == 1  # this run looked dead: the job went back to the queue
        return Outcome(ok=True, result={})

    job_execute(job.pk, work)

    job.refresh_from_db()
    assert (job.state, job.attempts) == ("queued", 1)
    assert (
        job.message
        == f"attempt 1: its worker stopped (no heartbeat for {settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS} s); retried"
    )
    assert not Dataset.objects.filter(name="made").exists()


def running(job: Job, *, attempts: int, beat_seconds_ago: float) -> None:
    beat = timezone.now() - timedelta(seconds=beat_seconds_ago)
    Job.objects.filter(pk=job.pk).update(
        state="running", attempts=attempts, heartbeat_at=beat, started_at=beat
    )


def test_the_reaper_requeues_a_job_whose_heartbeat_stopped(job: Job, settings: Any) -> None:
    settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS = 60
    running(job, attempts=1, beat_seconds_ago=61)

    assert jobs_reap() == 1

    job.refresh_from_db()
    assert (job.state, job.attempts, job.done) == ("queued", 1, 0)
    job_execute(job.pk, writes_a_dataset)  # the next worker takes it
    job.refresh_from_db()
    assert (job.state, job.attempts) == ("done", 2)


def test_the_reaper_fails_a_job_after_its_last_attempt(job: Job, settings: Any) -> None:
    settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS = 60
    settings.BRANCHPOINT_JOB_ATTEMPTS = 3
    running(job, attempts=3, beat_seconds_ago=61)

    assert jobs_reap() == 1

    job.refresh_from_db()
    assert job.state == "failed"
    assert job.message == "attempt 3: its worker stopped (no heartbeat for 60 s); failed after 3 attempts"
    assert job.finished_at is not None


def test_the_reaper_leaves_a_job_that_still_beats(job: Job, settings: Any) -> None:
    settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS = 60
    running(job, attempts=1, beat_seconds_ago=30)

    assert jobs_reap() == 0

    job.refresh_from_db()
    assert job.state == "running"


def test_the_rate_is_units_per_second_of_the_run(job: Job) -> None:
    start = timezone.now()
    job.started_at, job.finished_at, job.done = start, start + timedelta(seconds=4), 1000

    assert job.rate == 250


def test_a_job_the_queue_cannot_take_fails_saying_why(settings: Any, tmp_path: Any) -> None:
    settings.RQ_QUEUES = {"default": {"URL": "redis://127.0.0.1:1/0"}}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path)

    job = job_enqueue(kind="trees.import", task=trees_import_job, source=io.BytesIO(b"{}"))

    assert job.state == "failed"
    assert job.message.startswith("could not be queued: ")
    assert list(tmp_path.iterdir()) == []
