"""Jobs over the API: the long work the caller asked for (``trees.jobs``).

    GET  jobs                 the caller's jobs, newest first
    GET  jobs/{id}            one job: state, progress (done of total, rate), problems, result
    POST jobs/{id}/cancel     cancel it (a queued job at once, a running one at its next check)
    GET  jobs/{id}/file       the file a done export job wrote, until it expires (410 after)

An import above ``BRANCHPOINT_JOB_THRESHOLD_BYTES`` answers ``202 Accepted`` with the job
(``job_accepted``) and ``Location: /api/v1/jobs/{id}``. A job is visible to its creator,
to whoever manages its project or may import into its dataset, and to staff; others get 404.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import OperationalError
from django.http import FileResponse, Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.files import AnyAccept
from annotation.api.pagination import PagePagination
from annotation.models import Project
from trees.jobs.models import Job
from trees.jobs.services import job_cancel, job_file_available
from trees.models import Dataset

TAG = ["jobs"]


class JobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    kind = serializers.CharField()
    state = serializers.ChoiceField(choices=Job.State.choices)
    dataset = serializers.CharField(source="dataset_name", allow_blank=True)
    project = serializers.CharField(source="project_name", allow_blank=True)
    done = serializers.IntegerField(help_text="How much is done, in `unit`s.")
    total = serializers.IntegerField(help_text="How much there is in all (0: not known yet).")
    unit = serializers.CharField()
    rate = serializers.FloatField(allow_null=True, help_text="`unit`s per second since the run started.")
    attempts = serializers.IntegerField()
    cancel_requested = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True, help_text="The summary, or why it failed.")
    problems = serializers.ListField(
        child=serializers.DictField(),
        help_text="As the synchronous answer's report lists them: line (or row), path, message, text.",
    )
    result = serializers.DictField(allow_null=True, help_text="What the synchronous answer would have been.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    file_url = serializers.SerializerMethodField(help_text="The file a done export made, while it is kept.")
    file_expires_at = serializers.DateTimeField(source="result_expires_at", allow_null=True)

    def get_url(self, job: Job) -> str:
        return reverse("api:job", args=[job.pk])

    def get_file_url(self, job: Job) -> str | None:
        return reverse("api:job-file", args=[job.pk]) if job_file_available(job) else None


def job_accepted(job: Job) -> Response:
    """``202 Accepted``: the job, with its URL in ``Location``."""
    body = JobOutputSerializer(job).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


def can_see_job(user: Any, job: Job) -> bool:
    if user.is_staff or (job.created_by_id is not None and job.created_by_id == user.pk):
        return True
    if job.project_name:
        project = Project.objects.filter(name=job.project_name).first()
        if project is not None and permissions.can_manage(user, project):
            return True
    if job.dataset_name:
        dataset = Dataset.objects.filter(name=job.dataset_name).first()
        if dataset is not None and permissions.can_import_trees(user, dataset):
            return True
    return False


def job_visible_get(*, user: Any, job_id: int) -> Job:
    job = Job.objects.filter(pk=job_id).first()
    if job is None or not can_see_job(user, job):
        raise Http404("no such job")
    return job


class JobsApi(APIView):
    pagination_class = PagePagination

    @extend_schema(tags=TAG, operation_id="jobs_list", responses=JobOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The jobs the caller asked for, newest first."""
        jobs = Job.objects.filter(created_by=request.user).order_by("-created_at", "-id")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(jobs, request, view=self)
        return paginator.get_paginated_response(JobOutputSerializer(page, many=True).data)


class JobDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="jobs_retrieve", responses=JobOutputSerializer)
    def get(self, request: Request, job_id: int) -> Response:
        """One job: poll it until its state is done, failed or cancelled."""
        return Response(JobOutputSerializer(job_visible_get(user=request.user, job_id=job_id)).data)


class JobCancelApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="jobs_cancel",
        request=None,
        responses={
            200: OpenApiResponse(JobOutputSerializer, description="The job, cancelled or to be."),
            409: OpenApiResponse(description="`job_busy`: on SQLite, a running job holds the database."),
        },
    )
    def post(self, request: Request, job_id: int) -> Response:
        """Cancel the job: a queued one is cancelled now; a running one stops at its next check
        and keeps nothing (`cancel_requested` is true until then). A finished job is unchanged."""
        job = job_visible_get(user=request.user, job_id=job_id)
        try:
            job = job_cancel(job)
        except OperationalError:
            # SQLite: the running job holds the database's one write lock until it ends.
            return Response(
                {
                    "code": "job_busy",
                    "message": f"job {job.pk} holds the database while it runs (SQLite): "
                    "it cannot be cancelled until it ends",
                },
                status=status.HTTP_409_CONFLICT,
            )
        return Response(JobOutputSerializer(job).data)


class JobFileApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        tags=TAG,
        operation_id="jobs_file",
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The file, in its format's media type, as an attachment."
            ),
            410: OpenApiResponse(
                description="The file expired (`BRANCHPOINT_JOB_FILE_DAYS`) or was never made."
            ),
        },
    )
    def get(self, request: Request, job_id: int) -> FileResponse | Response:
        """The file a done export job wrote, until it expires."""
        job = job_visible_get(user=request.user, job_id=job_id)
        if not job_file_available(job) or not Path(job.result_file).is_file():
            return Response(
                {
                    "code": "gone",
                    "message": f"job {job.pk} has no file to download (it expired, or the job made none)",
                },
                status=status.HTTP_410_GONE,
            )
        result = job.result or {}
        return FileResponse(
            open(job.result_file, "rb"),
            as_attachment=True,
            filename=result.get("file_name", Path(job.result_file).name),
            content_type=result.get("media_type", "application/octet-stream"),
        )
