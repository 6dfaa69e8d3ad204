"""Jobs in real workers: ``manage.py jobs_worker`` over the database backend and over RQ.

- The database worker runs the jobs waiting (``--batch``) to done.
- A worker killed with ``kill -9`` mid-import leaves no tree of that import; the next worker
  reaps the job (its heartbeat stopped) and runs it again to done, in a second attempt. To
  kill it mid-import whatever the machine's speed, its first attempt reads the job's file from
  a pipe the test feeds: half the trees, then nothing, so the worker waits with a batch
  written and not committed; the retry reads the whole file.
- The RQ worker (Redis at ``REDIS_URL``) runs an import job to done. Redis missing skips it,
  unless ``BRANCHPOINT_REQUIRE_SERVICES=1`` (CI) makes that a failure.

The workers are processes of their own against the test database, so these specs commit
(``transactional_db``) and run on PostgreSQL (SQLite's test database lives in memory). Each
is started through the ``workers`` fixture, which kills whichever is still running however
the spec ends (a worker left running holds the test database, and the session's teardown
waits for it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
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


Workers = Callable[..., subprocess.Popen]


@pytest.fixture
def workers(settings: Any) -> Iterator[Workers]:
    """Starts ``manage.py jobs_worker`` processes (``workers(*args, **env)``) against the test
    database; any still running when the spec ends, passed or failed, is killed and waited for."""
    started: list[subprocess.Popen] = []

    def start(*args: str, **env: str) -> subprocess.Popen:
        process = subprocess.Popen(
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
        started.append(process)
        return process

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=30)


def finished(process: subprocess.Popen, timeout: float) -> str:
    """The worker's output once it exits by itself within ``timeout`` seconds (else the spec
    fails, and the fixture kills it)."""
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker was still running after {timeout} s")
    return output


def killed(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)


# The import reads its file a MiB at a time (trees.formats.jsonstream): a worker given a little
# more stores the first MiB's trees, a batch at a time, and waits for the second.
READ_CHUNK = 1 << 20


class StalledSource:
    """The job's file replaced by a pipe: a worker reading it gets the whole lines of its first
    MiB and a little more, then waits for more, mid-import, until it is killed. ``restore()``
    puts the whole file back for the next attempt."""

    def __init__(self, job: Job):
        self.path = Path(job.source)
        self.whole = self.path.with_name("whole")
        self.path.rename(self.whole)
        os.mkfifo(self.path)
        head = b""
        with self.whole.open("rb") as whole:
            while len(head) <= READ_CHUNK:
                head += whole.readline()
            assert whole.readline(), "the file must hold more than the pipe gives"
        self.restored = threading.Event()
        self.feeder = threading.Thread(target=self._feed, args=(head,), daemon=True)
        self.feeder.start()

    def _feed(self, head: bytes) -> None:
        try:
            with self.path.open("wb") as pipe:  # waits for a worker to open it
                pipe.write(head)
                pipe.flush()
                self.restored.wait()  # no end of file meanwhile: the reader waits for more
        except OSError:
            return  # the reader was killed (a broken pipe)

    def restore(self) -> None:
        self.restored.set()
        self.whole.replace(self.path)
        self.feeder.join(timeout=5)


def trees_written_uncommitted() -> bool:
    """Whether another session has written to the trees table in a transaction still open."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE relation = 'trees_conversationtree'::regclass "
            "AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid())"
        )
        return cursor.fetchone()[0]


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
    job_files: Path, workers: Workers
) -> None:
    Dataset.objects.create(name="big")
    count = 10_000  # some 1.4 MiB
    job = import_job(trees_file(job_files / "big.jsonl", count, "b"), "big")
    source = StalledSource(job)
    first = workers()

    # Killed with a batch of trees written, not committed, as it waits for more of its file.
    until(trees_written_uncommitted, 60, "the import's first batch of trees")
    running = Job.objects.get(pk=job.pk)
    assert (running.state, running.attempts) == ("running", 1)
    killed(first)

    assert not ConversationTree.objects.filter(dataset__name="big").exists()
    source.restore()
    time.sleep(2.5)  # the dead run's heartbeat goes stale

    output = finished(workers("--batch"), 60)

    job.refresh_from_db()
    assert "reaped 1 job(s) whose worker had stopped" in output
    assert (job.state, job.attempts) == ("done", 2), job.message
    assert job.message == f"imported into big: {count:,} trees created, {2 * count:,} messages"
    assert ConversationTree.objects.filter(dataset__name="big").count() == count


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_died_too_often_fails_with_the_reason(
    job_files: Path, settings: Any, workers: Workers
) -> None:
    Dataset.objects.create(name="doomed")
    job = import_job(trees_file(job_files / "doomed.jsonl", 10_000, "d"), "doomed")
    for attempt in range(1, settings.BRANCHPOINT_JOB_ATTEMPTS + 1):
        source = StalledSource(job)
        process = workers()
        until(trees_written_uncommitted, 60, f"attempt {attempt}'s first batch of trees")
        assert Job.objects.filter(pk=job.pk, attempts=attempt, state="running").exists()
        killed(process)
        source.restore()
        time.sleep(2.5)

    finished(workers("--batch"), 60)

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
def test_the_rq_worker_runs_an_import_job_to_done(job_files: Path, settings: Any, workers: Workers) -> None:
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

    process = workers("--batch", BRANCHPOINT_TASKS_BACKEND="rq", REDIS_URL=REDIS_URL)
    output = finished(process, 120)

    job.refresh_from_db()
    assert process.returncode == 0, output
    assert (job.state, job.attempts, job.message) == (
        "done",
        1,
        "imported into queued: 3 trees created, 6 messages",
    )
    assert ConversationTree.objects.filter(dataset__name="queued").count() == 3
