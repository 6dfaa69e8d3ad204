"""Quality over the API: each annotator's figures, and the caller's own training state.

GET projects/{name}/quality    per annotator: submitted work, gold answered, accuracy,
                               flagged, training; per gold item: answers and mean score
                               (reviewers and managers, as the quality page)
GET projects/{name}/training   the caller's training state (members)
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import permissions
from annotation.projects.selectors import project_visible_get
from annotation.quality.report import project_quality
from annotation.quality.training import training_status

TAG = ["quality"]


class TrainingSerializer(serializers.Serializer):
    state = serializers.ChoiceField(choices=["off", "not_started", "in_progress", "passed", "failed"])
    items = serializers.IntegerField(help_text="Items a round.")
    answered = serializers.IntegerField(help_text="Items answered in the current (or deciding) round.")
    attempt = serializers.IntegerField(help_text="The round, from 1.")
    attempts = serializers.IntegerField(allow_null=True, help_text="Rounds allowed (null: no limit).")
    score = serializers.FloatField(allow_null=True, help_text="The round's mean score so far.")
    pass_accuracy = serializers.FloatField()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return instance.as_dict()


class AnnotatorQualitySerializer(serializers.Serializer):
    username = serializers.CharField()
    submitted = serializers.IntegerField(help_text="Regular items submitted.")
    gold_answered = serializers.IntegerField(help_text="Gold checks submitted with a score.")
    accuracy = serializers.FloatField(allow_null=True, help_text="Their mean score on those (0 to 1).")
    flagged = serializers.BooleanField(help_text="Below quality.min_accuracy, once enough are scored.")
    training = TrainingSerializer()


class GoldItemQualitySerializer(serializers.Serializer):
    tree_id = serializers.IntegerField()
    external_id = serializers.CharField()
    answered = serializers.IntegerField()
    mean_score = serializers.FloatField(allow_null=True)
    explanation = serializers.CharField(allow_blank=True)


class QualitySerializer(serializers.Serializer):
    annotators = AnnotatorQualitySerializer(many=True)
    gold_items = GoldItemQualitySerializer(many=True, help_text="Hardest first; unanswered last.")
    warnings = serializers.ListField(child=serializers.CharField())


class QualityApi(APIView):
    @extend_schema(tags=TAG, operation_id="quality_retrieve", responses=QualitySerializer)
    def get(self, request: Request, name: str) -> Response:
        """Every annotator's accuracy on gold and training status, and every gold item's results."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_review(request.user, project):
            raise PermissionDenied("quality figures are for the project's reviewers and managers")
        return Response(QualitySerializer(project_quality(project=project)).data)


class TrainingApi(APIView):
    @extend_schema(tags=TAG, operation_id="training_retrieve", responses=TrainingSerializer)
    def get(self, request: Request, name: str) -> Response:
        """Where the caller is in the project's training (``off`` when it has none)."""
        project = project_visible_get(user=request.user, name=name)
        return Response(TrainingSerializer(training_status(project=project, user=request.user)).data)
