"""Trees over the API: a filtered list (cursor-paginated) and one whole tree, nested.

    GET trees         ?dataset=&project=&state=&metadata_key=&metadata_value=&has_annotations=
    GET trees/{id}    the tree with every message nested under ``children``

The caller sees the trees of the datasets they may read
(``permissions.visible_trees``); an annotator sees trees only as the items
handed to them (``projects/{name}/items/...``).

Deleted messages keep their place, their text shown as ``permissions.DeletedText`` lets the
caller read it (a placeholder unless they moderate the project growing the tree).

A tree is written with ``trees.formats.nested.dump_nested_tree``, which keeps
its own stack: DRF's renderer (and orjson) recurse per level and fail on a
10,000-deep conversation, which this answers like any other.
"""

from __future__ import annotations

import json
import math
from functools import reduce
from typing import Any

import django_filters
from django import forms
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.fields.json import HasKey, KeyTransform
from django.http import Http404, HttpResponse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from annotation import permissions
from annotation.api.pagination import IdCursorPagination
from annotation.models import Annotation, ProjectItem
from trees import vocabulary
from trees.formats.jsonstream import encode
from trees.formats.nested import dump_nested_tree
from trees.formats.records import MessageRecord
from trees.models import ConversationTree
from trees.selectors import trees_with_counts
from trees.store import tree_records

TAG = ["trees"]
# metadata_key=final_state.booking.status reads nested keys; this many at most.
MAX_KEY_PARTS = 10


class TreeFilterForm(forms.Form):
    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("metadata_value") not in (None, "") and not data.get("metadata_key"):
            self.add_error("metadata_value", "needs metadata_key: the key whose value to compare")
        key = data.get("metadata_key")
        if key and (len(key.split(".")) > MAX_KEY_PARTS or "" in key.split(".")):
            self.add_error("metadata_key", f"must be up to {MAX_KEY_PARTS} non-empty keys joined by dots")
        return data


NOT_A_SCALAR = object()


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def json_scalar(text: str) -> Any:
    """The JSON number, string, true, false or null ``text`` spells, if a JSON column can hold it;
    else NOT_A_SCALAR. NaN, infinities (``1e400``) and NUL characters are JSON that PostgreSQL
    refuses to compare with, so they are read as plain text instead."""
    try:
        value = json.loads(text, parse_constant=_no_constants)
    except ValueError:
        return NOT_A_SCALAR
    if isinstance(value, dict | list):
        return NOT_A_SCALAR
    if isinstance(value, float) and not math.isfinite(value):
        return NOT_A_SCALAR
    if isinstance(value, str) and "\x00" in value:
        return NOT_A_SCALAR
    return value


class StrictBooleanField(forms.NullBooleanField):
    """true/false (or 1/0) or nothing: any other value is refused, not read as "no filter"
    (as Django's select widget for a null boolean would read it)."""

    widget = forms.TextInput

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        spelled = str(value).strip().lower()
        if spelled in ("true", "1"):
            return True
        if spelled in ("false", "0"):
            return False
        raise forms.ValidationError("must be true or false", code="invalid")


class StrictBooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class TreeFilter(django_filters.FilterSet):
    dataset = django_filters.CharFilter(field_name="dataset__name", help_text="A dataset's name.")
    project = django_filters.CharFilter(
        method="filter_project", help_text="A project's name: its items (trees of its dataset)."
    )
    state = django_filters.ChoiceFilter(choices=[(state, state) for state in vocabulary.TREE_STATES])
    metadata_key = django_filters.CharFilter(
        method="filter_metadata",
        help_text="Trees whose metadata has this key; dots go into nested objects "
        "(final_state.booking.status).",
    )
    metadata_value = django_filters.CharFilter(
        method="filter_metadata",
        help_text="With metadata_key: trees whose value there equals this (as text, or as the JSON "
        "value it spells: 3, true, null).",
    )
    has_annotations = StrictBooleanFilter(
        method="filter_has_annotations",
        help_text="Trees with (true) or without (false) an annotator's submitted annotation in a project "
        "the caller may see (or in `project`); a corpus's reference answers do not count.",
    )

    class Meta:
        model = ConversationTree
        fields: list[str] = []
        form = TreeFilterForm

    def filter_project(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        items = ProjectItem.objects.filter(project__name=value, tree=OuterRef("pk"))
        projects = permissions.visible_projects(self.request.user).filter(name=value)
        return queryset.filter(Exists(items), Exists(projects))

    def filter_metadata(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        if name == "metadata_value":
            return queryset  # read together with the key, below
        parts = value.split(".")
        parent = reduce(lambda expression, part: KeyTransform(part, expression), parts[:-1], F("metadata"))
        queryset = queryset.filter(HasKey(parent, parts[-1]))
        wanted = self.form.cleaned_data.get("metadata_value")
        if wanted in (None, ""):
            return queryset
        found = KeyTransform(parts[-1], parent)
        queryset = queryset.alias(metadata_found=found)
        condition = Q(metadata_found=wanted)
        spelled = json_scalar(wanted)
        if spelled is not NOT_A_SCALAR and spelled != wanted:
            condition |= Q(metadata_found=spelled)
        return queryset.filter(condition)

    @extend_schema_field(OpenApiTypes.BOOL)
    def filter_has_annotations(self, queryset: QuerySet, name: str, value: bool | None) -> QuerySet:
        if value is None:
            return queryset
        annotations = Annotation.objects.of_annotators().filter(
            tree=OuterRef("pk"),
            status=Annotation.Status.SUBMITTED,
            project__in=permissions.visible_projects(self.request.user),
        )
        project = self.form.cleaned_data.get("project")
        if project:
            annotations = annotations.filter(project__name=project)
        return queryset.filter(Exists(annotations) if value else ~Exists(annotations))


class TreeRowSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    dataset = serializers.CharField(source="dataset_name")
    external_id = serializers.CharField(help_text="The item id from the imported file.")
    state = serializers.CharField()
    metadata = serializers.JSONField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class TreesApi(generics.GenericAPIView):
    pagination_class = IdCursorPagination
    filter_backends = [DjangoFilterBackend]
    filterset_class = TreeFilter
    serializer_class = TreeRowSerializer

    def get_queryset(self) -> QuerySet[ConversationTree]:
        trees = permissions.visible_trees(self.request.user).annotate(dataset_name=F("dataset__name"))
        return trees_with_counts(trees)

    @extend_schema(tags=TAG, operation_id="trees_list", responses=TreeRowSerializer(many=True))
    def get(self, request: Request) -> Response:
        """The trees the caller may read, by id, filtered; one page per cursor."""
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(TreeRowSerializer(page, many=True).data)


# One tree, nested


def node_body(message: MessageRecord) -> dict[str, Any]:
    return {
        "id": message.external_id,
        "role": message.role,
        "text": message.text,
        "lang": message.lang,
        "model_name": message.model_name,
        "synthetic": message.synthetic,
        "deleted": message.deleted,
        "rank": message.rank,
        "review_count": message.review_count,
        "review_result": message.review_result,
        "metadata": message.metadata,
    }


class NodeSerializer(serializers.Serializer):
    """A message with its replies (``children``, in order), nested to any depth."""

    id = serializers.CharField(help_text="The node id from the imported file.")
    role = serializers.ChoiceField(choices=vocabulary.ROLES)
    text = serializers.CharField(allow_blank=True)
    lang = serializers.CharField(allow_null=True)
    model_name = serializers.CharField(allow_null=True)
    synthetic = serializers.BooleanField()
    deleted = serializers.BooleanField()
    rank = serializers.IntegerField(allow_null=True)
    review_count = serializers.IntegerField(allow_null=True)
    review_result = serializers.BooleanField(allow_null=True)
    metadata = serializers.JSONField()
    children = serializers.SerializerMethodField()

    @extend_schema_field({"type": "array", "items": {"$ref": "#/components/schemas/Node"}})
    def get_children(self, message: Any) -> list[Any]:  # pragma: no cover - documentation only
        return []


class NestedTreeSerializer(TreeRowSerializer):
    root = NodeSerializer(allow_null=True, help_text="The first message; null for a tree without any.")


class TreeDetailApi(generics.GenericAPIView):
    serializer_class = NestedTreeSerializer

    @extend_schema(
        tags=TAG,
        operation_id="trees_retrieve",
        responses={200: OpenApiResponse(NestedTreeSerializer, description="The tree, nested.")},
    )
    def get(self, request: Request, tree_id: int) -> HttpResponse:
        """The whole tree, every message nested under its parent's ``children`` (three queries,
        whatever its size or depth)."""
        tree = (
            trees_with_counts(permissions.visible_trees(request.user).filter(pk=tree_id))
            .annotate(dataset_name=F("dataset__name"))
            .first()
        )
        if tree is None:
            raise Http404("no such tree")
        record = next(tree_records(ConversationTree.objects.filter(pk=tree.pk)))
        permissions.DeletedText(request.user).record(tree.pk, record)
        head = encode(TreeRowSerializer(tree).data)
        nested = dump_nested_tree(record, node_body, "children")
        return HttpResponse(f'{head[:-1]},"root":{nested}}}', content_type="application/json")
