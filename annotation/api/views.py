"""The annotator's loop over the API: next item, read it, save drafts, submit, skip.

Each view is one call to a service or selector between an input and an
output serializer; errors the services raise become JSON in ``errors.py``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.serializers import (
    AnswersInputSerializer,
    ItemOutputSerializer,
    SkipInputSerializer,
    WriteOutputSerializer,
)
from annotation.api.throttling import AnonThrottle, LoopThrottle
from annotation.assignment import item_lease
from annotation.models import ApiToken, Assignment, Project
from annotation.selectors import item_view, project_visible_get
from annotation.submissions import draft_save, item_skip, item_submit
from annotation.training import training_feedback

LOOP = ["annotator loop"]
STALE = OpenApiResponse(
    description="`stale_version` (with `current_version`): the item changed since the version sent — "
    "reload it; or `skipped`, `already_submitted`, `lease_expired`: it moved on — ask for the next."
)


class ProjectApi(APIView):
    """Base of the project-scoped views: the project, or 404 for anyone who may not see it."""

    def project_for_viewing(self, request: Request, name: str) -> Project:
        return project_visible_get(user=request.user, name=name)

    def project_for_annotating(self, request: Request, name: str) -> Project:
        project = self.project_for_viewing(request, name)
        if not permissions.can_annotate(request.user, project):
            raise PermissionDenied("you are not an annotator in this project")
        return project


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class LoopApi(ProjectApi):
    """The annotator's loop, throttled apart from the rest of the API (``API_THROTTLE_LOOP``)."""

    throttle_classes = [LoopThrottle, AnonThrottle]


class ItemNextApi(LoopApi):
    @extend_schema(
        tags=LOOP,
        operation_id="items_next",
        request=None,
        responses={
            200: ItemOutputSerializer,
            404: OpenApiResponse(
                description="`no_items` (`reason`: `quota` or `done`): nothing to hand out; "
                "or `not_found`: no such project."
            ),
        },
    )
    def post(self, request: Request, name: str) -> Response:
        """Lease the next item (or return the one the annotator holds), as GET item shows it."""
        project = self.project_for_annotating(request, name)
        lease = item_lease(project=project, user=request.user)
        item = item_view(
            project=project,
            tree_id=lease.assignment.tree_id,
            user=request.user,
            with_messages=True,
            assignment=lease.assignment,
            answers=lease.answers,
        )
        return Response(ItemOutputSerializer(item).data)


class ItemDetailApi(LoopApi):
    @extend_schema(tags=LOOP, operation_id="items_retrieve", responses=ItemOutputSerializer)
    def get(self, request: Request, name: str, tree_id: int) -> Response:
        """The annotator's own item: the tree and its messages, their assignment, answers and progress."""
        project = self.project_for_viewing(request, name)
        item = item_view(project=project, tree_id=tree_id, user=request.user, with_messages=True)
        return Response(ItemOutputSerializer(item).data)


class ItemDraftApi(LoopApi):
    @extend_schema(
        tags=LOOP,
        operation_id="items_draft",
        request=AnswersInputSerializer,
        responses={200: WriteOutputSerializer, 409: STALE},
    )
    def put(self, request: Request, name: str, tree_id: int) -> Response:
        """Keep the answers as a draft; refused whole if any answer is wrong or the version is old."""
        project = self.project_for_annotating(request, name)
        data = _valid(AnswersInputSerializer, request)
        assignment = draft_save(
            project=project,
            tree=tree_id,
            user=request.user,
            answers=data["annotations"],
            version=data["version"],
            time_spent_ms=data["time_spent_ms"],
        )
        return Response(WriteOutputSerializer(assignment).data)


class SubmitOutputSerializer(WriteOutputSerializer):
    feedback = serializers.JSONField(
        allow_null=True,
        help_text="For a training item: each scheme's expected answer beside the annotator's (`schemes`), "
        "the item's `score` and `explanation`, and their `training` status; null for any other item.",
    )


class ItemSubmitApi(LoopApi):
    @extend_schema(
        tags=LOOP,
        operation_id="items_submit",
        request=AnswersInputSerializer,
        responses={200: SubmitOutputSerializer, 409: STALE},
    )
    def post(self, request: Request, name: str, tree_id: int) -> Response:
        """Submit the answers; required schemes must be answered."""
        project = self.project_for_annotating(request, name)
        data = _valid(AnswersInputSerializer, request)
        assignment = item_submit(
            project=project,
            tree=tree_id,
            user=request.user,
            answers=data["annotations"],
            version=data["version"],
            time_spent_ms=data["time_spent_ms"],
        )
        # Training answers are shown once submitted (annotation.training); gold checks in work never are.
        training = assignment.kind == Assignment.Kind.TRAINING
        feedback = training_feedback(project=project, assignment=assignment) if training else None
        return Response(WriteOutputSerializer(assignment).data | {"feedback": feedback})


class ItemSkipApi(LoopApi):
    @extend_schema(
        tags=LOOP,
        operation_id="items_skip",
        request=SkipInputSerializer,
        responses={200: WriteOutputSerializer, 409: STALE},
    )
    def post(self, request: Request, name: str, tree_id: int) -> Response:
        """Give the item up: it goes back to others and never comes back to this annotator."""
        project = self.project_for_annotating(request, name)
        data = _valid(SkipInputSerializer, request)
        assignment = item_skip(project=project, tree=tree_id, user=request.user, version=data["version"])
        return Response(WriteOutputSerializer(assignment).data)


class MeApi(APIView):
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        is_superuser = serializers.BooleanField()
        token = serializers.CharField(
            allow_null=True, help_text="The token's name, when the request came with one."
        )

    @extend_schema(tags=["tokens"], operation_id="me_retrieve", responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        """Who the caller is: a way for an integration to check its token."""
        token = request.auth if isinstance(request.auth, ApiToken) else None
        return Response(
            {
                "username": request.user.get_username(),
                "is_superuser": request.user.is_superuser,
                "token": token.name if token is not None else None,
            }
        )


@extend_schema(exclude=True)
class EndpointNotFoundApi(APIView):
    """Any other path under the API: a JSON 404 rather than the site's HTML page."""

    permission_classes: list = []

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        raise NotFound("no such endpoint")
