"""The evaluation API under /api/v1/: rubrics, running the automatic checks, results, reports.

Each view is one permission check and one service or selector call; errors
become JSON in ``annotation/api/errors.py`` (a bad parameter is a 400 that
names it, like every other refused input).

    GET  rubrics                                          the rubrics (name, title, current version)
    GET  rubrics/{rubric}                                 one rubric: every version with its spec
    POST projects/{name}/rubrics/{rubric}/evaluate        run the automatic checks (managers)
    GET  projects/{name}/rubrics/{rubric}/results         stored results, paginated
    GET  projects/{name}/rubrics/{rubric}/report          the report's figures (as report.json)

``results`` and ``report`` take ``version`` (a number), ``source`` (best,
auto, human, combined) and ``report`` also ``group`` (model or metadata.key).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Project
from annotation.problems import Problem, ProblemsError
from annotation.selectors import project_visible_get
from evaluation import permissions
from evaluation.models import EvaluationResult, Rubric
from evaluation.selectors import (
    BEST,
    report_build,
    report_json,
    report_query_read,
    results_best,
    results_query,
    rubric_get,
)
from evaluation.services import NoVersion, judgments_combine, project_evaluate


class RubricsReadable(APIView):
    def check_rubrics_readable(self, request: Request) -> None:
        if not permissions.can_read_rubrics(request.user):
            raise PermissionDenied("rubrics are for staff and for managers and reviewers of a project")


class RubricListApi(RubricsReadable):
    class OutputSerializer(serializers.Serializer):
        name = serializers.CharField()
        title = serializers.CharField()
        version = serializers.IntegerField(allow_null=True)
        updated_at = serializers.DateTimeField()

    def get(self, request: Request) -> Response:
        """Every rubric with its current version number."""
        self.check_rubrics_readable(request)
        rubrics = Rubric.objects.order_by("name").prefetch_related("versions")
        rows = [
            {
                "name": rubric.name,
                "title": rubric.title,
                "version": max((v.number for v in rubric.versions.all()), default=None),
                "updated_at": rubric.updated_at,
            }
            for rubric in rubrics
        ]
        return Response({"results": self.OutputSerializer(rows, many=True).data})


class RubricDetailApi(RubricsReadable):
    class VersionSerializer(serializers.Serializer):
        number = serializers.IntegerField()
        created_at = serializers.DateTimeField()
        spec = serializers.JSONField()
        yaml = serializers.CharField()

    def get(self, request: Request, rubric: str) -> Response:
        """One rubric and all its versions, newest first."""
        self.check_rubrics_readable(request)
        found = rubric_get(name=rubric)
        versions = found.versions.order_by("-number")
        return Response(
            {
                "name": found.name,
                "title": found.title,
                "versions": self.VersionSerializer(versions, many=True).data,
            }
        )


class ProjectRubricApi(APIView):
    def report_project(self, request: Request, name: str) -> Project:
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_view_report(request.user, project):
            raise PermissionDenied("results are for the project's managers and reviewers")
        return project


class EvaluateApi(ProjectRubricApi):
    class OutputSerializer(serializers.Serializer):
        version = serializers.IntegerField(source="version.number")
        items = serializers.IntegerField()
        results = serializers.IntegerField()
        outcomes = serializers.DictField(child=serializers.IntegerField())
        seconds = serializers.FloatField()

    def post(self, request: Request, name: str, rubric: str) -> Response:
        """Run the rubric's automatic checks over every item (idempotent); returns the counts."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_evaluate(request.user, project):
            raise PermissionDenied("only the project's managers may run evaluations")
        found = rubric_get(name=rubric)
        try:
            summary = project_evaluate(project=project, rubric=found)
        except NoVersion as error:
            raise ProblemsError([Problem("rubric", str(error))]) from None
        summary.outcomes = dict(summary.outcomes)
        return Response(self.OutputSerializer(summary).data)


class ResultsPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ResultsApi(ProjectRubricApi):
    class OutputSerializer(serializers.ModelSerializer):
        id = serializers.CharField(source="tree.external_id")
        version = serializers.IntegerField(source="rubric_version.number")

        class Meta:
            model = EvaluationResult
            fields = (
                "id",
                "node",
                "source",
                "version",
                "score",
                "outcome",
                "details",
                "explanation",
                "votes",
                "model_name",
                "computed_at",
            )

    def get(self, request: Request, name: str, rubric: str) -> Response:
        """The stored results, one per item (and node or path), in item order; ``outcome`` filters."""
        project = self.report_project(request, name)
        found = rubric_get(name=rubric)
        judgments_combine(project=project, rubric=found)
        query = report_query_read(project=project, rubric=found, params=request.query_params)
        results = results_query(project=project, query=query, outcome=request.query_params.get("outcome"))
        results = results.select_related("rubric_version")
        if query.source == BEST:
            # Best of a unit needs its neighbours: paginate the chosen rows.
            rows: Any = list(results_best(results.iterator(chunk_size=2000)))
        else:
            rows = results
        paginator = ResultsPagination()
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class ReportApi(ProjectRubricApi):
    def get(self, request: Request, name: str, rubric: str) -> Response:
        """The report's figures: outcomes, mean score with its 95% interval, pass rates, histogram, groups."""
        project = self.report_project(request, name)
        found = rubric_get(name=rubric)
        judgments_combine(project=project, rubric=found)
        query = report_query_read(project=project, rubric=found, params=request.query_params)
        report = report_build(project=project, query=query)
        return Response(report_json(project=project, rubric=found, query=query, report=report))
