"""The jobs page of the admin: each job's state and a live progress bar, its rate, problems
and result, and Cancel (per row, and as an action on the selected jobs).

The bars move by themselves: ``static/jobs/job_progress.js`` polls ``GET /api/v1/jobs/{id}``
for the jobs not finished yet.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import OperationalError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from trees.jobs.models import Job
from trees.jobs.services import job_cancel, job_file_available

SHOWN_PROBLEMS = 5


def rate_text(job: Job) -> str:
    rate = job.rate
    if rate is None:
        return ""
    if job.unit == "bytes":
        return f"{rate / 1024 / 1024:,.1f} MB/s"
    return f"{rate:,.0f} {job.unit}/s"


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    # The progress and its Cancel first: on a phone the table scrolls sideways.
    list_display = ("id", "progress", "cancel", "target", "kind", "outcome", "created_by", "created_at")
    list_display_links = ("id",)
    list_filter = ("state", "kind")
    search_fields = ("dataset_name", "project_name", "created_by__username")
    list_select_related = ("created_by",)
    actions = ["cancel_selected"]
    # A job's page: what it came to first, then what it was asked and how it ran.
    fields = (
        "kind",
        "progress",
        "message",
        "problems_listed",
        "result",
        "result_file",
        "result_expires_at",
        "dataset_name",
        "project_name",
        "created_by",
        "via",
        "params",
        "attempts",
        "cancel_requested",
        "created_at",
        "started_at",
        "heartbeat_at",
        "finished_at",
        "task_path",
        "task_id",
        "source",
    )
    readonly_fields = fields

    class Media:
        js = [forms.Script("jobs/job_progress.js", type="module")]
        css = {"all": ["jobs/jobs.css"]}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="for")
    def target(self, job: Job) -> str:
        return job.project_name or job.dataset_name or "-"

    @admin.display(description="state and progress")
    def progress(self, job: Job) -> str:
        return format_html(
            '<span class="job-progress" data-job-url="{}" data-state="{}">'
            '<progress max="{}" value="{}" aria-label="job {} progress">{}</progress> '
            '<span class="job-state">{}</span> <span class="job-rate">{}</span></span>',
            reverse("api:job", args=[job.pk]),
            job.state,
            job.total or 1,
            job.done if job.total else (1 if job.finished else 0),
            job.pk,
            f"{job.done:,} of {job.total:,}",
            job.get_state_display(),
            rate_text(job),
        )

    @admin.display(description="result")
    def outcome(self, job: Job) -> str:
        problems = len(job.problems or [])
        more = f" ({problems:,} problem{'s' if problems != 1 else ''})" if problems else ""
        # An export's file, through the API (staff see every job), while it is kept.
        download = (
            format_html(
                ' <a class="job-file" href="{}">download the file</a>', reverse("api:job-file", args=[job.pk])
            )
            if job_file_available(job)
            else ""
        )
        return format_html(
            '<a class="job-message" data-job-id="{}" href="{}">{}</a>{}{}',
            job.pk,
            reverse("admin:jobs_job_change", args=[job.pk]),
            job.message or "details",
            more,
            download,
        )

    @admin.display(description="cancel")
    def cancel(self, job: Job) -> str:
        if job.finished:
            return ""
        # A button of the changelist's own form (which carries the CSRF token), posting elsewhere.
        return format_html(
            '<button type="submit" class="button job-cancel" formaction="{}" '
            'aria-label="Cancel job {}">Cancel</button>',
            reverse("admin:jobs_job_cancel", args=[job.pk]),
            job.pk,
        )

    @admin.display(description="problems")
    def problems_listed(self, job: Job) -> str:
        if not job.problems:
            return "-"
        return format_html(
            '<ol class="job-problems">{}</ol>',
            format_html_join(
                "",
                "<li>{}</li>",
                ((problem.get("text", problem.get("message", "")),) for problem in job.problems),
            ),
        )

    @admin.action(description="Cancel the selected jobs")
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        for job in queryset:
            job_cancel(job)
        messages.success(
            request, f"Asked {queryset.count():,} job(s) to cancel; running ones stop at their next check."
        )

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "<int:job_id>/cancel/", self.admin_site.admin_view(self.cancel_view), name="jobs_job_cancel"
            ),
            *super().get_urls(),
        ]

    def cancel_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        job = get_object_or_404(Job, pk=job_id)
        try:
            job = job_cancel(job)
        except OperationalError:
            # SQLite: the running job holds the database's one write lock until it ends.
            messages.error(
                request, f"Job {job.pk} holds the database while it runs: it cannot be cancelled yet."
            )
        else:
            done = job.get_state_display() if job.finished else "asked to cancel"
            messages.success(request, f"Job {job.pk}: {done}.")
        return HttpResponseRedirect(reverse("admin:jobs_job_changelist"))
