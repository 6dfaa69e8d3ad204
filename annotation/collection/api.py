"""The collection loop over the API (under ``/api/v1/projects/<name>/collect/``).

Each view is one call to a service or selector between an input serializer
and an output. The workflow's refusals (``errors.WorkflowError``) become
``{"code", "message"}`` with their status here; every other error takes the
API's own shape (``annotation/api/errors.py``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback

from annotation import permissions
from annotation import permissions as annotation_permissions
from annotation.api.errors import exception_handler as api_exception_handler
from annotation.api.files import AnyAccept
from annotation.api.parsers import query_text
from annotation.collection.availability import TASK_TYPES
from annotation.collection.errors import WorkflowError
from annotation.collection.export import SYNTHETIC_CHOICES, ExportFilters, collected_export
from annotation.collection.models import Deletion, Task
from annotation.collection.moderation import (
    deletion_undo,
    message_delete,
    report_create,
    tree_halt,
    tree_resume,
)
from annotation.collection.selectors import (
    collected_tree_get,
    task_get,
    task_view,
    tree_message_get,
    tree_status,
)
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_ack, task_nack, task_next, tasks_available, workflow_config
from annotation.models import Project
from annotation.permissions import DeletedText
from annotation.projects.selectors import project_visible_get
from trees.downloads import file_download
from trees.formats import oasst
from trees.vocabulary import READY_FOR_EXPORT, TREE_STATES

TAG = ["collection"]
# The workflow's refusals (errors.WorkflowError): a task or tree in a state that does not allow it.
REFUSED = OpenApiResponse(description="`code` says why the workflow refused (the task or tree moved on).")


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


class TurnSerializer(serializers.Serializer):
    id = serializers.CharField()
    role = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    lang = serializers.CharField(allow_null=True)
    synthetic = serializers.BooleanField(required=False, help_text="Ranking tasks that reveal it only.")


class LabelDescriptionSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    widget = serializers.CharField()
    display_text = serializers.CharField()
    help_text = serializers.CharField(allow_blank=True)


class TaskLabelsSerializer(serializers.Serializer):
    mode = serializers.CharField()
    valid = serializers.ListField(child=serializers.CharField())
    mandatory = serializers.ListField(child=serializers.CharField())
    descriptions = LabelDescriptionSerializer(many=True)


class TaskTreeSerializer(serializers.Serializer):
    id = serializers.CharField()
    state = serializers.CharField()


class TaskOutputSerializer(serializers.Serializer):
    """A task as its holder sees it (``TaskView.as_dict``)."""

    id = serializers.IntegerField()
    type = serializers.ChoiceField(choices=Task.Type.values)
    status = serializers.ChoiceField(choices=Task.Status.values)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    acked_at = serializers.DateTimeField(allow_null=True)
    tree = TaskTreeSerializer(allow_null=True)
    conversation = TurnSerializer(many=True, help_text="From the prompt down to the task's message.")
    created_message_id = serializers.CharField(allow_null=True)
    result = serializers.JSONField()
    labels = TaskLabelsSerializer(required=False, help_text="Review tasks only.")
    replies = TurnSerializer(many=True, required=False, help_text="Ranking tasks only: in the order shown.")
    reveal_synthetic = serializers.BooleanField(required=False)


class SubmitInputSerializer(serializers.Serializer):
    """One of: ``text`` (and ``lang``) for prompts and replies, ``labels`` for reviews,
    ``ranking`` (and ``not_rankable``) for rankings; the task's type decides which."""

    text = serializers.CharField(required=False)
    lang = serializers.CharField(required=False, allow_null=True)
    labels = serializers.DictField(required=False, help_text="Label name: value (flags 0/1, scales 0..1).")
    ranking = serializers.ListField(child=serializers.CharField(), required=False, help_text="Best first.")
    not_rankable = serializers.BooleanField(required=False)


class CollectedMessageSerializer(serializers.Serializer):
    id = serializers.CharField()
    parent_id = serializers.CharField(allow_null=True)
    role = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    lang = serializers.CharField(allow_null=True)
    review_count = serializers.IntegerField(allow_null=True)
    review_result = serializers.BooleanField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True)
    deleted = serializers.BooleanField()
    synthetic = serializers.BooleanField()


class TreeStatusSerializer(serializers.Serializer):
    """A collected tree: its state, the limits it was created with and its messages."""

    id = serializers.CharField()
    state = serializers.ChoiceField(choices=list(TREE_STATES))
    active = serializers.BooleanField()
    lang = serializers.CharField()
    goal_tree_size = serializers.IntegerField()
    max_depth = serializers.IntegerField()
    max_children_count = serializers.IntegerField()
    won_prompt_lottery_at = serializers.DateTimeField(allow_null=True)
    messages = CollectedMessageSerializer(many=True)


class DeletionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    message_id = serializers.CharField()
    deleted = serializers.IntegerField(help_text="Messages deleted: the message and its replies.")
    reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    undone_at = serializers.DateTimeField(allow_null=True)


class ReportOutputSerializer(serializers.Serializer):
    message_id = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class AvailableApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_available",
        parameters=[
            OpenApiParameter("lang", str, required=False, description="Only tasks in this language.")
        ],
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request, name: str) -> Response:
        """Tasks available to the caller, by type, and ``random``: their sum (Open-Assistant's counts)."""
        project = self.project_for_collecting(request, name)
        return Response(tasks_available(project=project, user=request.user, lang=query_text(request, "lang")))


class TaskNextApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_tasks_next",
        request=NextInputSerializer,
        responses={201: TaskOutputSerializer, 409: REFUSED},
    )
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
        view = task_view(task, shown=DeletedText(request.user, project))
        return Response(view.as_dict(), status=status.HTTP_201_CREATED)


class TaskDetailApi(CollectApi):
    @extend_schema(tags=TAG, operation_id="collect_tasks_retrieve", responses=TaskOutputSerializer)
    def get(self, request: Request, name: str, task_id: int) -> Response:
        """The caller's own task, with the conversation it is about."""
        project = self.project(request, name)
        return Response(
            task_view(
                task_get(project=project, user=request.user, task_id=task_id),
                shown=DeletedText(request.user, project),
            ).as_dict()
        )


class TaskAckApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_tasks_ack",
        request=None,
        responses={200: TaskOutputSerializer, 409: REFUSED},
    )
    def post(self, request: Request, name: str, task_id: int) -> Response:
        """The task is in front of the caller: note it and renew its lease."""
        project = self.project_for_collecting(request, name)
        task = task_ack(project=project, task_id=task_id, user=request.user)
        return Response(task_view(task, shown=DeletedText(request.user, project)).as_dict())


class TaskNackApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_tasks_nack",
        request=NackInputSerializer,
        responses={200: TaskOutputSerializer, 409: REFUSED},
    )
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
        return Response(task_view(task, shown=DeletedText(request.user, project)).as_dict())


class TaskSubmitApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_tasks_submit",
        request=SubmitInputSerializer,
        responses={
            200: TaskOutputSerializer,
            409: REFUSED,
        },
    )
    def post(self, request: Request, name: str, task_id: int) -> Response:
        """Submit the task's work: ``{"text", "lang"?}`` (prompts, replies), ``{"labels"}`` (reviews)
        or ``{"ranking", "not_rankable"?}`` (rankings, ids best first)."""
        project = self.project_for_collecting(request, name)
        task = task_submit(project=project, task_id=task_id, user=request.user, data=request.data)
        return Response(task_view(task, shown=DeletedText(request.user, project)).as_dict())


class TreeDetailApi(CollectApi):
    @extend_schema(tags=TAG, operation_id="collect_trees_retrieve", responses=TreeStatusSerializer)
    def get(self, request: Request, name: str, tree_id: str) -> Response:
        """A collected tree: its state, the limits it was created with and its messages."""
        project = self.project(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        return Response(tree_status(collected, shown=DeletedText(request.user, project)))


class TreeHaltApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_trees_halt",
        request=None,
        responses={200: TreeStatusSerializer, 409: REFUSED},
    )
    def post(self, request: Request, name: str, tree_id: str) -> Response:
        """Halt the tree (moderators)."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        tree_halt(project=project, tree_id=collected.pk)
        collected.tree.refresh_from_db(fields=["state"])
        return Response(tree_status(collected, shown=DeletedText(request.user, project)))


class TreeResumeApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_trees_resume",
        request=None,
        responses={200: TreeStatusSerializer, 409: REFUSED},
    )
    def post(self, request: Request, name: str, tree_id: str) -> Response:
        """Resume a halted tree (moderators)."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        tree_resume(project=project, tree_id=collected.pk)
        collected.tree.refresh_from_db(fields=["state"])
        return Response(tree_status(collected, shown=DeletedText(request.user, project)))


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
    @extend_schema(
        tags=TAG,
        operation_id="collect_messages_delete",
        request=ReasonInputSerializer,
        responses={201: DeletionOutputSerializer, 409: REFUSED},
    )
    def post(self, request: Request, name: str, tree_id: str, message_id: str) -> Response:
        """Soft-delete a message and its replies (moderators); returns the deletion, which can be undone."""
        project = self.project_for_moderating(request, name)
        collected = collected_tree_get(project=project, tree_id=tree_id)
        message = tree_message_get(collected=collected, message_id=message_id)
        data = _valid(ReasonInputSerializer, request)
        deletion = message_delete(project=project, message=message, by=request.user, reason=data["reason"])
        return Response(_deletion_data(deletion), status=status.HTTP_201_CREATED)


class DeletionUndoApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_deletions_undo",
        request=None,
        responses={200: DeletionOutputSerializer, 409: REFUSED},
    )
    def post(self, request: Request, name: str, deletion_id: int) -> Response:
        """Restore the messages a deletion marked (moderators)."""
        project = self.project_for_moderating(request, name)
        deletion = Deletion.objects.filter(pk=deletion_id, project=project).select_related("message").first()
        if deletion is None:
            raise Http404("no such deletion in this project")
        deletion = deletion_undo(project=project, deletion=deletion, by=request.user)
        return Response(_deletion_data(deletion))


class MessageReportApi(CollectApi):
    @extend_schema(
        tags=TAG,
        operation_id="collect_messages_report",
        request=ReasonInputSerializer,
        responses={201: ReportOutputSerializer, 409: REFUSED},
    )
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


class ExportInputSerializer(serializers.Serializer):
    state = serializers.ListField(
        child=serializers.ChoiceField(choices=[*TREE_STATES, "all"]),
        default=[READY_FOR_EXPORT],
        max_length=len(TREE_STATES) + 1,
        help_text="Trees in these states (repeat the parameter; `all` for every state).",
    )
    lang = serializers.ListField(
        child=serializers.CharField(max_length=32),
        default=list,
        max_length=100,
        help_text="Only these languages.",
    )
    include_deleted = serializers.BooleanField(default=False)
    synthetic = serializers.ChoiceField(choices=list(SYNTHETIC_CHOICES), default="include")
    include_unaccepted = serializers.BooleanField(default=False)

    def filters(self) -> ExportFilters:
        data = self.validated_data
        states = tuple(TREE_STATES) if "all" in data["state"] else tuple(dict.fromkeys(data["state"]))
        return ExportFilters(
            states=states,
            langs=tuple(data["lang"]),
            include_deleted=data["include_deleted"],
            synthetic=data["synthetic"],
            accepted_only=not data["include_unaccepted"],
        )


class ExportApi(CollectApi):
    content_negotiation_class = AnyAccept

    @extend_schema(
        tags=TAG,
        operation_id="collect_export",
        parameters=[ExportInputSerializer],
        responses={
            (200, oasst.FILE.media_type): OpenApiResponse(OpenApiTypes.STR, description="oasst JSONL")
        },
    )
    def get(self, request: Request, name: str) -> StreamingHttpResponse:
        """The collected trees as Open-Assistant's tree export (``export_collected``), streamed
        (managers and reviewers)."""
        project = self.project(request, name)
        if not annotation_permissions.can_export(request.user, project):
            raise PermissionDenied("exports are for the project's managers and reviewers")
        options = ExportInputSerializer(data=request.query_params)
        options.is_valid(raise_exception=True)
        lines = collected_export(project=project, filters=options.filters())
        return file_download(lines, kind=oasst.FILE, filename=f"{project.name}.oasst.{oasst.FILE.extension}")
