"""The collection loop over the API (under ``/api/v1/projects/<name>/collect/``).

Each view is one call to a service or selector between an input serializer
and an output. The workflow's refusals (``errors.WorkflowError``) become
``{"code", "message"}`` with their status here; every other error takes the
API's own shape (``annotation/api/errors.py``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback

from annotation import permissions
from annotation.api.errors import exception_handler as api_exception_handler
from annotation.models import Project
from annotation.selectors import project_visible_get
from annotation.workflow.availability import TASK_TYPES
from annotation.workflow.errors import WorkflowError
from annotation.workflow.models import Deletion
from annotation.workflow.moderation import (
    deletion_undo,
    message_delete,
    report_create,
    tree_halt,
    tree_resume,
)
from annotation.workflow.selectors import (
    collected_tree_get,
    task_get,
    task_view,
    tree_message_get,
    tree_status,
)
from annotation.workflow.tasks import (
    task_ack,
    task_nack,
    task_next,
    task_submit,
    tasks_available,
    workflow_config,
)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, WorkflowError):
        set_rollback()
        return Response({"code": exc.code, "message": exc.message}, status=exc.status)
    return api_exception_handler(exc, context)


class CollectApi(APIView):
    """Base of the collection views: the project, or 404 for anyone who may not see it."""

    def get_exception_handler(self) -> Any:
        return exception_handler

    def project(self, request: Request, name: str) -> Project:
        project = project_visible_get(user=request.user, name=name)
        workflow_config(project)  # NotCollectProject (404) for a project in annotate mode
        return project

    def project_for_collecting(self, request: Request, name: str) -> Project:
        project = self.project(request, name)
        if not permissions.can_collect(request.user, project):
            raise PermissionDenied("you are not an annotator in this project")
        return project

    def project_for_moderating(self, request: Request, name: str) -> Project:
        project = self.project(request, name)
        if not permissions.can_moderate(request.user, project):
            raise PermissionDenied("you may not moderate this project")
        return project


def _valid(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class NextInputSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=TASK_TYPES, default="random")
    lang = serializers.CharField(max_length=32, required=False, allow_null=True, default=None)
    message_id = serializers.CharField(
        max_length=255,
        required=False,
        allow_null=True,
        default=None,
        help_text="A task on this message only.",
    )
    tree_id = serializers.CharField(max_length=255, required=False, allow_null=True, default=None)


class NackInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    dont_show_again = serializers.BooleanField(default=True)


class ReasonInputSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class AvailableApi(CollectApi):
    def get(self, request: Request, name: str) -> Response:
        """Tasks available to the caller, by type, and ``random``: their sum (Open-Assistant's counts)."""
        project = self.project_for_collecting(request, name)
        return Response(
            tasks_available(project=project, user=request.user, lang=request.query_params.get("lang"))
        )


class TaskNextApi(CollectApi):
    def post(self, request: Request, name: str) -> Response:
        """Hand the caller a new task of ``type`` (``random`` by default), as GET task shows it."""
        project = self.project_for_collecting(request, name)
        data = _valid(NextInputSerializer, request)
        message = None
        if data["message_id"] is not None:
            if data["tree_id"] is None:
                raise serializers.ValidationError({"tree_id": ["is required with message_id"]})
            collected = collected_tree_get(project=project, tree_id=data["tree_id"])
            message = tree_message_get(collected=collected, message_id=data["message_id"])
        task = task_next(
            project=project, user=request.user, task_type=data["type"], lang=data["lang"], message=message
        )
        return Response(task_view(task).as_dict(), status=status.HTTP_201_CREATED)


class TaskDetailApi(CollectApi):
    def get(self, request: Request, name: str, task_id: int) -> Response:
        """The caller's own task, with the conversation it is about."""
        project = self.project(request, name)
        return Response(task_view(task_get(project=project, user=request.user, task_id=task_id)).as_dict())


class TaskAckApi(CollectApi):
    def post(self, request: Request, name: str, task_id: int) -> Response:
        """The task is in front of the caller: note it and renew its lease."""
        project = self.project_for_collecting(request, name)
        task = task_ack(project=project, task_id=task_id, user=request.user)
        return Response(task_view(task).as_dict())


class TaskNackApi(CollectApi):
    def post(self, request: Request, name: str, task_id: int) -> Response:
        """Give the task back; with ``dont_show_again`` (the default) its message is not offered again."""
        project = self.project_for_collecting(request, name)
        data = _valid(NackInputSerializer, request)
        task = task_nack(
            project=project,
            task_id=task_id,
            user=request.user,
            reason=data["reason"],
            dont_show_again=data["dont_show_again"],
        )
        return Response(task_view(task).as_dict())


class TaskSubmitApi(CollectApi):
    def post(self, request: Request, name: str, task_id: int) -> Response:
        """Submit the task's work: ``{"text", "lang"?}`` (prompts, replies), ``{"labels"}`` (reviews)
        or ``{"ranking", "not_rankable"?}`` (rankings, ids best first)."""
        project = self.project_for_collecting(request, name)
        task = task_submit(project=project, task_id=task_id, user=request.user, data=request.data)
        return Response(task_view(task).as_dict())


class TreeDetailApi(CollectApi):
    def get(self, request: Request, name: str, tree_id: str) -> Response:
        """A collected tree: its state, the limits it was created with and its messages."""
        project = self.project(request, name)
        return Response(tree_status(collected_tree_get(project=project, tree_id=tree_id)))


class TreeHaltApi(CollectApi):
    def post(self, request: Request, name: str, tree_id: str) -> Response:
        """Halt the tree (moderators)."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        tree_halt(project=project, tree_id=collected.pk)
        collected.tree.refresh_from_db(fields=["state"])
        return Response(tree_status(collected))


class TreeResumeApi(CollectApi):
    def post(self, request: Request, name: str, tree_id: str) -> Response:
        """Resume a halted tree (moderators)."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        tree_resume(project=project, tree_id=collected.pk)
        collected.tree.refresh_from_db(fields=["state"])
        return Response(tree_status(collected))


def _deletion_data(deletion: Deletion) -> dict[str, Any]:
    return {
        "id": deletion.pk,
        "message_id": deletion.message.external_id,
        "deleted": len(deletion.message_ids),
        "reason": deletion.reason,
        "created_at": deletion.created_at,
        "undone_at": deletion.undone_at,
    }


class MessageDeleteApi(CollectApi):
    def post(self, request: Request, name: str, tree_id: str, message_id: str) -> Response:
        """Soft-delete a message and its replies (moderators); returns the deletion, which can be undone."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        message = tree_message_get(collected=collected, message_id=message_id)
        data = _valid(ReasonInputSerializer, request)
        deletion = message_delete(project=project, message=message, by=request.user, reason=data["reason"])
        return Response(_deletion_data(deletion), status=status.HTTP_201_CREATED)


class DeletionUndoApi(CollectApi):
    def post(self, request: Request, name: str, deletion_id: int) -> Response:
        """Restore the messages a deletion marked (moderators)."""
        project = self.project_for_moderating(request, name)
        deletion = Deletion.objects.filter(pk=deletion_id, project=project).select_related("message").first()
        if deletion is None:
            raise Http404("no such deletion in this project")
        deletion = deletion_undo(project=project, deletion=deletion, by=request.user)
        return Response(_deletion_data(deletion))


class MessageReportApi(CollectApi):
    def post(self, request: Request, name: str, tree_id: str, message_id: str) -> Response:
        """Report (red-flag) a message; enough reports trigger auto-moderation."""
        project = self.project(request, name)
        if not permissions.can_report(request.user, project):
            raise PermissionDenied("you are not taking part in this project")
        collected = collected_tree_get(project=project, tree_id=tree_id)
        message = tree_message_get(collected=collected, message_id=message_id)
        data = _valid(ReasonInputSerializer, request)
        report = report_create(project=project, message=message, user=request.user, reason=data["reason"])
        return Response(
            {"message_id": message.external_id, "reason": report.reason, "created_at": report.created_at},
            status=status.HTTP_201_CREATED,
        )
