"""The annotator's loop over the API: next item, read it, save drafts, submit, skip.

Each view is one call to a service or selector between an input and an
output serializer; errors the services raise become JSON in ``errors.py``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
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
from annotation.assignment import item_next
from annotation.models import Project
from annotation.selectors import item_tree_get, item_view, project_visible_get
from annotation.submissions import draft_save, item_skip, item_submit


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


class ItemNextApi(ProjectApi):
    def post(self, request: Request, name: str) -> Response:
        """Lease the next item (or return the one the annotator holds), as GET item shows it."""
        project = self.project_for_annotating(request, name)
        assignment = item_next(project=project, user=request.user)
        item = item_view(project=project, tree_id=assignment.tree_id, user=request.user, with_messages=True)
        return Response(ItemOutputSerializer(item).data)


class ItemDetailApi(ProjectApi):
    def get(self, request: Request, name: str, tree_id: int) -> Response:
        """The annotator's own item: the tree and its messages, their assignment, answers and progress."""
        project = self.project_for_viewing(request, name)
        item = item_view(project=project, tree_id=tree_id, user=request.user, with_messages=True)
        return Response(ItemOutputSerializer(item).data)


class ItemDraftApi(ProjectApi):
    def put(self, request: Request, name: str, tree_id: int) -> Response:
        """Keep the answers as a draft; refused whole if any answer is wrong or the version is old."""
        project = self.project_for_annotating(request, name)
        tree = item_tree_get(project=project, tree_id=tree_id)
        data = _valid(AnswersInputSerializer, request)
        assignment = draft_save(
            project=project,
            tree=tree,
            user=request.user,
            answers=data["annotations"],
            version=data["version"],
            time_spent_ms=data["time_spent_ms"],
        )
        return Response(WriteOutputSerializer(assignment).data)


class ItemSubmitApi(ProjectApi):
    def post(self, request: Request, name: str, tree_id: int) -> Response:
        """Submit the answers; required schemes must be answered."""
        project = self.project_for_annotating(request, name)
        tree = item_tree_get(project=project, tree_id=tree_id)
        data = _valid(AnswersInputSerializer, request)
        assignment = item_submit(
            project=project,
            tree=tree,
            user=request.user,
            answers=data["annotations"],
            version=data["version"],
            time_spent_ms=data["time_spent_ms"],
        )
        return Response(WriteOutputSerializer(assignment).data)


class ItemSkipApi(ProjectApi):
    def post(self, request: Request, name: str, tree_id: int) -> Response:
        """Give the item up: it goes back to others and never comes back to this annotator."""
        project = self.project_for_annotating(request, name)
        tree = item_tree_get(project=project, tree_id=tree_id)
        data = _valid(SkipInputSerializer, request)
        assignment = item_skip(project=project, tree=tree, user=request.user, version=data["version"])
        return Response(WriteOutputSerializer(assignment).data)


class EndpointNotFoundApi(APIView):
    """Any other path under the API: a JSON 404 rather than the site's HTML page."""

    permission_classes: list = []

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        raise NotFound("no such endpoint")
