"""Datasets over the API: list, create, read, import trees into one, export it.

    GET  datasets                    the datasets the caller may read, with their sizes
    POST datasets                    a new, empty dataset (admins; staff with trees.add_dataset)
    GET  datasets/{name}             one dataset
    POST datasets/{name}/import      trees from a file or a JSON list of items (``import_trees``): admins,
                                     staff with trees.add_conversationtree, and whoever manages
                                     every project over the dataset (403 for anyone else)
    GET  datasets/{name}/export      the trees in any format, streamed (``export_trees``); deleted
                                     messages' text as permissions.DeletedText lets the caller see it

Who may do what is ``annotation.permissions``' to say (datasets section);
datasets the caller may not read answer 404, so their names do not leak.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.files import DOWNLOAD_RESPONSES, AnyAccept, import_answer, upload_source
from annotation.api.jobs import JobOutputSerializer, job_accepted
from annotation.api.pagination import PagePagination
from annotation.api.parsers import JSONParser, MultiPartParser
from trees import vocabulary
from trees.downloads import file_download
from trees.formats import FORMATS, get_format
from trees.formats.records import JSON
from trees.jobs.services import job_enqueue
from trees.models import Dataset
from trees.selectors import datasets_with_counts
from trees.services import dataset_create, tree_import, trees_export
from trees.tasks import TREES_IMPORT, trees_import_job

TAG = ["datasets"]
FORMAT_NAMES = sorted(FORMATS)
CSV_COLUMNS = ("dialog_column", "index_column", "speaker_column", "text_column")


class DatasetOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    tree_count = serializers.IntegerField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


def dataset_visible_get(*, user: Any, name: str) -> Dataset:
    """The dataset called ``name`` with its counts if ``user`` may read it; else Http404."""
    dataset = datasets_with_counts(permissions.visible_datasets(user).filter(name=name)).first()
    if dataset is None:
        raise Http404("no such dataset")
    return dataset


class DatasetsApi(APIView):
    pagination_class = PagePagination

    class DatasetCreateInput(serializers.Serializer):
        name = serializers.CharField(max_length=100, help_text="Letters, digits, - and _ (used in URLs).")
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)

        def validate_name(self, name: str) -> str:
            try:
                Dataset._meta.get_field("name").run_validators(name)
            except DjangoValidationError as error:
                raise serializers.ValidationError(error.messages) from None
            if Dataset.objects.filter(name=name).exists():
                raise serializers.ValidationError(f'a dataset named "{name}" already exists', code="unique")
            return name

    @extend_schema(tags=TAG, operation_id="datasets_list", responses=DatasetOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The datasets the caller may read (admins: all; managers and reviewers: their projects')."""
        datasets = datasets_with_counts(permissions.visible_datasets(request.user)).order_by("name")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(datasets, request, view=self)
        return paginator.get_paginated_response(DatasetOutputSerializer(page, many=True).data)

    @extend_schema(
        tags=TAG,
        operation_id="datasets_create",
        request=DatasetCreateInput,
        responses={201: DatasetOutputSerializer},
    )
    def post(self, request: Request) -> Response:
        """A new, empty dataset (admins, and staff with the permission to add datasets)."""
        if not permissions.can_create_dataset(request.user):
            raise PermissionDenied("you may not create datasets")
        serializer = self.DatasetCreateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        dataset_create(**serializer.validated_data)
        dataset = datasets_with_counts().get(name=serializer.validated_data["name"])
        return Response(DatasetOutputSerializer(dataset).data, status=status.HTTP_201_CREATED)


class DatasetDetailApi(APIView):
    @extend_schema(tags=TAG, operation_id="datasets_retrieve", responses=DatasetOutputSerializer)
    def get(self, request: Request, name: str) -> Response:
        """One dataset with its tree and message counts."""
        return Response(DatasetOutputSerializer(dataset_visible_get(user=request.user, name=name)).data)


# Import


class TreeImportOptions(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMAT_NAMES)
    skip_invalid = serializers.BooleanField(
        default=False, help_text="Import the good items and list the bad ones (otherwise all or nothing)."
    )
    replace = serializers.BooleanField(
        default=False, help_text="Replace trees whose id the dataset has (otherwise refused)."
    )
    id_key = serializers.CharField(default="id", max_length=100, help_text="potato: the item id's key.")
    tree_key = serializers.CharField(default="tree", max_length=100, help_text="potato: the tree's key.")
    dialog_column = serializers.CharField(default="dialog_id", max_length=100)
    index_column = serializers.CharField(default="utterance_index", max_length=100)
    speaker_column = serializers.CharField(default="speaker", max_length=100)
    text_column = serializers.CharField(default="text", max_length=100)
    speaker = serializers.ListField(
        child=serializers.CharField(max_length=200),
        default=list,
        max_length=100,
        help_text="csv: VALUE=ROLE entries added to the speaker table, e.g. narrator=system.",
    )

    def validate_speaker(self, entries: list[str]) -> dict[str, str]:
        table, errors = {}, {}
        for index, entry in enumerate(entries):
            value, equals, role = entry.rpartition("=")
            canonical = vocabulary.normalize_role(role) if equals else None
            if not value or canonical is None:
                errors[index] = [f'"{entry}": give VALUE=ROLE with a role of {vocabulary.describe_roles()}']
            else:
                table[value] = canonical
        if errors:
            raise serializers.ValidationError(errors)
        return table

    def reader_options(self) -> dict[str, Any]:
        data = self.validated_data
        if data["format"] == "potato":
            return {"id_key": data["id_key"], "tree_key": data["tree_key"]}
        if data["format"] == "csv":
            return {key: data[key] for key in CSV_COLUMNS} | {"speakers": data["speaker"]}
        return {}


class TreeImportFileInput(TreeImportOptions):
    file = serializers.FileField(help_text="JSON, a JSON array, JSONL or CSV; gzip is read as such.")


class TreeImportItemsInput(TreeImportOptions):
    items = serializers.ListField(
        child=serializers.JSONField(),
        help_text="The items, each as one line of the format's JSONL would hold it (not for csv).",
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["format"] == "csv":
            raise serializers.ValidationError(
                {"items": ["csv comes as a file (multipart), not as JSON items"]}
            )
        return data


class ImportIssueSerializer(serializers.Serializer):
    line = serializers.IntegerField(allow_null=True, required=False, help_text="Absent for CSV files.")
    row = serializers.IntegerField(allow_null=True, required=False, help_text="CSV files: the row.")
    path = serializers.CharField(allow_blank=True)
    message = serializers.CharField()
    text = serializers.CharField()


class TreeImportReportSerializer(serializers.Serializer):
    """The report ``import_trees --json`` prints."""

    dataset = serializers.CharField()
    format = serializers.CharField()
    committed = serializers.BooleanField()
    items_read = serializers.IntegerField()
    trees_created = serializers.IntegerField()
    trees_replaced = serializers.IntegerField()
    messages = serializers.IntegerField()
    items_skipped = serializers.IntegerField()
    errors = ImportIssueSerializer(many=True)
    errors_not_shown = serializers.IntegerField()
    summary = serializers.CharField()


class DatasetImportApi(APIView):
    accepts_uploads = True
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(
        tags=TAG,
        operation_id="datasets_import",
        request={"multipart/form-data": TreeImportFileInput, "application/json": TreeImportItemsInput},
        responses={
            200: OpenApiResponse(TreeImportReportSerializer, description="Imported: the report."),
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
        """Import trees, all or nothing unless ``skip_invalid``: a multipart ``file`` or a JSON
        list of ``items``; answers the command's report (problems located by line or by item).
        A file larger than the job threshold is imported by a job: 202 with the job."""
        dataset = dataset_visible_get(user=request.user, name=name)
        is_file = request.content_type.startswith("multipart/")
        serializer = (TreeImportFileInput if is_file else TreeImportItemsInput)(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not permissions.can_import_trees(request.user, dataset, replace=data["replace"]):
            raise PermissionDenied(
                "you may not replace trees"
                if data["replace"]
                else "you may not import into this dataset: its new trees would become items of every "
                "project over it, and you do not manage them all"
            )
        upload = data.get("file")
        if upload is not None and upload.size > settings.BRANCHPOINT_JOB_THRESHOLD_BYTES:
            upload.seek(0)
            job = job_enqueue(
                kind=TREES_IMPORT,
                task=trees_import_job,
                created_by=request.user,
                via="api",
                dataset_name=dataset.name,
                params={
                    "format": data["format"],
                    "options": serializer.reader_options(),
                    "skip_invalid": data["skip_invalid"],
                    "replace": data["replace"],
                },
                source=upload.file,
                total=upload.size,
            )
            return job_accepted(job)
        source, from_items = upload_source(data, "items")
        report = tree_import(
            dataset=dataset,
            source=source,
            format_name=data["format"],
            options=serializer.reader_options(),
            skip_invalid=data["skip_invalid"],
            replace=data["replace"],
            author_id=None,
        )
        return import_answer(report, "items", from_items)


# Export


class TreeExportInput(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMAT_NAMES)
    layout = serializers.ChoiceField(
        choices=["jsonl", "array"], default="jsonl", help_text="potato: JSONL or one JSON array."
    )
    id_key = serializers.CharField(default="id", max_length=100)
    tree_key = serializers.CharField(default="tree", max_length=100)
    dialog_column = serializers.CharField(default="dialog_id", max_length=100)
    index_column = serializers.CharField(default="utterance_index", max_length=100)
    speaker_column = serializers.CharField(default="speaker", max_length=100)
    text_column = serializers.CharField(default="text", max_length=100)

    def writer_options(self) -> dict[str, Any]:
        data = self.validated_data
        if data["format"] == "potato":
            return {"id_key": data["id_key"], "tree_key": data["tree_key"], "layout": data["layout"]}
        if data["format"] == "csv":
            return {key: data[key] for key in CSV_COLUMNS}
        return {}


class DatasetExportApi(APIView):
    content_negotiation_class = AnyAccept

    @extend_schema(
        tags=TAG,
        operation_id="datasets_export",
        parameters=[TreeExportInput],
        responses=DOWNLOAD_RESPONSES,
    )
    def get(self, request: Request, name: str) -> StreamingHttpResponse:
        """Every tree of the dataset in ``format``, streamed as ``<dataset>.<format>.<extension>``."""
        dataset = dataset_visible_get(user=request.user, name=name)
        options = TreeExportInput(data=request.query_params)
        options.is_valid(raise_exception=True)
        format_name = options.validated_data["format"]
        kind = get_format(format_name).FILE
        if format_name == "potato" and options.validated_data["layout"] == "array":
            kind = JSON
        shown = permissions.DeletedText(request.user)
        pieces = trees_export(
            dataset=dataset,
            format_name=format_name,
            options=options.writer_options(),
            shown=lambda record: shown.record(dataset, record),
        )
        return file_download(pieces, kind=kind, filename=f"{dataset.name}.{format_name}.{kind.extension}")
