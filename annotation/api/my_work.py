"""The caller's own items in a project over the API: what the My work page shows.

    GET projects/{name}/items/mine    ``status`` (a filter of the page's), ``page`` (50 a page)

The same selector as the page (``annotation.work.my_work``), so the rules are
its: newest activity first, nobody else's work, a gold check named only once
submitted, the reviewer's comment on work sent back.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.projects.selectors import project_visible_get
from annotation.work.my_work import MY_WORK_FILTERS, my_work

STATES = [name for name in MY_WORK_FILTERS if name != "all"]


class MyWorkQuerySerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=list(MY_WORK_FILTERS), default="all")
    page = serializers.IntegerField(min_value=1, max_value=1_000_000, default=1)


class MyWorkRowSerializer(serializers.Serializer):
    tree_id = serializers.IntegerField()
    external_id = serializers.CharField()
    status = serializers.ChoiceField(source="state", choices=STATES, help_text="Where the item stands.")
    label = serializers.CharField(source="state_label", help_text="The same, in words.")
    kind = serializers.ChoiceField(
        choices=["work", "gold", "training"], help_text='"gold" only once the gold check is submitted.'
    )
    score = serializers.FloatField(
        allow_null=True, help_text="A submitted gold check's or training item's score (0 to 1)."
    )
    updated_at = serializers.DateTimeField(
        help_text="Its last change: the caller's, or a reviewer sending it back."
    )
    reviewer = serializers.CharField(allow_blank=True, help_text="Who sent it back (sent-back items only).")
    comment = serializers.CharField(allow_blank=True, help_text="Why (sent-back items only).")


class MyWorkSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=list(MY_WORK_FILTERS))
    counts = serializers.DictField(
        child=serializers.IntegerField(), help_text="The caller's items by status."
    )
    page = serializers.IntegerField(
        source="page.number", help_text="The page given (the last one past the end)."
    )
    pages = serializers.IntegerField(source="page.paginator.num_pages")
    count = serializers.IntegerField(source="page.paginator.count", help_text="Items under the filter.")
    results = MyWorkRowSerializer(source="rows", many=True)


class MyWorkApi(APIView):
    @extend_schema(
        tags=["annotator loop"],
        operation_id="items_mine",
        parameters=[MyWorkQuerySerializer],
        responses=MyWorkSerializer,
    )
    def get(self, request: Request, name: str) -> Response:
        """The caller's items in the project, newest activity first, 50 a page (``MY_WORK_PAGE_SIZE``)."""
        project = project_visible_get(user=request.user, name=name)
        query = MyWorkQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(
            MyWorkSerializer(my_work(project=project, user=request.user, **query.validated_data)).data
        )
