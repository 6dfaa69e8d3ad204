"""Gold items over the API: list them, mark one gold with its expected answers, unmark it,
import a file of them.

    GET    projects/{name}/gold             the gold items and their expected answers (reviewers, managers)
    PUT    projects/{name}/gold/{tree_id}   mark the item gold with these expected answers (managers)
    DELETE projects/{name}/gold/{tree_id}   the item is regular work again; its answers are kept (managers)
    POST   projects/{name}/gold/import      records as ``import_gold`` reads them (managers), all or nothing

The same services as the admin and ``import_gold`` (``annotation.quality``): answers are
checked by the project's schemes and refused with their paths.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.files import import_answer, upload_source
from annotation.api.pagination import PagePagination
from annotation.models import Project, ProjectItem
from annotation.problems import Problem, ProblemsError, join
from annotation.projects.selectors import project_visible_get
from annotation.quality.gold import gold_item_set, gold_items_mark
from annotation.quality.gold_imports import gold_import

TAG = ["quality"]


def project_for(request: Request, name: str, *, manage: bool) -> Project:
    """The project when the caller may read its gold items (reviewers, managers) or, with
    ``manage``, change them (managers); 404 when they may not see it."""
    project = project_visible_get(user=request.user, name=name)
    if manage and not permissions.can_manage(request.user, project):
        raise PermissionDenied("only the project's managers may change its gold items")
    if not permissions.can_review(request.user, project):
        raise PermissionDenied("gold items are for the project's reviewers and managers")
    return project


class GoldItemSerializer(serializers.Serializer):
    tree_id = serializers.IntegerField()
    external_id = serializers.CharField(source="tree.external_id")
    is_gold = serializers.BooleanField()
    answers = serializers.DictField(source="gold_answers", help_text="Expected answers, by scheme name.")
    explanation = serializers.CharField(source="gold_explanation", allow_blank=True)


class GoldItemsApi(APIView):
    pagination_class = PagePagination

    @extend_schema(tags=TAG, operation_id="gold_list", responses=GoldItemSerializer(many=True))
    def get(self, request: Request, name: str) -> Response:
        """The project's gold items, in item order, with their expected answers."""
        project = project_for(request, name, manage=False)
        items = (
            ProjectItem.objects.filter(project=project, is_gold=True)
            .select_related("tree")
            .order_by("tree_id")
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(items, request, view=self)
        return paginator.get_paginated_response(GoldItemSerializer(page, many=True).data)


class GoldItemInput(serializers.Serializer):
    answers = serializers.DictField(help_text="Expected answers by scheme name, as an annotator writes them.")
    explanation = serializers.CharField(
        max_length=100_000,
        required=False,
        allow_blank=True,
        default="",
        help_text="Shown to annotators after they answer it in training.",
    )


def _item(project: Project, tree_id: int) -> ProjectItem:
    item = (
        ProjectItem.objects.filter(project=project, tree_id=tree_id).select_related("project", "tree").first()
    )
    if item is None:
        raise Http404("no such item in this project")
    return item


class GoldItemApi(APIView):
    @extend_schema(tags=TAG, operation_id="gold_set", request=GoldItemInput, responses=GoldItemSerializer)
    def put(self, request: Request, name: str, tree_id: int) -> Response:
        """Make the item gold with these expected answers (checked by the schemes; problems are
        located under ``answers``)."""
        project = project_for(request, name, manage=True)
        serializer = GoldItemInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        item = _item(project, tree_id)
        data = serializer.validated_data
        try:
            item = gold_item_set(item=item, answers=data["answers"], explanation=data["explanation"])
        except ProblemsError as error:
            raise ProblemsError([_under_answers(problem) for problem in error.problems]) from None
        return Response(GoldItemSerializer(item).data)

    @extend_schema(tags=TAG, operation_id="gold_unset", request=None, responses={204: None})
    def delete(self, request: Request, name: str, tree_id: int) -> Response:
        """The item is regular work again (its expected answers are kept, to mark it again)."""
        project = project_for(request, name, manage=True)
        item = _item(project, tree_id)
        gold_items_mark(items=ProjectItem.objects.filter(pk=item.pk), is_gold=False)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _under_answers(problem: Problem) -> Problem:
    return Problem(join("answers", problem.path), problem.message, problem.code)


class GoldFileInput(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL or a JSON array of gold records; gzip is read as such.")
    user = serializers.CharField(max_length=150, required=False, help_text="Only this annotator's records.")


class GoldRecordsInput(serializers.Serializer):
    records = serializers.ListField(
        child=serializers.JSONField(), help_text='Gold records: {"id", "annotations", "explanation"}.'
    )
    user = serializers.CharField(max_length=150, required=False, help_text="Only this annotator's records.")


class GoldImportReportSerializer(serializers.Serializer):
    """The report ``import_gold`` gives."""

    project = serializers.CharField()
    committed = serializers.BooleanField()
    records_read = serializers.IntegerField()
    items = serializers.IntegerField()
    skipped = serializers.IntegerField()
    errors = serializers.ListField(child=serializers.DictField())
    errors_not_shown = serializers.IntegerField()
    summary = serializers.CharField()


class GoldImportApi(APIView):
    accepts_uploads = True
    parser_classes = [MultiPartParser, JSONParser]

    @extend_schema(
        tags=TAG,
        operation_id="gold_import",
        request={"multipart/form-data": GoldFileInput, "application/json": GoldRecordsInput},
        responses={
            200: OpenApiResponse(GoldImportReportSerializer, description="Imported: the report."),
            400: OpenApiResponse(
                description="Nothing imported (or a bad request): `code` `import_failed` with every "
                "problem in `errors` and the whole report in `report`."
            ),
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Import gold items as ``import_gold`` does, all or nothing: a multipart ``file`` or a
        JSON list of ``records``; problems are located by line or by record."""
        project = project_for(request, name, manage=True)
        is_file = request.content_type.startswith("multipart/")
        serializer = (GoldFileInput if is_file else GoldRecordsInput)(data=request.data)
        serializer.is_valid(raise_exception=True)
        source, from_items = upload_source(serializer.validated_data, "records")
        report = gold_import(project=project, source=source, user=serializer.validated_data.get("user"))
        return import_answer(report, "records", from_items)
