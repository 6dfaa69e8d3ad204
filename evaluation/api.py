"""The evaluation API under /api/v1/: rubrics, running the automatic checks, results, reports.

Each view is one permission check and one service or selector call; errors
become JSON in ``annotation/api/errors.py`` (a bad parameter is a 400 that
names it, like every other refused input).

    GET  rubrics                                          the rubrics (name, title, current version)
    POST rubrics                                          a rubric, or its new version, from YAML
                                                          (staff who may change rubrics); with
                                                          ``dry_run``: checked, nothing saved
    GET  rubrics/{rubric}                                 one rubric: every version with its spec
    POST projects/{name}/rubrics/{rubric}/evaluate        run the automatic checks (managers)
    POST projects/{name}/rubrics/{rubric}/evaluate-jobs   the same, in a job (202 Accepted)
    GET  projects/{name}/rubrics/{rubric}/results         stored results, paginated
    GET  projects/{name}/rubrics/{rubric}/report          the report's figures (as report.json)
    GET  projects/{name}/agreement                        agreement per scheme, field and annotator pair,
                                                          and model judges against the people
    POST projects/{name}/agreement-jobs                   recompute it, in a job (202 Accepted)

``results`` and ``report`` take ``version`` (a number), ``source`` (best,
auto, human, combined) and ``report`` also ``group`` (model or metadata.key).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.jobs import JobOutputSerializer, job_accepted
from annotation.api.parsers import query_text
from annotation.models import Project
from annotation.problems import Problem, ProblemsError, join
from annotation.projects.selectors import project_visible_get
from evaluation import permissions
from evaluation.agreement.project import agreement_current
from evaluation.judge_api import FieldJudgesSerializer
from evaluation.models import EvaluationResult, Rubric
from evaluation.selectors import (
    BEST,
    SOURCES,
    report_build,
    report_json,
    report_query_read,
    results_best,
    results_query,
    rubric_get,
)
from evaluation.services import (
    NoVersion,
    judgments_combine,
    project_evaluate,
    rubric_parse_storable,
    rubric_save,
)
from evaluation.tasks import AGREEMENT_REFRESH, RUBRIC_EVALUATE, agreement_refresh_job, rubric_evaluate_job
from trees.jobs.services import job_enqueue

TAG = ["evaluation"]
VERSION = OpenApiParameter(
    "version", int, required=False, description="A rubric version (default: newest run)."
)
SOURCE = OpenApiParameter("source", str, enum=list(SOURCES), required=False, description="Default: best.")


class RubricsReadable(APIView):
    def check_rubrics_readable(self, request: Request) -> None:
        if not permissions.can_read_rubrics(request.user):
            raise PermissionDenied("rubrics are for staff and for managers and reviewers of a project")


class RubricSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField(allow_null=True)
    updated_at = serializers.DateTimeField()


class RubricListSerializer(serializers.Serializer):
    results = RubricSummarySerializer(many=True)


class RubricVersionSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    spec = serializers.JSONField()
    yaml = serializers.CharField()


class RubricSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    versions = RubricVersionSerializer(many=True, help_text="Newest first.")


class RubricListApi(RubricsReadable):
    OutputSerializer = RubricSummarySerializer

    @extend_schema(tags=TAG, operation_id="rubrics_list", responses=RubricListSerializer)
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


class RubricWriteInput(serializers.Serializer):
    yaml = serializers.CharField(max_length=1_000_000, help_text="The rubric, as `create_rubric` reads it.")
    dry_run = serializers.BooleanField(
        default=False, help_text="Only check it: the answer says what would be saved; nothing is."
    )


class RubricSavedSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField(
        allow_null=True, help_text="The version saved (or kept, when unchanged); null for a dry run."
    )
    created = serializers.BooleanField(help_text="A new rubric (for a dry run: it would be).")
    changed = serializers.BooleanField(help_text="A new version (for a dry run: it would be).")
    spec = serializers.JSONField(help_text="The rubric as validated and normalised.")
    warnings = serializers.ListField(child=serializers.CharField())


class RubricCreateApi(RubricListApi):
    @extend_schema(
        tags=TAG,
        operation_id="rubrics_create",
        request=RubricWriteInput,
        responses={
            201: OpenApiResponse(RubricSavedSerializer, description="A new rubric, at version 1."),
            200: OpenApiResponse(
                RubricSavedSerializer, description="A new version, the YAML unchanged, or a dry run."
            ),
        },
    )
    def post(self, request: Request) -> Response:
        """Save the rubric the YAML names, as the admin and ``create_rubric`` do: a new rubric,
        or a new version when its YAML changed. Problems are located under ``yaml``
        (``yaml.criteria[0].weight``). ``dry_run``: checked the same way, nothing saved."""
        serializer = RubricWriteInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        text, dry_run = serializer.validated_data["yaml"], serializer.validated_data["dry_run"]
        if dry_run:
            self.check_rubrics_readable(request)
        elif not any(permissions.can_save_rubric(request.user, creating=c) for c in (True, False)):
            raise PermissionDenied("saving rubrics is for staff who may add and change them")
        try:
            spec = rubric_parse_storable(text)
            existing = Rubric.objects.filter(name=spec.name).first()
            if not permissions.can_save_rubric(request.user, creating=existing is None) and not dry_run:
                raise PermissionDenied("saving rubrics is for staff who may add and change them")
            if dry_run:
                latest = existing.versions.order_by("-number").first() if existing else None
                saved = {
                    "version": None,
                    "created": existing is None,
                    "changed": not latest or latest.yaml != text,
                }
                return Response(_saved(spec, **saved))
            result = rubric_save(yaml_text=text, user=request.user)
        except ProblemsError as error:
            raise ProblemsError([_under_yaml(problem) for problem in error.problems]) from None
        body = _saved(spec, version=result.version.number, created=result.created, changed=result.changed)
        return Response(body, status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


def _saved(spec: Any, **outcome: Any) -> dict[str, Any]:
    return RubricSavedSerializer(
        {"name": spec.name, "title": spec.title, "spec": spec.as_json(), "warnings": list(spec.warnings)}
        | outcome
    ).data


def _under_yaml(problem: Problem) -> Problem:
    """A problem of the YAML as one of the ``yaml`` field (a syntax error's place is in its message)."""
    if problem.code == "yaml":
        return Problem("yaml", str(problem), problem.code)
    return Problem(join("yaml", problem.path), problem.message, problem.code)


class RubricDetailApi(RubricsReadable):
    VersionSerializer = RubricVersionSerializer

    @extend_schema(tags=TAG, operation_id="rubrics_retrieve", responses=RubricSerializer)
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
    @extend_schema_serializer(component_name="EvaluationSummary")
    class OutputSerializer(serializers.Serializer):
        version = serializers.IntegerField(source="version.number")
        items = serializers.IntegerField()
        results = serializers.IntegerField()
        outcomes = serializers.DictField(child=serializers.IntegerField())
        seconds = serializers.FloatField()

    @extend_schema(tags=TAG, operation_id="rubrics_evaluate", request=None, responses=OutputSerializer)
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


class EvaluateJobApi(ProjectRubricApi):
    @extend_schema(
        tags=TAG,
        operation_id="rubrics_evaluate_jobs_create",
        request=None,
        responses={
            202: OpenApiResponse(JobOutputSerializer, description="The evaluation's job (`Location`).")
        },
    )
    def post(self, request: Request, name: str, rubric: str) -> Response:
        """Run the rubric's automatic checks over every item in a job (managers): its progress
        counts items, its result is what ``evaluate`` answers."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_evaluate(request.user, project):
            raise PermissionDenied("only the project's managers may run evaluations")
        found = rubric_get(name=rubric)
        job = job_enqueue(
            kind=RUBRIC_EVALUATE,
            task=rubric_evaluate_job,
            created_by=request.user,
            via="api",
            project_name=project.name,
            params={"rubric": found.name},
            unit="items",
        )
        return job_accepted(job)


class ResultsPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ResultsApi(ProjectRubricApi):
    # For the schema: the view pages its rows itself, with this paginator.
    pagination_class = ResultsPagination

    @extend_schema_serializer(component_name="EvaluationResult")
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

    @extend_schema(
        tags=TAG,
        operation_id="rubrics_results",
        parameters=[VERSION, SOURCE, OpenApiParameter("outcome", str, required=False)],
        responses=OutputSerializer(many=True),
    )
    def get(self, request: Request, name: str, rubric: str) -> Response:
        """The stored results, one per item (and node or path), in item order; ``outcome`` filters."""
        project = self.report_project(request, name)
        found = rubric_get(name=rubric)
        judgments_combine(project=project, rubric=found)
        query = report_query_read(project=project, rubric=found, params=request.query_params)
        results = results_query(project=project, query=query, outcome=query_text(request, "outcome"))
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
    @extend_schema(
        tags=TAG,
        operation_id="rubrics_report",
        parameters=[
            VERSION,
            SOURCE,
            OpenApiParameter("group", str, required=False, description="model, or metadata.KEY"),
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, name: str, rubric: str) -> Response:
        """The report's figures: outcomes, mean score with its 95% interval, pass rates, histogram, groups."""
        project = self.report_project(request, name)
        found = rubric_get(name=rubric)
        judgments_combine(project=project, rubric=found)
        query = report_query_read(project=project, rubric=found, params=request.query_params)
        report = report_build(project=project, query=query)
        return Response(report_json(project=project, rubric=found, query=query, report=report))


class AgreementMeasureSerializer(serializers.Serializer):
    measure = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="Null when undefined: see undefined_reason.")
    undefined_reason = serializers.CharField(allow_null=True)
    shown = serializers.CharField(help_text='The value to 3 decimals, or "undefined (reason)".')
    n_units = serializers.IntegerField()
    n_coders = serializers.IntegerField(help_text="Annotators whose answers entered the measure.")
    n_values = serializers.IntegerField()
    n_dropped = serializers.IntegerField(help_text="Units left out (answered by fewer than two, say).")
    parts = serializers.DictField(child=serializers.FloatField(), help_text="Intermediate figures.")


class AgreementPairSerializer(serializers.Serializer):
    a = serializers.CharField(help_text="An annotator's username (a sorts before b).")
    b = serializers.CharField()
    measure = serializers.CharField(help_text="Cohen's kappa (weighted for ordinal fields), or span F1.")
    value = serializers.FloatField(allow_null=True)
    undefined_reason = serializers.CharField(allow_null=True)
    shown = serializers.CharField()
    n_units = serializers.IntegerField(help_text="Units both answered.")


class AgreementFieldSerializer(serializers.Serializer):
    field = serializers.CharField(
        help_text='What was answered: "rating", "node rating", "criterion KEY", ...'
    )
    unit = serializers.CharField(help_text='One unit of the field: "item", "item and node", ...')
    values = serializers.ChoiceField(choices=["nominal", "ordinal", "interval", "set", "spans", "rankings"])
    n_items = serializers.IntegerField()
    n_units = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    measures = AgreementMeasureSerializer(many=True)
    pairs = AgreementPairSerializer(many=True, help_text="Annotators who answered a unit in common.")
    judges = FieldJudgesSerializer(
        allow_null=True,
        help_text="Model judges against the people (who are the only annotators above); null when no "
        "judge answered the field.",
    )


class AgreementAnnotatorSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="An annotator's username.")
    reference = serializers.CharField(help_text="The account holding the reference answers (ccpe-gold).")
    measure = serializers.CharField(help_text="Span F1 (exact or overlap), or Cohen's kappa.")
    value = serializers.FloatField(allow_null=True)
    undefined_reason = serializers.CharField(allow_null=True)
    shown = serializers.CharField()
    n_units = serializers.IntegerField(help_text="Units both the annotator and the reference answered.")


class AgreementReferenceFieldSerializer(serializers.Serializer):
    field = serializers.CharField()
    unit = serializers.CharField()
    values = serializers.ChoiceField(choices=["nominal", "ordinal", "spans"])
    n_items = serializers.IntegerField(help_text="Items the reference and some annotator answered.")
    n_units = serializers.IntegerField()
    n_annotators = serializers.IntegerField()
    measures = AgreementMeasureSerializer(many=True, help_text="Overall: the mean over annotators.")
    annotators = AgreementAnnotatorSerializer(many=True, help_text="Each annotator against the reference.")


class AgreementReferenceSerializer(serializers.Serializer):
    references = serializers.ListField(child=serializers.CharField())
    annotations = serializers.IntegerField(help_text="Reference answers read.")
    note = serializers.CharField(allow_blank=True, help_text="Why no field is compared, if so.")
    fields = AgreementReferenceFieldSerializer(many=True)


class AgreementSchemeSerializer(serializers.Serializer):
    scheme = serializers.CharField()
    type = serializers.CharField(help_text="The annotation type, or collection workflow.")
    annotations = serializers.IntegerField(help_text="Submitted answers counted (reference answers are not).")
    judge_annotations = serializers.IntegerField(help_text="Model judges' answers, measured apart.")
    note = serializers.CharField(allow_blank=True, help_text="Why the scheme has no fields, if so.")
    fields = AgreementFieldSerializer(many=True)
    reference = AgreementReferenceSerializer(
        allow_null=True,
        help_text="Each annotator against a corpus's reference answers, apart from the agreement between "
        "annotators; null when the scheme has none.",
    )


class AgreementSerializer(serializers.Serializer):
    project = serializers.CharField()
    computed_at = serializers.DateTimeField()
    seconds = serializers.FloatField(
        help_text="How long computing took (the figures are kept until answers change)."
    )
    annotations = serializers.IntegerField()
    annotators = serializers.ListField(child=serializers.CharField())
    references = serializers.ListField(
        child=serializers.CharField(),
        help_text="Accounts holding a corpus's reference answers: not annotators.",
    )
    judges = serializers.ListField(
        child=serializers.CharField(),
        help_text="Model judges' accounts (judge:NAME, source model): not annotators, measured against them.",
    )
    schemes = AgreementSchemeSerializer(many=True)


class AgreementJobApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="projects_agreement_jobs_create",
        request=None,
        responses={
            202: OpenApiResponse(JobOutputSerializer, description="The recompute's job (`Location`).")
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Recompute and keep the project's agreement figures in a job (managers); its result is
        what ``GET agreement`` answers afterwards."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_evaluate(request.user, project):
            raise PermissionDenied("only the project's managers may recompute agreement")
        job = job_enqueue(
            kind=AGREEMENT_REFRESH,
            task=agreement_refresh_job,
            created_by=request.user,
            via="api",
            project_name=project.name,
            unit="",
        )
        return job_accepted(job)


class AgreementApi(APIView):
    OutputSerializer = AgreementSerializer

    @extend_schema(tags=TAG, operation_id="projects_agreement", responses=AgreementSerializer)
    def get(self, request: Request, name: str) -> Response:
        """Agreement between annotators per scheme and field, with Cohen's kappa for each pair of annotators.

        Submitted answers count, imported ones included; gold and training work does not. A corpus's
        reference answers are not an annotator: each annotator is measured against them under the
        scheme's ``reference``. Model judges (``judge:NAME`` accounts, source ``model``) are not
        annotators either: each field's ``judges`` measures them against the people. The figures are
        computed once and kept until an answer is submitted, imported or changed.
        """
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_view_report(request.user, project):
            raise PermissionDenied("agreement is for the project's managers and reviewers")
        return Response(self.OutputSerializer(agreement_current(project).figures).data)
