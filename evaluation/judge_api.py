"""Model judges against people over the API: the agreement figures' ``judges`` shape, and a judge's report.

    GET  projects/{name}/judges/{judge}/report   one judge against the project's people: confusion
                                                 against their majority, accuracy, κ with each person,
                                                 flip rate, failures, tokens and cost

The serializers below describe the ``judges`` key each agreement field gains
(``evaluation.agreement.judges``); ``evaluation.api`` nests them in its figures. The report is
for those who may read agreement (the project's managers and reviewers).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.projects.selectors import project_visible_get
from evaluation import permissions
from evaluation.judge_reports import judge_get, judge_report

TAG = ["evaluation"]
POSITIONS = ["below", "within", "above"]


class AgreementValueSerializer(serializers.Serializer):
    measure = serializers.CharField()
    value = serializers.FloatField(allow_null=True, help_text="Null when undefined: see undefined_reason.")
    undefined_reason = serializers.CharField(allow_null=True)
    shown = serializers.CharField(help_text='The value to 3 decimals, or "undefined (reason)".')
    n_units = serializers.IntegerField()


class JudgeHumanSerializer(AgreementValueSerializer):
    human = serializers.CharField(
        help_text="A person's username: the judge against them, on units both answered."
    )


class JudgeMajoritySerializer(AgreementValueSerializer):
    n_agreed = serializers.IntegerField(help_text="Units where the judge gave the people's majority label.")
    n_ties = serializers.IntegerField(
        help_text="Units the judge answered where the people's top count was shared."
    )
    n_too_few = serializers.IntegerField(
        help_text="Units the judge answered that fewer than two people answered."
    )
    labels = serializers.ListField(
        child=serializers.JSONField(), help_text="Rows (the majority) and columns (the judge) of confusion."
    )
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="confusion[i][j]: units whose majority said labels[i] and the judge labels[j].",
    )


class HumanRangeSerializer(serializers.Serializer):
    low = serializers.FloatField(help_text="The lowest value between two people.")
    high = serializers.FloatField(help_text="The highest value between two people.")
    pairs = serializers.IntegerField(help_text="Pairs of people with a value.")


class JudgeAgainstPeopleSerializer(serializers.Serializer):
    judge = serializers.CharField(help_text="The judge's account, judge:NAME.")
    n_units = serializers.IntegerField(help_text="Units the judge answered.")
    humans = JudgeHumanSerializer(many=True)
    mean = AgreementValueSerializer(help_text="The mean over the people, each weighing the same.")
    position = serializers.ChoiceField(
        choices=POSITIONS, allow_null=True, help_text="Where the mean falls against human_range."
    )
    within_human_range = serializers.BooleanField(allow_null=True)
    majority = JudgeMajoritySerializer(
        allow_null=True, help_text="For labels only (nominal and ordinal fields)."
    )


class MatrixCoderSerializer(serializers.Serializer):
    coder = serializers.CharField()
    source = serializers.ChoiceField(choices=["human", "model"])


class MatrixCellSerializer(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    shown = serializers.CharField()
    undefined_reason = serializers.CharField(allow_null=True)
    n_units = serializers.IntegerField()


class CoderMatrixSerializer(serializers.Serializer):
    measure = serializers.CharField()
    coders = MatrixCoderSerializer(many=True, help_text="People first, then judges (source model).")
    rows = serializers.ListField(
        child=serializers.ListField(child=MatrixCellSerializer(allow_null=True)),
        help_text="rows[i][j]: coders i and j; null on the diagonal and for coders with no unit in common.",
    )


class FieldJudgesSerializer(serializers.Serializer):
    measure = serializers.CharField(help_text="The field's per-pair measure: Cohen's kappa for labels.")
    human_range = HumanRangeSerializer(allow_null=True, help_text="Null when no two people have a value.")
    judges = JudgeAgainstPeopleSerializer(many=True)
    matrix = CoderMatrixSerializer(allow_null=True, help_text="Null beyond 30 coders.")


class JudgeReportFieldSerializer(serializers.Serializer):
    scheme = serializers.CharField()
    type = serializers.CharField()
    field = serializers.CharField()
    unit = serializers.CharField()
    values = serializers.CharField()
    measure = serializers.CharField()
    human_range = HumanRangeSerializer(allow_null=True)
    humans = JudgeHumanSerializer(many=True)
    mean = AgreementValueSerializer()
    position = serializers.ChoiceField(choices=POSITIONS, allow_null=True)
    within_human_range = serializers.BooleanField(allow_null=True)
    majority = JudgeMajoritySerializer(allow_null=True, help_text="Its value is the judge's accuracy.")


class JudgeVerdictsSerializer(serializers.Serializer):
    items = serializers.IntegerField(help_text="Items (and schemes) the judge has a verdict on.")
    done = serializers.IntegerField()
    partial = serializers.IntegerField(help_text="Some questions failed.")
    failed = serializers.IntegerField()
    failures = serializers.IntegerField(help_text="Questions recorded as failed, with their raw text.")
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(allow_null=True, help_text="A decimal; null when the endpoint is unpriced.")


class FlipRateSerializer(serializers.Serializer):
    pairs = serializers.IntegerField(help_text="Pairs asked in both orders.")
    flipped = serializers.IntegerField(help_text="Pairs whose two orders disagreed (recorded as a tie).")
    rate = serializers.FloatField(allow_null=True)


class SchemeFlipRateSerializer(FlipRateSerializer):
    scheme = serializers.CharField()


class FlipsSerializer(FlipRateSerializer):
    schemes = SchemeFlipRateSerializer(many=True)


class JudgeCallsSerializer(serializers.Serializer):
    requests = serializers.IntegerField(help_text="Requests in the ledger, in every project.")
    failed = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = serializers.CharField(allow_null=True)


class JudgeReportSerializer(serializers.Serializer):
    project = serializers.CharField()
    judge = serializers.CharField()
    account = serializers.CharField()
    kind = serializers.CharField()
    endpoint = serializers.CharField()
    model = serializers.CharField()
    computed_at = serializers.DateTimeField(help_text="When the agreement figures were computed.")
    fields = JudgeReportFieldSerializer(many=True, help_text="Fields the judge answered.")
    verdicts = JudgeVerdictsSerializer(help_text="In this project.")
    flips = FlipsSerializer()
    calls = JudgeCallsSerializer()


class JudgeReportApi(APIView):
    @extend_schema(tags=TAG, operation_id="projects_judges_report", responses=JudgeReportSerializer)
    def get(self, request: Request, name: str, judge: str) -> Response:
        """A judge against the project's people: per field its confusion against their majority,
        accuracy and κ with each person; the flip rate of its comparisons; failures, tokens and cost."""
        project = project_visible_get(user=request.user, name=name)
        if not permissions.can_view_report(request.user, project):
            raise PermissionDenied("judge reports are for the project's managers and reviewers")
        report = judge_report(project=project, judge=judge_get(name=judge))
        return Response(JudgeReportSerializer(report).data)
