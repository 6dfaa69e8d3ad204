"""An item's final answer over the API: read the adjudication, save it.

    GET  projects/{name}/items/{tree}/final   the annotators' fields side by side, and the final so far
    PUT  projects/{name}/items/{tree}/final   {"version", "take"?, "fields"?}: save the final answer

For the project's reviewers and managers, as the adjudication page. A PUT
names the final's version it was based on (0 before the first save); an older
one is refused with a 409 (``stale_version``, with ``current_version``).
Fields annotators disagree on must be settled (``fields.<field>``:
``undecided``); the answer is checked by the schemes (``invalid`` with every
problem at its path). Thin: ``annotation.review.adjudication`` reads,
``annotation.review.finals`` writes.
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
from annotation.models import Project
from annotation.projects.selectors import project_visible_get
from annotation.review.adjudication import AdjudicationItem, adjudication_item
from annotation.review.finals import final_save

TAG = ["adjudication"]
# Versions are stored in 32-bit columns on PostgreSQL.
MAX_VERSION = 2**31 - 1


class FieldSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="`scheme`, `scheme/node/<id>`, `scheme/path`, ...")
    values = serializers.DictField(
        child=serializers.JSONField(allow_null=True), help_text="Each annotator's value (null: none)."
    )
    agreed = serializers.BooleanField(help_text="Every annotator gave the same value.")
    prefilled = serializers.BooleanField(
        help_text="Taken without a choice (agreement, or the majority rule)."
    )


class FinalOutputSerializer(serializers.Serializer):
    tree = serializers.IntegerField()
    item = serializers.CharField(help_text="The tree's item id from its file.")
    version = serializers.IntegerField(help_text="The final answer's version (0: none yet); a PUT names it.")
    answers = serializers.JSONField(
        allow_null=True, help_text="The final answer by scheme; null before the first."
    )
    provenance = serializers.DictField(
        child=serializers.CharField(), help_text="Field: an annotator, `edited` or `auto:majority`."
    )
    decided_by = serializers.CharField(
        allow_null=True, help_text="Who saved it; null for the automatic rule."
    )
    updated_at = serializers.DateTimeField(allow_null=True)
    annotators = serializers.ListField(child=serializers.CharField())
    fields = FieldSerializer(many=True, help_text="Disagreements first.")


class FinalInputSerializer(serializers.Serializer):
    version = serializers.IntegerField(
        min_value=0, max_value=MAX_VERSION, help_text="The final answer's version seen (0 before the first)."
    )
    take = serializers.CharField(
        required=False, max_length=150, help_text="An annotator whose whole answer is the start."
    )
    fields = serializers.DictField(
        child=serializers.JSONField(),
        default=dict,
        help_text='Field: `{"from": <annotator>}` or `{"value": <the field\'s value>}` (an edit).',
    )


def item_data(item: AdjudicationItem) -> dict[str, Any]:
    final = item.final
    return {
        "tree": item.tree.pk,
        "item": item.tree.external_id,
        "version": item.version,
        "answers": final.answers if final is not None else None,
        "provenance": final.provenance if final is not None else {},
        "decided_by": final.decided_by.get_username() if final is not None and final.decided_by else None,
        "updated_at": final.updated_at if final is not None else None,
        "annotators": item.annotators,
        "fields": [
            {
                "name": vote.name,
                "values": vote.values,
                "agreed": vote.agreed,
                "prefilled": vote.name in item.prefill.fields,
            }
            for vote in item.votes
        ],
    }


def adjudicated_project(request: Request, name: str) -> Project:
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_review(request.user, project):
        raise PermissionDenied("adjudication is for the project's reviewers and managers")
    return project


class ItemFinalApi(APIView):
    @extend_schema(tags=TAG, operation_id="items_final_retrieve", responses=FinalOutputSerializer)
    def get(self, request: Request, name: str, tree_id: int) -> Response:
        """The item's submitted answers as fields, disagreements first, and its final answer so far."""
        project = adjudicated_project(request, name)
        item = adjudication_item(project=project, tree_id=tree_id)
        return Response(FinalOutputSerializer(item_data(item)).data)

    @extend_schema(
        tags=TAG,
        operation_id="items_final_update",
        request=FinalInputSerializer,
        responses={
            200: FinalOutputSerializer,
            400: OpenApiResponse(
                description="`invalid`: each problem at its field (`undecided`, `unknown_annotator`, ...) "
                "or at the scheme's path."
            ),
            409: OpenApiResponse(
                description="`stale_version` (with `current_version`): someone saved since — reload it."
            ),
        },
    )
    def put(self, request: Request, name: str, tree_id: int) -> Response:
        """Save the item's final answer: one annotator's whole (`take`), fields from several, or edited."""
        project = adjudicated_project(request, name)
        serializer = FinalInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        final_save(
            project=project,
            tree_id=tree_id,
            by=request.user,
            version=data["version"],
            take=data.get("take"),
            choices=data["fields"],
        )
        item = adjudication_item(project=project, tree_id=tree_id)
        return Response(FinalOutputSerializer(item_data(item)).data)
