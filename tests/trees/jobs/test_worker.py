"""Jobs in real workers: ``manage.py jobs_worker`` over the database backend and over RQ.

- The database worker runs the jobs waiting (``--batch``) to done.
- A worker killed with ``kill -9`` mid-import leaves no tree of that import; the next worker
  reaps the job (its heartbeat stopped) and runs it again to done, in a second attempt.
- The RQ worker (Redis at ``REDIS_URL``) runs an import job to done. Redis missing skips it,
  unless ``BRANCHPOINT_REQUIRE_SERVICES=1`` (CI) makes that a failure.

The workers are processes of their own against the test database, so these specs commit
(``transactional_db``) and run on PostgreSQL (SQLite's test database lives in memory).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from trees.jobs.models import Job
from trees.jobs.services import job_enqueue
from trees.models import ConversationTree, Dataset
from trees.tasks import TREES_IMPORT, trees_import_job

ROOT = Path(__file__).resolve().parents[3]
DB_BACKEND = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def trees_file(path: Path, count: int, prefix: str) -> Path:
    with path.open("w") as out:
        for n in range(count):
            tree = {
                "id": "0",
                "role": "user",
                "content": f"Hi {n}",
                "children": [{"id": "1", "role": "assistant", "content": "Hello"}],
            }
            out.write(json.dumps({"id": f"{prefix}-{n}", "tree": tree}) + "\n")
    return path


def import_job(path: Path, dataset: str) -> Job:
    with path.open("rb") as source:
        return job_enqueue(
            kind=TREES_IMPORT,
            task=trees_import_job,
            dataset_name=dataset,
            params={"format": "potato"},
            source=source,
            total=path.stat().st_size,
        )


def database_url() -> str:
    """The test database, as the worker processes' settings read it."""
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def worker(settings: Any, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "jobs_worker", *args],
        cwd=ROOT,
        env=os.environ
        | {
            "DATABASE_URL": database_url(),
            "SECRET_KEY": "tests-only-not-a-secret",
            "BRANCHPOINT_JOB_DIR": settings.BRANCHPOINT_JOB_DIR,
            "BRANCHPOINT_JOB_HEARTBEAT_SECONDS": "2",
            "LOG_LEVEL": "WARNING",
        }
        | env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


@pytest.fixture
def job_files(settings: Any, tmp_path: Path) -> Path:
    settings.TASKS = DB_BACKEND
    settings.BRANCHPOINT_JOB_DIR = str(tmp_path / "jobs")
    return tmp_path


@pytest.mark.django_db(transaction=True)
def test_the_database_worker_runs_the_waiting_jobs_to_done(job_files: Path) -> None:
    Dataset.objects.create(name="small")
    job = import_job(trees_file(job_files / "small.jsonl", 3, "s"), "small")

    call_command("jobs_worker", "--batch", verbosity=0)

    job.refresh_from_db()
    assert (job.state, job.attempts, job.message) == (
        "done",
        1,
        "imported into small: 3 trees created, 6 messages",
    )
    assert ConversationTree.objects.filter(dataset__name="small").count() == 3


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_import_leaves_nothing_and_the_job_is_retried_to_done(
    job_files: Path, settings: Any
) -> None:
    Dataset.objects.create(name="big")
    # Enough trees that the import is still running a few heartbeats after its first progress
    # (20,000 went in within one heartbeat on a quiet machine, before any progress showed).
    count = 100_000
    job = import_job(trees_file(job_files / "big.jsonl", count, "b"), "big")
    first = worker(settings)
    try:
        # Killed once the job has reported progress: trees are written, not yet committed.
        until(lambda: Job.objects.get(pk=job.pk).done > 0, 60, "the import's first progress")
        running = Job.objects.get(pk=job.pk)
        assert running.state == "running" and running.done < running.total
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()

    assert not ConversationTree.objects.filter(dataset__name="big").exists()
    time.sleep(2.5)  # the dead run's heartbeat goes stale

    second = worker(settings, "--batch")
    output, _ = second.communicate(timeout=180)

    job.refresh_from_db()
    assert second.returncode == 0, output
    assert "reaped 1 job(s) whose worker had stopped" in output
    assert (job.state, job.attempts) == ("done", 2), job.message
    assert job.message == f"imported into big: {count:,} trees created, {2 * count:,} messages"
    assert ConversationTree.objects.filter(dataset__name="big").count() == count


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_died_too_often_fails_with_the_reason(job_files: Path, settings: Any) -> None:
    Dataset.objects.create(name="doomed")
    job = import_job(trees_file(job_files / "doomed.jsonl", 20_000, "d"), "doomed")
    for attempt in range(1, settings.BRANCHPOINT_JOB_ATTEMPTS + 1):
        process = worker(settings)
        try:
            # Killed as soon as it runs: the import takes longer than the 0.1 s between looks.
            until(
                lambda: Job.objects.filter(pk=job.pk, attempts=attempt, state="running").exists(),  # noqa: B023
                90,
                f"attempt {attempt} running",
            )
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        time.sleep(2.5)

    reaper = worker(settings, "--batch")
    reaper.communicate(timeout=60)

    job.refresh_from_db()
    assert job.state == "failed"
    assert (
        job.message
        == f"attempt {job.attempts}: its worker stopped (no heartbeat for 2 s); failed after 3 attempts"
    )
    assert not ConversationTree.objects.filter(dataset__name="doomed").exists()


def redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_rq_worker_runs_an_import_job_to_done(job_files: Path, settings: Any) -> None:
    if not redis_reachable():
        if os.environ.get("BRANCHPOINT_REQUIRE_SERVICES") == "1":
            pytest.fail(f"Redis is not reachable at {REDIS_URL} (BRANCHPOINT_REQUIRE_SERVICES=1)")
        pytest.skip(f"needs Redis at {REDIS_URL} (CI has it and sets BRANCHPOINT_REQUIRE_SERVICES=1)")
    settings.RQ_QUEUES = {"default": {"URL": REDIS_URL, "DEFAULT_TIMEOUT": -1}}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    import django_rq

    django_rq.get_queue("default").empty()
    Dataset.objects.create(name="queued")
    job = import_job(trees_file(job_files / "queued.jsonl", 3, "q"), "queued")

    process = worker(settings, "--batch", BRANCHPOINT_TASKS_BACKEND="rq", REDIS_URL=REDIS_URL)
    output, _ = process.communicate(timeout=120)

    job.refresh_from_db()
    assert process.returncode == 0, output
    assert (job.state, job.attempts, job.message) == (
        "done",
        1,
        "imported into queued: 3 trees created, 6 messages",
    )
    assert ConversationTree.objects.filter(dataset__name="queued").count() == 3
