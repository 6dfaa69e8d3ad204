"""The judges' API under /api/v1/: the judges, and a judge's run over a project as a job.

    GET  judges                  the judges (name, kind, endpoint, model; never a key): staff,
                                 and managers of any project
    POST judges/{judge}/runs     run the judge over a project's items in a job (202 Accepted,
                                 the job's URL in ``Location``): the project's managers

Each view is one permission check and one service call; a run the judge cannot do (no
scheme of its kind in the project, a bad template) is a 400 naming why, before anything
is queued.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.jobs import JobOutputSerializer, job_accepted
from annotation.models import Membership
from annotation.permissions import is_admin
from annotation.problems import Problem, ProblemsError
from annotation.projects.selectors import project_visible_get
from evaluation import permissions
from evaluation.llm.judging import JudgeRunRefused
from evaluation.llm.models import Judge
from evaluation.llm.tasks import judge_run_enqueue

TAG = ["judges"]


class JudgeSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Judge.Kind.choices)
    account = serializers.CharField(source="user.username", help_text="Its answers' author: judge:<name>.")
    endpoint = serializers.CharField(source="endpoint.name")
    model = serializers.CharField(source="endpoint.model")
    max_attempts = serializers.IntegerField()
    sampling = serializers.JSONField()
    custom_prompt = serializers.SerializerMethodField(help_text="Whether it has its own prompt template.")

    def get_custom_prompt(self, judge: Judge) -> bool:
        return bool(judge.prompt_template or judge.system_prompt)


class JudgeListSerializer(serializers.Serializer):
    results = JudgeSerializer(many=True)


class JudgeListApi(APIView):
    @extend_schema(tags=TAG, operation_id="judges_list", responses=JudgeListSerializer)
    def get(self, request: Request) -> Response:
        """Every model judge, with its endpoint's name and model (never its key)."""
        user = request.user
        may = user.is_authenticated and (
            user.is_staff
            or is_admin(user)
            or Membership.objects.filter(user=user, role=Membership.Role.MANAGER).exists()
        )
        if not may:
            raise PermissionDenied("the judges are for staff and project managers")
        judges = Judge.objects.select_related("endpoint", "user").order_by("name")
        return Response({"results": JudgeSerializer(judges, many=True).data})


class JudgeRunInput(serializers.Serializer):
    project = serializers.SlugField(help_text="The project whose items the judge answers.")
    scheme = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        help_text="Only this scheme (default: every one it fits).",
    )
    redo = serializers.BooleanField(default=False, help_text="Ask again about items already judged.")
    max_tokens = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Stop once the run has used this many tokens."
    )
    max_cost = serializers.DecimalField(
        required=False,
        allow_null=True,
        max_digits=14,
        decimal_places=6,
        min_value=0,
        help_text="Stop once the run has spent this much, at the endpoint's prices.",
    )


class JudgeRunApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="judges_runs_create",
        request=JudgeRunInput,
        responses={202: OpenApiResponse(JobOutputSerializer, description="The run's job (`Location`).")},
    )
    def post(self, request: Request, judge: str) -> Response:
        """Run the judge over the project's items in a job (the project's managers): items
        judged are skipped unless ``redo``; the job's result counts items, failures, pairs and
        flips, tokens and cost, and its problems name each question that failed."""
        data = JudgeRunInput(data=request.data)
        data.is_valid(raise_exception=True)
        options = data.validated_data
        project = project_visible_get(user=request.user, name=options["project"])
        if not permissions.can_evaluate(request.user, project):
            raise PermissionDenied("only the project's managers may run judges on it")
        found = get_object_or_404(Judge.objects.select_related("endpoint"), name=judge)
        try:
            job = judge_run_enqueue(
                judge=found,
                project=project,
                user=request.user,
                via="api",
                scheme=options["scheme"],
                redo=options["redo"],
                max_tokens=options.get("max_tokens"),
                max_cost=options.get("max_cost"),
            )
        except JudgeRunRefused as error:
            raise ProblemsError([Problem("scheme" if options["scheme"] else "project", str(error))]) from None
        return job_accepted(job)
