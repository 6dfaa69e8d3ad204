"""Annotations over the API: read them, export a project's, import them back.

    GET  annotations              ?project=&tree=&user=&scheme=&status=&source=&updated_since=
    GET  annotations/{id}
    GET  projects/{name}/export   ?format=potato|pairs|sft|ccpe|ccpe-hf&status=&user=&reference=   (streamed)
    POST projects/{name}/export-jobs   the same options as a JSON body: a job writes the file (202)
    POST projects/{name}/import   records as ``export --format potato`` writes them

Annotators read their own answers; managers and reviewers everyone's in their
projects (``permissions.visible_annotations``). Exports hold everyone's
answers, so they are for managers and reviewers; an import writes answers in
others' names, so it is for managers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import F, QuerySet
from django.http import Http404, StreamingHttpResponse
from django_filters.fields import IsoDateTimeField
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.files import DOWNLOAD_RESPONSES, AnyAccept, import_answer, upload_source
from annotation.api.jobs import JobOutputSerializer, job_accepted
from annotation.api.pagination import IdCursorPagination
from annotation.api.parsers import JSONParser, MultiPartParser
from annotation.exports import EXPORTS, REFERENCES, STATUSES, annotations_export, get_export
from annotation.exports.tasks import ANNOTATIONS_EXPORT, annotations_export_job
from annotation.imports.annotations import annotations_import
from annotation.imports.tasks import ANNOTATIONS_IMPORT, annotations_import_job
from annotation.models import Annotation
from annotation.projects.selectors import project_visible_get
from trees.downloads import file_download
from trees.jobs.services import job_enqueue

TAG = ["annotations"]


# Ids are 64-bit columns: a larger number would make the database driver raise, not find nothing.
MAX_ID = 2**63 - 1


class IdFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField


class UtcDateTimeField(IsoDateTimeField):
    """An ISO 8601 time, moved to UTC: ISO allows offsets PostgreSQL refuses (beyond ±15:59)."""

    def to_python(self, value: Any) -> datetime | None:
        parsed = super().to_python(value)
        if parsed is None or parsed.tzinfo is None:
            return parsed
        try:
            return parsed.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError("the time is out of range", code="invalid") from None


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcDateTimeField


class AnnotationFilter(django_filters.FilterSet):
    project = django_filters.CharFilter(field_name="project__name", help_text="A project's name.")
    tree = IdFilter(field_name="tree_id", min_value=1, max_value=MAX_ID, help_text="A tree's id.")
    user = django_filters.CharFilter(field_name="user__username", help_text="An annotator's username.")
    scheme = django_filters.CharFilter(help_text="A scheme's name.")
    status = django_filters.ChoiceFilter(choices=Annotation.Status.choices)
    source = django_filters.ChoiceFilter(choices=Annotation.Source.choices)
    updated_since = UtcDateTimeFilter(
        field_name="updated_at", lookup_expr="gte", help_text="Changed at or after this time (ISO 8601)."
    )

    class Meta:
        model = Annotation
        fields: list[str] = []


class AnnotationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.CharField(source="project_name")
    tree = serializers.IntegerField(source="tree_id", help_text="The tree's id (trees/{id}).")
    item = serializers.CharField(source="item_id", help_text="The tree's item id from its file.")
    user = serializers.CharField(source="username")
    scheme = serializers.CharField()
    status = serializers.ChoiceField(choices=Annotation.Status.values)
    source = serializers.ChoiceField(choices=Annotation.Source.values)
    version = serializers.IntegerField()
    payload = serializers.JSONField(help_text="The answer, as the scheme stores it.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    submitted_at = serializers.DateTimeField(allow_null=True)


def annotations_visible(user: Any) -> QuerySet[Annotation]:
    """What ``user`` may read, with the names an answer is shown with (one query per page)."""
    return permissions.visible_annotations(user).annotate(
        project_name=F("project__name"), username=F("user__username"), item_id=F("tree__external_id")
    )


class AnnotationsApi(generics.GenericAPIView):
    pagination_class = IdCursorPagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = AnnotationFilter
    serializer_class = AnnotationOutputSerializer

    def get_queryset(self) -> QuerySet[Annotation]:
        return annotations_visible(self.request.user)

    @extend_schema(tags=TAG, operation_id="annotations_list", responses=AnnotationOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        """Answers the caller may read, by id, filtered; one page per cursor."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(AnnotationOutputSerializer(page, many=True).data)


class AnnotationDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="annotations_retrieve", responses=AnnotationOutputSerializer)
    def get(self, request: Request, annotation_id: int) -> Response:
        """One answer, if the caller may read it."""
        annotation = annotations_visible(request.user).filter(pk=annotation_id).first()
        if annotation is None:
            raise Http404("no such annotation")
        return Response(AnnotationOutputSerializer(annotation).data)


# Exports and imports of a project's annotations


class ExportInput(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(EXPORTS))
    status = serializers.ChoiceField(
        choices=list(STATUSES),
        default="submitted",
        help_text="; ".join(f"`{name}`: {selection.description}" for name, selection in STATUSES.items())
        + ".",
    )
    user = serializers.CharField(
        required=False, max_length=150, help_text="Only this annotator's answers (a username)."
    )
    reference = serializers.ChoiceField(
        choices=list(REFERENCES),
        default="exclude",
        help_text="A corpus's reference answers: "
        + "; ".join(f"`{name}`: {description}" for name, description in REFERENCES.items())
        + ".",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        # The choices ``annotations_export`` refuses with final answers, refused here as a 400.
        if data.get("status") == "final" and data.get("user") is not None:
            raise serializers.ValidationError(
                {"user": "final answers are nobody's in particular: leave out the annotator"}, code="invalid"
            )
        if data.get("status") == "final" and data.get("reference", "exclude") != "exclude":
            raise serializers.ValidationError(
                {"reference": "final answers are the adjudicated ones: the corpus's reference is not one"},
                code="invalid",
            )
        return data

    def validate_user(self, username: str) -> Any:
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            raise serializers.ValidationError(f'no user named "{username}"', code="not_found")
        return user


class ProjectExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        tags=TAG,
        operation_id="projects_export",
        parameters=[ExportInput],
        responses=DOWNLOAD_RESPONSES,
    )
    def get(self, request: Request, name: str) -> StreamingHttpResponse:
        """The project's answers in ``format``, streamed as ``<project>.<format>.<extension>``
        (managers and reviewers): what ``export_annotations`` writes."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_export(request.user, project):
            raise PermissionDenied("exports are for the project's managers and reviewers")
        options = ExportInput(data=request.query_params)
        options.is_valid(raise_exception=True)
        data = options.validated_data
        format_name, user, reference = data["format"], data.get("user"), data["reference"]
        # One annotator's dialogues (or the reference alone) are the plain corpus format.
        named = user is None and reference != "only"
        writer_options = {"name_annotators": named} if format_name in ("ccpe", "ccpe-hf") else {}
        lines = annotations_export(
            project=project,
            format_name=format_name,
            status=data["status"],
            user=user,
            options=writer_options,
            reader=request.user,
            reference=reference,
            include_gold=reference == "only",  # the corpus's spans cover every item, gold or not
        )
        kind = get_export(format_name).FILE
        return file_download(lines, kind=kind, filename=f"{project.name}.{format_name}.{kind.extension}")


class ProjectExportJobApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="projects_export_jobs_create",
        request=ExportInput,
        responses={202: OpenApiResponse(JobOutputSerializer, description="The export's job (`Location`).")},
    )
    def post(self, request: Request, name: str) -> Response:
        """Export the project's answers to a file, in a job (managers and reviewers): the same
        options and file as ``GET export``; when the job is done its ``file_url`` downloads it."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_export(request.user, project):
            raise PermissionDenied("exports are for the project's managers and reviewers")
        options = ExportInput(data=request.data)
        options.is_valid(raise_exception=True)
        data = options.validated_data
        user = data.get("user")
        job = job_enqueue(
            kind=ANNOTATIONS_EXPORT,
            task=annotations_export_job,
            created_by=request.user,
            via="api",
            project_name=project.name,
            params={
                "format": data["format"],
                "status": data["status"],
                "reference": data["reference"],
                "user_id": user.pk if user is not None else None,
            },
            unit="lines",
        )
        return job_accepted(job)


class RecordsFileInput(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL or a JSON array of potato records; gzip is read as such.")


class RecordsItemsInput(serializers.Serializer):
    records = serializers.ListField(
        child=serializers.JSONField(),
        help_text='Potato records: {"id", "user", "status", "annotations", "updated_at"}.',
    )


class AnnotationImportReportSerializer(serializers.Serializer):
    """The report ``import_annotations`` gives."""

    project = serializers.CharField()
    committed = serializers.BooleanField()
    records_read = serializers.IntegerField()
    records = serializers.IntegerField()
    annotations = serializers.IntegerField()
    replaced = serializers.IntegerField()
    users_created = serializers.ListField(child=serializers.CharField())
    users_added = serializers.ListField(child=serializers.CharField())
    errors = serializers.ListField(child=serializers.DictField())
    errors_not_shown = serializers.IntegerField()
    summary = serializers.CharField()


class ProjectImportApi(APIView):
    accepts_uploads = True
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(
        tags=TAG,
        operation_id="projects_import",
        request={"multipart/form-data": RecordsFileInput, "application/json": RecordsItemsInput},
        responses={
            200: OpenApiResponse(AnnotationImportReportSerializer, description="Imported: the report."),
            202: OpenApiResponse(
                JobOutputSerializer,
                description="A file above the job threshold: a job will import it (`Location`: the job; "
                "its `result` is the report, its `problems` the report's errors).",
            ),
            400: OpenApiResponse(
                description="Nothing imported (or a bad request): `code` `import_failed` with every "
                "problem in `errors` and the whole report in `report`."
            ),
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Import answers as ``import_annotations`` does (managers), all or nothing: a multipart
        ``file`` or a JSON list of ``records``; problems are located by line or by record. A file
        larger than the job threshold is imported by a job: 202 with the job."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_import_annotations(request.user, project):
            raise PermissionDenied("only the project's managers may import answers")
        is_file = request.content_type.startswith("multipart/")
        serializer = (RecordsFileInput if is_file else RecordsItemsInput)(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data.get("file")
        if upload is not None and upload.size > settings.BRANCHPOINT_JOB_THRESHOLD_BYTES:
            upload.seek(0)
            job = job_enqueue(
                kind=ANNOTATIONS_IMPORT,
                task=annotations_import_job,
                created_by=request.user,
                via="api",
                project_name=project.name,
                source=upload.file,
                total=upload.size,
            )
            return job_accepted(job)
        source, from_items = upload_source(serializer.validated_data, "records")
        report = annotations_import(project=project, source=source)
        return import_answer(report, "records", from_items)
