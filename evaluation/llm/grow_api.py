"""Growing branches over the API (under /api/v1/):

    POST datasets/{name}/grow     grow the dataset's trees (``trees``: only these)
    POST projects/{name}/grow     grow the project's items' trees

Both answer ``202 Accepted`` with the job (``Location: /api/v1/jobs/{id}``): its progress
counts turns, its result is the run's report, its problems the turns that failed. Growing
a dataset is for whoever may import trees into it; a project's, for its managers.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.datasets import dataset_visible_get
from annotation.api.jobs import JobOutputSerializer, job_accepted
from annotation.problems import Problem, ProblemsError
from annotation.projects.selectors import project_visible_get
from evaluation.llm.grow_requests import MAX_REPLIES, GrowInvalid, GrowRequest, grow_request_parse
from evaluation.llm.grow_tasks import grow_enqueue, grow_trees
from trees.branches import RULES

TAG = ["models"]


class GrowInput(serializers.Serializer):
    """For the schema: the body is read by ``grow_request_parse``, one definition for every door."""

    endpoint = serializers.CharField(help_text="The model endpoint's name.")
    rule = serializers.ChoiceField(
        choices=RULES,
        required=False,
        help_text="unanswered: user turns without an assistant reply; leaves: user turns without "
        "replies; nodes: the turns in `nodes` (the default when `nodes` is given).",
    )
    nodes = serializers.ListField(child=serializers.CharField(), required=False, help_text="Node ids.")
    trees = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Only these tree ids (default: all)."
    )
    n = serializers.IntegerField(min_value=1, max_value=MAX_REPLIES, default=1, help_text="Replies per turn.")
    temperature = serializers.FloatField(required=False, min_value=0, max_value=2)
    top_p = serializers.FloatField(required=False, min_value=0, max_value=1)
    max_tokens = serializers.IntegerField(required=False, min_value=1)
    seed = serializers.IntegerField(required=False, min_value=0, help_text="Reply i is asked with seed + i.")
    system_prompt = serializers.CharField(required=False, allow_blank=True)
    budget_tokens = serializers.IntegerField(
        required=False, min_value=1, help_text="Stop before the next request once this many tokens are used."
    )
    budget_cost = serializers.DecimalField(
        required=False,
        max_digits=14,
        decimal_places=6,
        help_text="The same, in money at the endpoint's prices.",
    )


def _request(data: Any) -> GrowRequest:
    if not isinstance(data, dict):
        raise ProblemsError([Problem("", "the body must be a JSON object")])
    try:
        return grow_request_parse(data)
    except GrowInvalid as invalid:
        raise ProblemsError([Problem(key, why) for key, why in invalid.problems]) from None


def _trees_check(unknown: list[str], where: str) -> None:
    if unknown:
        shown = ", ".join(unknown[:20]) + (f" and {len(unknown) - 20:,} more" if len(unknown) > 20 else "")
        raise ProblemsError([Problem("trees", f"no such trees in {where}: {shown}")])


RESPONSES = {
    202: OpenApiResponse(JobOutputSerializer, description="The run's job (`Location`)."),
    400: OpenApiResponse(description="`invalid`: each bad option with its path and why."),
}


class DatasetGrowApi(APIView):
    @extend_schema(tags=TAG, operation_id="datasets_grow", request=GrowInput, responses=RESPONSES)
    def post(self, request: Request, name: str) -> Response:
        """Grow the dataset's trees with model replies in a job (see docs/models.md)."""
        dataset = dataset_visible_get(user=request.user, name=name)
        if not permissions.can_import_trees(request.user, dataset):
            raise PermissionDenied("only those who may import trees into this dataset may grow it")
        grow = _request(request.data)
        _trees_check(grow_trees(dataset=dataset, tree_ids=grow.trees)[1], dataset.name)
        return job_accepted(grow_enqueue(request=grow, user=request.user, via="api", dataset=dataset))


class ProjectGrowApi(APIView):
    @extend_schema(tags=TAG, operation_id="projects_grow", request=GrowInput, responses=RESPONSES)
    def post(self, request: Request, name: str) -> Response:
        """Grow the project's items' trees with model replies in a job (managers)."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_manage(request.user, project):
            raise PermissionDenied("only the project's managers may grow its trees")
        grow = _request(request.data)
        _trees_check(grow_trees(project=project, tree_ids=grow.trees)[1], project.name)
        return job_accepted(grow_enqueue(request=grow, user=request.user, via="api", project=project))
