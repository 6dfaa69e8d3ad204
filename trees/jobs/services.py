"""Jobs: enqueue one, run its work safely, watch and cancel it, reap the ones whose worker died.

A run is owned by its attempt number: the claim moves the job from queued to running and
counts the attempt in one conditional UPDATE, so of two workers handed the same job only
one wins; every later write checks the attempt, so a run the reaper has given up on can
neither report progress nor commit. The work runs in one transaction together with the
job's finish, so a worker killed mid-way leaves nothing behind and the job is either done
with its data or not done at all.

Progress and the heartbeat are written by a thread on a connection of its own, since the
work's transaction is open until the end (PostgreSQL). SQLite has one writer at a time and
the work holds it: there the job shows its progress when it finishes, and the reaper's
write waits on that same lock, so it cannot reap a job that is still running.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.module_loading import import_string

from trees.audit import audit_context
from trees.jobs.models import Job

logger = logging.getLogger(__name__)

State = Job.State
# How often the heartbeat thread writes progress, and how often the work reads for a cancel.
BEAT_SECONDS = 1.0


class JobCancelled(Exception):
    """Raised inside the work when someone asked to cancel it: its transaction rolls back."""


class JobLost(Exception):
    """Raised inside the work when the job is no longer this run's (the reaper gave it to another)."""


@dataclass
class Outcome:
    """What a job's work ends with: whether it did what was asked, its result and problems."""

    ok: bool
    result: dict[str, Any]
    message: str = ""
    problems: list[dict[str, Any]] = field(default_factory=list)
    # A file the job made (``job_result_path``), downloadable until BRANCHPOINT_JOB_FILE_DAYS pass.
    file: str = ""


def job_files_dir(job: Job) -> Path:
    return Path(settings.BRANCHPOINT_JOB_DIR) / str(job.pk)


def job_result_path(job: Job, name: str) -> Path:
    """Where the job's result file called ``name`` goes (its folder made)."""
    folder = job_files_dir(job)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def job_enqueue(
    *,
    kind: str,
    task: Any,
    created_by: Any = None,
    via: str = "",
    dataset_name: str = "",
    project_name: str = "",
    params: dict[str, Any] | None = None,
    source: IO[bytes] | None = None,
    total: int = 0,
    unit: str = "bytes",
) -> Job:
    """A new queued job for ``task`` (a django-tasks task taking the job's id), with ``source``
    (an upload) copied where the worker can read it; the task is enqueued once the job exists."""
    job = Job.objects.create(
        kind=kind,
        task_path=task.module_path,
        created_by=created_by if getattr(created_by, "is_authenticated", False) else None,
        via=via,
        dataset_name=dataset_name,
        project_name=project_name,
        params=params or {},
        total=total,
        unit=unit,
    )
    if source is not None:
        folder = job_files_dir(job)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "source"
        with path.open("wb") as out:
            shutil.copyfileobj(source, out, 1024 * 1024)
        job.source = str(path)
        job.save(update_fields=["source"])
    try:
        _task_enqueue(job)
    except Exception as error:
        # The queue is unreachable (Redis down, say): the job says so rather than wait for ever.
        logger.exception("job %s could not be queued", job.pk)
        Job.objects.filter(pk=job.pk, state=State.QUEUED).update(
            state=State.FAILED, finished_at=timezone.now(), message=f"could not be queued: {error}"
        )
        _source_remove(job)
    job.refresh_from_db()
    return job


def _task_enqueue(job: Job) -> None:
    """Hand the job to the queue (a test's immediate backend runs it here and now)."""
    result = import_string(job.task_path).enqueue(job.pk)
    Job.objects.filter(pk=job.pk, task_id="").update(task_id=str(result.id)[:64])


def job_cancel(job: Job) -> Job:
    """Cancel ``job``: a queued one at once; a running one at its next check (its work rolls
    back). A finished job stays as it is."""
    now = timezone.now()
    if Job.objects.filter(pk=job.pk, state=State.QUEUED).update(
        state=State.CANCELLED, cancel_requested=True, finished_at=now, message="cancelled before it ran"
    ):
        _source_remove(job)
    else:
        Job.objects.filter(pk=job.pk, state=State.RUNNING).update(cancel_requested=True)
    job.refresh_from_db()
    return job


class JobRun:
    """One attempt at a job, handed to its work: ``progress()`` and ``check_cancelled()``."""

    def __init__(self, job: Job):
        self.job = job
        self.attempt = job.attempts
        self._checked_at = 0.0
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @property
    def source_path(self) -> str:
        return self.job.source

    def progress(self, done: int, total: int | None = None) -> None:
        """Record how far the work is, and stop it if cancelled. Inside the work's transaction
        the heartbeat writes it; work that commits as it goes (``atomic=False``) writes it here."""
        self.job.done = done
        if total is not None:
            self.job.total = total
        if not connection.in_atomic_block and timezone.now().timestamp() - self._checked_at >= BEAT_SECONDS:
            Job.objects.filter(pk=self.job.pk, state=State.RUNNING, attempts=self.attempt).update(
                done=self.job.done, total=self.job.total, heartbeat_at=timezone.now()
            )
        self.check_cancelled()

    def check_cancelled(self, *, every: float = BEAT_SECONDS) -> None:
        """Raise ``JobCancelled`` when a cancel was asked for, ``JobLost`` when the job is no
        longer this run's; reads the job at most once per ``every`` seconds."""
        now = timezone.now().timestamp()
        if now - self._checked_at < every:
            return
        self._checked_at = now
        row = Job.objects.filter(pk=self.job.pk).values("state", "attempts", "cancel_requested").first()
        if row is None or row["state"] != State.RUNNING or row["attempts"] != self.attempt:
            raise JobLost(f"job {self.job.pk} attempt {self.attempt} is no longer running")
        if row["cancel_requested"]:
            raise JobCancelled

    # The heartbeat: a connection of its own, since the work's transaction stays open.

    def beat_start(self) -> None:
        if connection.vendor == "sqlite":
            return
        self._beat = threading.Thread(
            target=self._beat_loop, name=f"job-{self.job.pk}-heartbeat", daemon=True
        )
        self._beat.start()

    def beat_stop(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
            self._beat = None

    def _beat_loop(self) -> None:
        side = connections.create_connection(DEFAULT_DB_ALIAS)
        table = connection.ops.quote_name(Job._meta.db_table)
        try:
            while not self._stop.wait(BEAT_SECONDS):
                with side.cursor() as cursor:
                    cursor.execute(
                        f"UPDATE {table} SET done = %s, total = %s, heartbeat_at = %s "
                        "WHERE id = %s AND state = %s AND attempts = %s",
                        [
                            self.job.done,
                            self.job.total,
                            timezone.now(),
                            self.job.pk,
                            State.RUNNING,
                            self.attempt,
                        ],
                    )
        except Exception:
            logger.exception("job %s: the heartbeat stopped", self.job.pk)
        finally:
            side.close()


def _claim(job_id: int) -> JobRun | None:
    """The job, moved from queued to running by this worker; None when another run has it,
    or it was cancelled or finished meanwhile (the queue may hand a job out twice)."""
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.state != State.QUEUED:
        return None
    now = timezone.now()
    won = Job.objects.filter(pk=job_id, state=State.QUEUED, attempts=job.attempts).update(
        state=State.RUNNING, attempts=F("attempts") + 1, started_at=now, heartbeat_at=now, done=0
    )
    if not won:
        return None
    job.refresh_from_db()
    return JobRun(job)


def job_execute(job_id: int, work: Callable[[JobRun], Outcome], *, atomic: bool = True) -> None:
    """Run ``work`` for the job as one transaction with its finish (what task functions call).

    Problems the work reports (bad items, say) fail the job with them, nothing kept; an
    exception fails it with its reason; a cancel rolls back and says so. A run that lost its
    job to the reaper commits nothing and leaves the job to the run that has it.

    ``atomic=False`` is for work made of steps that each commit and that a second run skips
    once done (retrying trees' scoring, one tree at a time): a run that dies is resumed by the
    next, and a cancel stops it between steps, keeping those already done.
    """
    run = _claim(job_id)
    if run is None:
        return
    job = run.job
    run.beat_start()
    try:
        # Atomic: the finish commits with the work. Otherwise the steps have committed already.
        with transaction.atomic() if atomic else contextlib.nullcontext():
            with audit_context(actor=job.created_by, via=job.via or "system", name=f"job {job.pk}"):
                outcome = work(run)
            run.beat_stop()
            with transaction.atomic():
                _finish(run, outcome)
        _source_remove(job)
    except JobCancelled:
        kept = "nothing was kept" if atomic else "the steps done before are kept"
        _end(run, state=State.CANCELLED, message=f"cancelled; {kept}")
    except JobLost:
        logger.warning("job %s: attempt %s lost the job to another run", job.pk, run.attempt)
    except Exception as error:
        logger.exception("job %s failed", job.pk)
        _end(run, state=State.FAILED, message=f"{type(error).__name__}: {error}")
    finally:
        run.beat_stop()


def _finish(run: JobRun, outcome: Outcome) -> None:
    """Record the outcome, in the work's transaction, if the job is still this run's."""
    job = (
        Job.objects.select_for_update()
        .filter(pk=run.job.pk, state=State.RUNNING, attempts=run.attempt)
        .first()
    )
    if job is None:
        raise JobLost
    if job.cancel_requested:
        raise JobCancelled
    now = timezone.now()
    job.state = State.DONE if outcome.ok else State.FAILED
    job.result, job.message, job.problems = outcome.result, outcome.message, outcome.problems
    job.done = max(run.job.done, job.done)
    job.total = max(run.job.total, job.total, job.done)
    job.finished_at = job.heartbeat_at = now
    if outcome.file:
        job.result_file = outcome.file
        job.result_expires_at = now + timedelta(days=settings.BRANCHPOINT_JOB_FILE_DAYS)
    job.save()


def _end(run: JobRun, *, state: str, message: str) -> None:
    """A run that ended without its finish: cancelled or failed, if the job is still its own."""
    now = timezone.now()
    if Job.objects.filter(pk=run.job.pk, state=State.RUNNING, attempts=run.attempt).update(
        state=state, message=message, finished_at=now, heartbeat_at=now
    ):
        _source_remove(run.job)


def _source_remove(job: Job) -> None:
    if job.source:
        source = Path(job.source)
        source.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # the folder holds a result file too
            source.parent.rmdir()


def jobs_reap(*, now: Any = None) -> int:
    """Requeue (or, after ``BRANCHPOINT_JOB_ATTEMPTS`` attempts, fail with the reason) every
    running job whose heartbeat is older than ``BRANCHPOINT_JOB_HEARTBEAT_SECONDS``: its
    worker died. Returns how many were reaped. Each is a conditional UPDATE, so a job that
    finished or beat meanwhile, or that another reaper took, is left alone."""
    now = now or timezone.now()
    timeout = settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS
    cutoff = now - timedelta(seconds=timeout)
    reaped = 0
    for job in Job.objects.filter(state=State.RUNNING, heartbeat_at__lt=cutoff):
        stale = Job.objects.filter(
            pk=job.pk, state=State.RUNNING, attempts=job.attempts, heartbeat_at__lt=cutoff
        )
        why = f"attempt {job.attempts}: its worker stopped (no heartbeat for {timeout} s)"
        try:
            if job.attempts < settings.BRANCHPOINT_JOB_ATTEMPTS:
                if stale.update(state=State.QUEUED, message=f"{why}; retried", task_id="", done=0):
                    _task_lost(job)
                    _task_enqueue(job)
                    reaped += 1
            elif stale.update(
                state=State.FAILED,
                message=f"{why}; failed after {job.attempts} attempts",
                finished_at=now,
            ):
                _task_lost(job)
                _source_remove(job)
                reaped += 1
        except OperationalError as error:
            # SQLite: a running job holds the one write lock, so it is alive; try again later.
            logger.info("job %s: not reaped now (%s)", job.pk, error)
    return reaped


def job_files_expire(*, now: Any = None) -> int:
    """Remove the result files whose time is up (``BRANCHPOINT_JOB_FILE_DAYS``); returns how many."""
    now = now or timezone.now()
    expired = Job.objects.filter(result_expires_at__lt=now).exclude(result_file="")
    count = 0
    for job in expired:
        Path(job.result_file).unlink(missing_ok=True)
        count += Job.objects.filter(pk=job.pk).update(result_file="")
    return count


def job_file_available(job: Job) -> bool:
    return (
        bool(job.result_file) and job.result_expires_at is not None and job.result_expires_at > timezone.now()
    )


def _task_lost(job: Job) -> None:
    """Mark the database backend's row of the dead run failed, so its own admin does not show
    it running for ever (RQ keeps its own registries of lost jobs)."""
    from django_tasks_db.backend import DatabaseBackend
    from django_tasks_db.models import DBTaskResult

    if job.task_id and isinstance(import_string(job.task_path).get_backend(), DatabaseBackend):
        DBTaskResult.objects.filter(id=job.task_id, status="RUNNING").update(
            status="FAILED", finished_at=timezone.now()
        )
