"""Reads of evaluation results for reports, downloads and the API.

Each selector says what it queries; none reads rows one by one. A report
costs one query for its results whatever their number (plus the rubric and
its versions), its statistics are computed in ``evaluation.reports``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, TextField
from django.db.models.functions import Cast
from django.http import Http404

from annotation.models import Project
from annotation.problems import Problem, ProblemsError
from evaluation.models import EvaluationResult, Rubric, RubricVersion
from evaluation.paths import JsonPath, PathError, parse_path, walk
from evaluation.reports import Report, Row, build_report, group_label
from evaluation.rubrics import RubricSpec
from evaluation.services import rubric_spec
from trees.formats.jsonstream import decode_stored

AUTO, HUMAN, COMBINED = (
    EvaluationResult.Source.AUTO,
    EvaluationResult.Source.HUMAN,
    EvaluationResult.Source.COMBINED,
)
BEST = "best"
# "best": per item, the combined result where people judged it, else the automatic one.
SOURCES = (BEST, AUTO, HUMAN, COMBINED)
MODEL = "model"


def rubric_get(*, name: str) -> Rubric:
    rubric = Rubric.objects.filter(name=name).first()
    if rubric is None:
        raise Http404("no such rubric")
    return rubric


@dataclass(frozen=True)
class ReportQuery:
    """What a report is over: a version, a source, and an optional grouping."""

    version: RubricVersion
    source: str
    group: str | None  # "model", a metadata path, or None
    group_path: JsonPath | None = None
    # Every version of the rubric, newest first, with its number of results in the project.
    versions: tuple[tuple[RubricVersion, int], ...] = ()

    @property
    def spec(self) -> RubricSpec:
        return rubric_spec(self.version)


def report_query_read(*, project: Project, rubric: Rubric, params: Mapping[str, Any]) -> ReportQuery:
    """Read ``version``, ``source`` and ``group`` from request parameters (two queries: the
    versions, and their result counts in ``project``).

    Without a version: the newest version with results in ``project``, else
    the newest. Raises ProblemsError naming the bad parameters; Http404 when
    the rubric has no version at all.
    """
    problems: list[Problem] = []
    versions = list(rubric.versions.order_by("-number"))
    if not versions:
        raise Http404("this rubric has no version yet")
    counts = dict(
        EvaluationResult.objects.filter(project=project, rubric_version__in=versions)
        .order_by()
        .values("rubric_version_id")
        .annotate(count=Count("pk"))
        .values_list("rubric_version_id", "count")
    )
    wanted = params.get("version") or ""
    version = None
    if wanted:
        version = next((v for v in versions if str(v.number) == str(wanted)), None)
        if version is None:
            numbers = ", ".join(str(v.number) for v in versions)
            problems.append(
                Problem("version", f'no version "{wanted}" of {rubric.name} (versions: {numbers})')
            )
    if version is None:
        version = next((v for v in versions if counts.get(v.pk)), versions[0])
    source = params.get("source") or BEST
    if source not in SOURCES:
        problems.append(Problem("source", f'"{source}" is not a source ({", ".join(SOURCES)})'))
        source = BEST
    group = params.get("group") or None
    path = None
    if group is not None and group != MODEL:
        try:
            path = parse_path(group)
        except PathError as error:
            problems.append(Problem("group", f"{error}; or group by model"))
        else:
            if path.root != "metadata":
                problems.append(
                    Problem("group", f'"{group}": group by model or a metadata path (metadata.key)')
                )
        if problems:
            group, path = None, None
    if problems:
        raise ProblemsError(problems)
    listed = tuple((v, counts.get(v.pk, 0)) for v in versions)
    return ReportQuery(version, source, group, path, listed)


def _results(project: Project, query: ReportQuery):
    results = EvaluationResult.objects.filter(project=project, rubric_version=query.version)
    if query.source == BEST:
        return results.filter(source__in=[AUTO, COMBINED])
    return results.filter(source=query.source)


def report_rows(*, project: Project, query: ReportQuery) -> list[Row]:
    """The results the report counts, one per item (and node or path): one query.

    The JSON columns come as text and are decoded with orjson: the ORM's
    per-row JSON converters would cost more than the rest of the report.
    """
    text = {
        "details_text": Cast("details", TextField()),
        "votes_text": Cast("votes", TextField()),
    }
    columns = ["tree_id", "node", "source", "score", "outcome", "details_text", "votes_text", "model_name"]
    if query.group_path is not None:
        text["metadata_text"] = Cast("tree__metadata", TextField())
        columns.append("metadata_text")
    chosen: dict[tuple[int, str], tuple] = {}
    for values in _results(project, query).order_by().annotate(**text).values_list(*columns):
        key = (values[0], values[1])
        if query.source == BEST and values[2] != COMBINED and key in chosen:
            continue
        chosen[key] = values
    rows = []
    for values in chosen.values():
        group = None
        if query.group == MODEL:
            group = values[7] or None
        elif query.group_path is not None:
            group = group_label(_walk(decode_stored(values[8]), query.group_path))
        votes = values[6]
        rows.append(
            Row(
                values[3],
                values[4],
                decode_stored(values[5]),
                group,
                decode_stored(votes) if votes != "{}" else None,
            )
        )
    return rows


def _walk(metadata: Any, path: JsonPath) -> Any:
    return walk(metadata if isinstance(metadata, dict) else {}, path.steps)


def report_build(*, project: Project, query: ReportQuery) -> Report:
    spec = query.spec
    rows = report_rows(project=project, query=query)
    return build_report(rows, spec.outcome_names, spec.keys, group_by=query.group)


def report_json(*, project: Project, rubric: Rubric, query: ReportQuery, report: Report) -> dict[str, Any]:
    """The report as the JSON download and the API give it."""
    return {
        "project": project.name,
        "rubric": rubric.name,
        "version": query.version.number,
        "source": query.source,
        "group_by": query.group,
        "overall": report.overall.as_json(),
        "groups": [{"group": name, **summary.as_json()} for name, summary in report.groups],
        "groups_left_out": report.groups_left_out,
    }


def report_csv_rows(report_data: dict[str, Any]) -> Iterator[list[Any]]:
    """The report in long form: ``group, metric, key, value`` (group "" is everything)."""
    yield ["group", "metric", "key", "value"]
    parts = [("", report_data["overall"])] + [(g["group"], g) for g in report_data["groups"]]
    for group, summary in parts:
        yield [group, "count", "", summary["count"]]
        yield [group, "mean_score", "", summary["mean_score"]]
        interval = summary["mean_score_ci95"] or [None, None]
        yield [group, "mean_score_ci95_low", "", interval[0]]
        yield [group, "mean_score_ci95_high", "", interval[1]]
        for outcome in summary["outcomes"]:
            yield [group, "outcome_count", outcome["name"], outcome["count"]]
            yield [group, "outcome_share", outcome["name"], round(outcome["share"], 6)]
        for rate in summary["pass_rates"]:
            yield [group, "pass_rate", rate["key"], None if rate["rate"] is None else round(rate["rate"], 6)]
        for bin_ in summary["histogram"]:
            yield [group, "histogram", f"{bin_['low']:.1f}-{bin_['high']:.1f}", bin_["count"]]
        for agreement in summary["agreement"]:
            yield [group, "agreement", agreement["key"], agreement["observed"]]


def results_query(*, project: Project, query: ReportQuery, outcome: str | None = None):
    """The stored results of ``query`` with their trees' ids, in item order (for downloads and the API)."""
    results = (
        _results(project, query)
        .select_related("tree")
        .defer("tree__metadata")  # only the tree's external id is shown
        .order_by("tree_id", "node", "source")
    )
    if outcome:
        results = results.filter(outcome=outcome)
    return results


def result_line(result: EvaluationResult) -> dict[str, Any]:
    """One result as ``evaluate -o`` writes it: id, node (if any), score, outcome, details, explanation."""
    line: dict[str, Any] = {"id": result.tree.external_id}
    if result.node:
        line["node"] = result.node
    line.update(
        {
            "score": result.score,
            "outcome": result.outcome,
            "details": result.details,
            "explanation": result.explanation,
        }
    )
    return line


def results_best(results: Iterator[EvaluationResult]) -> Iterator[EvaluationResult]:
    """With source "best": keep the combined result of a unit over its automatic one.

    ``results`` come ordered by tree, node and source ("auto" < "combined").
    """
    pending: EvaluationResult | None = None
    for result in results:
        if pending is not None and (pending.tree_id, pending.node) != (result.tree_id, result.node):
            yield pending
        pending = result
    if pending is not None:
        yield pending


RESULTS_PER_PAGE = 50


@dataclass(frozen=True)
class ResultFilter:
    """Which of a report's results to list: those with an outcome, or those where a criterion
    or gate holds (or not)."""

    outcome: str | None = None
    key: str | None = None
    holds: bool | None = None

    def describe(self) -> str:
        if self.key is not None:
            verdict = "holds" if self.holds else "does not hold" if self.holds is not None else "answered"
            return f"{self.key} {verdict}"
        if self.outcome is not None:
            return f"outcome {self.outcome}"
        return "all results"

    def params(self) -> dict[str, str]:
        params = {}
        if self.outcome is not None:
            params["outcome"] = self.outcome
        if self.key is not None:
            params["key"] = self.key
            if self.holds is not None:
                params["holds"] = "yes" if self.holds else "no"
        return params


def result_filter_read(*, query: ReportQuery, params: Mapping[str, Any]) -> ResultFilter:
    """The filter the results page was asked for, checked against the rubric version; a
    ``ProblemsError`` names the parameter that is not understood."""
    problems = []
    outcome = params.get("outcome") or None
    key = params.get("key") or None
    holds_text = params.get("holds") or None
    spec, number = query.spec, query.version.number
    if outcome is not None and outcome not in spec.outcome_names:
        problems.append(Problem("outcome", f'"{outcome}" is not an outcome of version {number}'))
    if key is not None and key not in spec.keys:
        problems.append(Problem("key", f'"{key}" is not a criterion or gate of version {number}'))
    holds = {"yes": True, "no": False, None: None}.get(holds_text, "bad")
    if holds == "bad":
        problems.append(Problem("holds", f'"{holds_text}": say yes or no'))
    if problems:
        raise ProblemsError(problems)
    return ResultFilter(outcome=outcome, key=key, holds=holds)


def results_listed(*, project: Project, query: ReportQuery, chosen: ResultFilter):
    """The results of ``query`` that ``chosen`` picks, with their trees, in item order, for a
    page of them (the caller paginates: a count and a page, two queries whatever their number).

    With source "best", an automatic result is left out where a combined one stands for it.
    """
    results = _results(project, query)
    if query.source == BEST:
        combined = EvaluationResult.objects.filter(
            project=project,
            rubric_version=query.version,
            source=COMBINED,
            tree=OuterRef("tree"),
            node=OuterRef("node"),
        )
        results = results.exclude(Q(source=AUTO) & Exists(combined))
    if chosen.outcome is not None:
        results = results.filter(outcome=chosen.outcome)
    if chosen.key is not None:
        if chosen.holds is None:
            results = results.filter(details__has_key=chosen.key)
        else:
            results = results.filter(**{f"details__{chosen.key}": chosen.holds})
    results = results.select_related("tree").defer("tree__metadata", "votes")
    return results.order_by("tree_id", "node", "source")
