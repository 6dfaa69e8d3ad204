"""``manage.py jobs_worker``: run jobs (the configured backend's worker) and reap dead runs.

The reaper runs once before the worker starts, so a restarted worker first takes back
what its predecessor left running, and then every ``--reap-every`` seconds beside it.
"""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandParser
from django.db import connections

from trees.audit import TextCommand
from trees.jobs.services import job_files_expire, jobs_reap


class Reaper(threading.Thread):
    """Reaps every ``every`` seconds until stopped, on its own connection, and removes the
    result files whose time is up."""

    def __init__(self, every: float):
        super().__init__(name="jobs-reaper", daemon=True)
        self.every = every
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.every):
            try:
                jobs_reap()
                job_files_expire()
            finally:
                connections.close_all()

    def stop(self) -> None:
        self.stopped.set()


class Command(TextCommand):
    help = "Run jobs (imports, exports, ...) with the configured tasks backend, reaping dead runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--reap-every",
            type=float,
            default=None,
            help="Seconds between reaps (default: a quarter of BRANCHPOINT_JOB_HEARTBEAT_SECONDS).",
        )
        parser.add_argument("--batch", action="store_true", help="Run the jobs waiting, then exit.")
        parser.add_argument(
            "--interval", type=float, default=1.0, help="Seconds between looks at an empty queue (database)."
        )

    def handle(
        self, *args: Any, reap_every: float | None, batch: bool, interval: float, **options: Any
    ) -> None:
        reaped = jobs_reap()
        if reaped:
            self.stdout.write(f"reaped {reaped} job(s) whose worker had stopped")
        reaper = Reaper(reap_every or max(settings.BRANCHPOINT_JOB_HEARTBEAT_SECONDS / 4, 1))
        reaper.start()
        try:
            if settings.BRANCHPOINT_TASKS_BACKEND == "rq":
                call_command("rqworker", "default", job_class="django_tasks_rq.Job", burst=batch)
            else:
                call_command(
                    "db_worker",
                    interval=interval,
                    batch=batch,
                    reload=False,
                    startup_delay=False,
                    verbosity=options["verbosity"],
                )
        finally:
            reaper.stop()
