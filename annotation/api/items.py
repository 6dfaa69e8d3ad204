"""The annotator's items over the API: next item, read it, save drafts, submit, skip.

Each view is one call to a service or selector between an input and an
output serializer; errors the services raise become JSON in ``errors.py``.

Inputs check only the envelope (types and bounds of ``version`` and
``time_spent_ms``, that ``annotations`` is an object): the answers inside are
checked by their schemes in the services, which report problems with the
same paths whichever door they came in by. Outputs are written by
``annotation.work.item_json``, the shape the annotate page reads too; the
serializers declare their fields for readers and the schema.
"""

from __future__ import annotations

import re
from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.throttling import AnonThrottle, LoopThrottle
from annotation.models import Assignment, Project
from annotation.projects.selectors import project_visible_get
from annotation.quality.training import training_feedback
from annotation.work.assignment import item_lease
from annotation.work.item_json import assignment_data, item_data, messages_data, tree_data
from annotation.work.selectors import item_view, leased_item_view
from annotation.work.submissions import PageSave, draft_save, item_skip, item_submit
from annotation.work.suggestions import item_suggestions_data, submitted_suggestions_data

# Versions and times are stored in 32-bit columns on PostgreSQL.
MAX_VERSION = 2**31 - 1
# One write counts at most an hour: a tab left open overnight is not work.
MAX_TIME_SPENT_MS = 3_600_000


class AnswersInputSerializer(serializers.Serializer):
    annotations = serializers.DictField(
        default=dict, help_text="Answers by scheme name; schemes not sent keep their saved answer."
    )
    version = serializers.IntegerField(
        min_value=1, max_value=MAX_VERSION, help_text="The item version the answers are based on."
    )
    time_spent_ms = serializers.IntegerField(
        min_value=0,
        max_value=MAX_TIME_SPENT_MS,
        default=0,
        help_text="Time spent on the item since the last write.",
    )
    suggestions_taken = serializers.ListField(
        child=serializers.CharField(max_length=100),
        max_length=100,
        default=list,
        help_text="In a project whose suggestions show before answering: the schemes whose answer "
        "the annotator copied from the judge's suggestion (recorded with the answers, and exported).",
    )

    def run_validation(self, data: Any = serializers.empty) -> Any:
        """Well-formed bodies pass without DRF's field-by-field copies (the loop posts one per
        item; its validators' defaults alone deep-copied every field); anything else goes
        through the fields, for their errors. A body with suggestions_taken, sent only in
        projects with suggestions, goes through the fields, which check its items. The
        field names come from the class (``self.fields`` deep-copies every field on first use:
        0.25 ms of each save's CPU, page_cycle.py)."""
        well_formed = _answers_well_formed(data, set(self._declared_fields) - {"suggestions_taken"})
        return well_formed if well_formed is not None else super().run_validation(data)


def _answers_well_formed(data: Any, known: set[str]) -> dict[str, Any] | None:
    """The body's envelope when it is well formed as it is (None: let the fields say what is wrong)."""
    if isinstance(data, dict) and set(data) <= known:
        answers, version = data.get("annotations", {}), data.get("version")
        spent = data.get("time_spent_ms", 0)
        page, sequence = data.get("page"), data.get("sequence")
        if (
            isinstance(answers, dict)
            and _whole(version, 1, MAX_VERSION)
            and _whole(spent, 0, MAX_TIME_SPENT_MS)
            and (page is None) == (sequence is None)
        ):
            value = {
                "annotations": answers,
                "version": version,
                "time_spent_ms": spent,
                "suggestions_taken": [],
            }
            if page is None:
                return value
            if isinstance(page, str) and PAGE_NAME.fullmatch(page) and _whole(sequence, 1, MAX_VERSION):
                return value | {"page": page, "sequence": sequence}
    return None


def _whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


# The name an annotate page takes for itself on loading (autosave.js).
PAGE_NAME = re.compile(r"[A-Za-z0-9_-]{8,32}")


class DraftInputSerializer(AnswersInputSerializer):
    page = serializers.RegexField(
        PAGE_NAME.pattern,
        required=False,
        help_text="The annotate page's name for itself (8 to 32 letters, digits, - or _), with `sequence`: "
        "a draft whose `version` is old is still taken when every write since was an earlier draft "
        "of the same page (a page left with a save under way sends its last changes at once).",
    )
    sequence = serializers.IntegerField(
        min_value=1, max_value=MAX_VERSION, required=False, help_text="The draft's number on its page."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("page" in attrs) != ("sequence" in attrs):
            raise serializers.ValidationError("page and sequence go together")
        return attrs


class SkipInputSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)


class AssignmentOutputSerializer(serializers.Serializer):
    status = serializers.CharField()
    version = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return assignment_data(instance)


class ProgressOutputSerializer(serializers.Serializer):
    submitted = serializers.IntegerField(help_text="Items this annotator submitted.")
    quota = serializers.IntegerField(help_text="Items this annotator may do in all.")
    items = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Items with every annotation they need.")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return instance.as_dict()


class MessageListSerializer(serializers.ListSerializer):
    """A tree's messages, written straight to dicts.

    The fields are declared on ``MessageOutputSerializer`` (for readers and
    schemas); DRF's field-by-field machinery would spend ~20 ms on a
    1,000-message tree for the same result.
    """

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        return messages_data(data)


class MessageOutputSerializer(serializers.Serializer):
    """One message of the tree, in preorder; ``parent`` is the parent's id (null for the root)."""

    id = serializers.CharField(source="external_id")
    parent = serializers.CharField(source="parent_external_id", allow_null=True)
    role = serializers.CharField()
    text = serializers.CharField()
    html = serializers.CharField(
        help_text="The text rendered as Markdown and sanitised (docs/security.md): safe to show as it is."
    )
    depth = serializers.IntegerField()
    lang = serializers.CharField(allow_null=True)

    class Meta:
        list_serializer_class = MessageListSerializer


class TreeOutputSerializer(serializers.Serializer):
    """The tree of an ``ItemView``; its messages (flat, in preorder) when the view has them."""

    id = serializers.IntegerField(source="tree.pk")
    external_id = serializers.CharField(source="tree.external_id")
    metadata = serializers.JSONField(source="tree.metadata")
    messages = MessageOutputSerializer(source="outline", many=True, required=False)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return tree_data(instance)


class ItemOutputSerializer(serializers.Serializer):
    """An annotator's item, as GET item and next-item return it (and the page script reads it)."""

    tree = TreeOutputSerializer(source="*")
    assignment = AssignmentOutputSerializer()
    annotations = serializers.DictField(help_text="The annotator's own answers, by scheme name.")
    progress = ProgressOutputSerializer()
    suggestions = serializers.JSONField(
        required=False,
        help_text="Only in a project with a judge's suggestions, when they show on this item now "
        "(`show: before`, or once submitted with `show: after`): `from`, `judge`, `show` and `schemes`, "
        "each with its `scheme`, `description`, `payload` and `text`.",
    )

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return item_data(instance)


class WriteOutputSerializer(serializers.Serializer):
    """What a draft save, a submission or a skip returns, from the assignment: its new version and state."""

    version = serializers.IntegerField()
    assignment = AssignmentOutputSerializer(source="*")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {"version": instance.version, "assignment": assignment_data(instance)}


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


def _suggestions(item: Any) -> dict[str, Any]:
    """A judge's suggestions, as the annotate page has them, in a project with them (one query;
    none, no key and no query, in any other): what an API client answers beside is what the
    answer records (``annotation.work.suggestions``)."""
    suggestions = item_suggestions_data(project=item.project, assignment=item.assignment)
    return {"suggestions": suggestions} if suggestions is not None else {}


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
        item = leased_item_view(project=project, user=request.user, lease=lease)
        return Response(ItemOutputSerializer(item).data | _suggestions(item))


class ItemDetailApi(LoopApi):
    @extend_schema(tags=LOOP, operation_id="items_retrieve", responses=ItemOutputSerializer)
    def get(self, request: Request, name: str, tree_id: int) -> Response:
        """The annotator's own item: the tree and its messages, their assignment, answers and progress."""
        project = self.project_for_viewing(request, name)
        item = item_view(project=project, tree_id=tree_id, user=request.user, with_messages=True)
        return Response(ItemOutputSerializer(item).data | _suggestions(item))


class ItemDraftApi(LoopApi):
    @extend_schema(
        tags=LOOP,
        operation_id="items_draft",
        request=DraftInputSerializer,
        responses={200: WriteOutputSerializer, 409: STALE},
    )
    def put(self, request: Request, name: str, tree_id: int) -> Response:
        """Keep the answers as a draft; refused whole if any answer is wrong or the version is old."""
        project = self.project_for_annotating(request, name)
        data = _valid(DraftInputSerializer, request)
        assignment = draft_save(
            project=project,
            tree=tree_id,
            user=request.user,
            answers=data["annotations"],
            version=data["version"],
            time_spent_ms=data["time_spent_ms"],
            suggestions_taken=data["suggestions_taken"],
            page_save=PageSave(data["page"], data["sequence"]) if "page" in data else None,
        )
        return Response(WriteOutputSerializer(assignment).data)


class SubmitOutputSerializer(WriteOutputSerializer):
    feedback = serializers.JSONField(
        allow_null=True,
        help_text="For a training item: each scheme's expected answer beside the annotator's (`schemes`), "
        "the item's `score` and `explanation` (and `explanation_html`, the explanation rendered as "
        "Markdown and sanitised), and their `training` status; null for any other item.",
    )
    suggestions = serializers.JSONField(
        allow_null=True,
        help_text="In a project whose suggestions show after answering: the judge's answers to the item, "
        "now that it is submitted (`from`, `judge`, `show` and `schemes`, each with its `scheme`, "
        "`description`, `payload` and `text`, and the annotator's own answer in words, `yours`); "
        "null otherwise.",
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
            suggestions_taken=data["suggestions_taken"],
        )
        # Training answers are shown once submitted (quality.training); gold checks in work never are.
        training = assignment.kind == Assignment.Kind.TRAINING
        feedback = training_feedback(project=project, assignment=assignment) if training else None
        suggestions = submitted_suggestions_data(project=project, assignment=assignment)
        return Response(
            WriteOutputSerializer(assignment).data | {"feedback": feedback, "suggestions": suggestions}
        )


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
