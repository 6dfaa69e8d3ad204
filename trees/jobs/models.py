"""A job: long work a person asked for, with what they can watch of it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from trees.fields import JSONField


class Job(models.Model):
    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    FINISHED = (State.DONE, State.FAILED, State.CANCELLED)

    kind = models.CharField(
        max_length=50, help_text="What the job does: trees.import, annotations.import, ..."
    )
    task_path = models.CharField(
        max_length=200, help_text="The django-tasks task that runs it (given the job's id)."
    )
    # The channel it was asked through, so the audit log says what the synchronous work would.
    via = models.CharField(max_length=10, blank=True, default="")
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Names, not keys: who else may see the job follows from them (annotation.api.jobs), and a
    # job outlives a dataset deleted under it.
    dataset_name = models.CharField(max_length=100, blank=True, default="")
    project_name = models.CharField(max_length=100, blank=True, default="")
    params = JSONField(default=dict, blank=True, help_text="The task's options (format, replace, ...).")
    source = models.CharField(
        max_length=500, blank=True, default="", help_text="The uploaded file, kept until the job ends."
    )
    done = models.BigIntegerField(default=0)
    total = models.BigIntegerField(default=0)
    unit = models.CharField(max_length=20, blank=True, default="bytes")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    task_id = models.CharField(
        max_length=64, blank=True, default="", help_text="The queue's id of the last run."
    )
    message = models.TextField(blank=True, default="", help_text="The summary, or why it failed.")
    # Each problem as the synchronous answer lists it: {"line"|"row", "path", "message", "text"}.
    problems = JSONField(default=list, blank=True)
    result = JSONField(null=True, blank=True)
    result_file = models.CharField(max_length=500, blank=True, default="")
    result_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "heartbeat_at"], name="job_state_heartbeat")]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.kind}, {self.state})"

    @property
    def finished(self) -> bool:
        return self.state in self.FINISHED

    @property
    def rate(self) -> float | None:
        """Units per second since the run started (None before there is one)."""
        if self.started_at is None or not self.done:
            return None
        end = self.finished_at or self.heartbeat_at or timezone.now()
        seconds = (end - self.started_at).total_seconds()
        return self.done / seconds if seconds > 0 else None
