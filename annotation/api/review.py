"""Reviewing over the API: the queue of submitted work, one item's work side by side, decisions.

    GET  projects/{name}/review                     the queue (``status``, ``annotator``, ``page``)
    GET  projects/{name}/review/{tree_id}           each annotator's work on the item, with its version
    POST projects/{name}/review/{tree_id}/decisions accept or reject one annotator's work, at the
                                                    version the reviewer saw (409 when it changed)

The same selectors and service as the reviewer's pages (``annotation.review``),
so the rules are theirs: reviewers and managers only, never one's own work, a
rejection needs a comment.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.api.parsers import query_text
from annotation.models import Assignment, Project, Review
from annotation.projects.selectors import project_visible_get
from annotation.review.selectors import QUEUE_FILTERS, review_item, review_queue
from annotation.review.services import MAX_COMMENT_LENGTH, review_decide

TAG = ["review"]
# Versions are stored in 32-bit columns on PostgreSQL.
MAX_VERSION = 2**31 - 1


def reviewed_project(request: Request, name: str) -> Project:
    """The project, when the caller reviews it (404 when they may not see it, 403 when they may
    see but not review it), as on the pages."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_review(request.user, project):
        raise PermissionDenied("reviewing is for the project's reviewers and managers")
    return project


REVIEW_STATUS_HELP = '"" (not reviewed yet), "accepted" or "rejected".'


class QueueEntrySerializer(serializers.Serializer):
    annotator = serializers.CharField(source="username")
    status = serializers.CharField()
    review_status = serializers.CharField(allow_blank=True, help_text=REVIEW_STATUS_HELP)
    label = serializers.CharField(help_text="Where the work stands, in words.")
    submitted_at = serializers.DateTimeField(allow_null=True)


class QueueRowSerializer(serializers.Serializer):
    tree_id = serializers.IntegerField()
    external_id = serializers.CharField()
    work = QueueEntrySerializer(source="entries", many=True)


class QueueSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=list(QUEUE_FILTERS))
    annotator = serializers.CharField(allow_blank=True)
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Work by review status.")
    page = serializers.IntegerField()
    has_next = serializers.BooleanField()
    results = QueueRowSerializer(source="rows", many=True)


class QueueQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=list(QUEUE_FILTERS), default="pending")
    annotator = serializers.CharField(max_length=150, required=False, default="")
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)


class ReviewQueueApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="review_queue",
        parameters=[QueueQuerySerializer],
        responses=QueueSerializer,
    )
    def get(self, request: Request, name: str) -> Response:
        """Items with submitted work in ``status`` (by ``annotator`` when given), 50 a page."""
        project = reviewed_project(request, name)
        query_text(request, "annotator")  # a NUL is refused before PostgreSQL compares it
        query = QueueQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(QueueSerializer(review_queue(project=project, **query.validated_data)).data)


class DecisionSerializer(serializers.Serializer):
    decision = serializers.CharField()
    comment = serializers.CharField(allow_blank=True)
    version = serializers.IntegerField(help_text="The work's version the decision was taken on.")
    reviewer = serializers.CharField(source="reviewer.username", allow_null=True)
    created_at = serializers.DateTimeField()


class ColumnSerializer(serializers.Serializer):
    annotator = serializers.CharField(source="username")
    status = serializers.CharField(source="assignment.status")
    review_status = serializers.CharField(
        source="assignment.review_status", allow_blank=True, help_text=REVIEW_STATUS_HELP
    )
    label = serializers.CharField(help_text="Where the work stands, in words.")
    version = serializers.IntegerField(
        source="assignment.version", help_text="Send it back with a decision on this work."
    )
    submitted_at = serializers.DateTimeField(source="assignment.submitted_at", allow_null=True)
    time_spent_ms = serializers.IntegerField(source="assignment.time_spent_ms")
    answers = serializers.DictField(help_text="Their answers, by scheme name.")
    reviews = DecisionSerializer(many=True, help_text="The decisions on their work, oldest first.")


class ReviewItemSerializer(serializers.Serializer):
    tree_id = serializers.IntegerField(source="tree.pk")
    external_id = serializers.CharField(source="tree.external_id")
    work = ColumnSerializer(source="columns", many=True)
    in_progress = serializers.IntegerField(help_text="Annotators holding the item who have not submitted it.")
    next_tree_id = serializers.IntegerField(allow_null=True, help_text="The next item waiting for review.")


class ReviewItemApi(APIView):
    @extend_schema(tags=TAG, operation_id="review_item", responses=ReviewItemSerializer)
    def get(self, request: Request, name: str, tree_id: int) -> Response:
        """Each annotator's submitted or reviewed work on the item: answers, version, decisions."""
        project = reviewed_project(request, name)
        item = review_item(project=project, tree_id=tree_id, viewer=request.user)
        return Response(ReviewItemSerializer(item).data)


class DecisionInputSerializer(serializers.Serializer):
    annotator = serializers.CharField(max_length=150, help_text="Whose work on the item is decided on.")
    decision = serializers.ChoiceField(choices=Review.Decision.values)
    comment = serializers.CharField(
        max_length=MAX_COMMENT_LENGTH,
        required=False,
        allow_blank=True,
        default="",
        help_text="Required for a rejection: what the annotator should fix.",
    )
    version = serializers.IntegerField(
        min_value=1, max_value=MAX_VERSION, help_text="The work's version, as the reviewer saw it."
    )


class ReviewDecisionsApi(APIView):
    @extend_schema(
        tags=TAG,
        operation_id="review_decide",
        request=DecisionInputSerializer,
        responses={
            201: OpenApiResponse(DecisionSerializer, description="The decision."),
            409: OpenApiResponse(
                description="`stale_version` (with `current_version`): the work changed since the "
                "version sent — look at it again before deciding."
            ),
        },
    )
    def post(self, request: Request, name: str, tree_id: int) -> Response:
        """Accept or reject one annotator's work on the item, as it was at ``version``."""
        project = reviewed_project(request, name)
        serializer = DecisionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        assignment = (
            Assignment.objects.select_related("project", "user", "tree")
            .filter(project=project, tree_id=tree_id, user__username=data["annotator"])
            .filter(kind=Assignment.Kind.WORK)
            .first()
        )
        if assignment is None:
            raise Http404(f'no work by "{data["annotator"]}" on this item')
        review = review_decide(
            reviewer=request.user,
            assignment=assignment,
            decision=data["decision"],
            comment=data["comment"],
            version=data["version"],
        )
        return Response(DecisionSerializer(review).data, status=status.HTTP_201_CREATED)


__all__ = ["ReviewDecisionsApi", "ReviewItemApi", "ReviewQueueApi", "reviewed_project"]
