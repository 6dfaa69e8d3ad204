"""Pages of rubric evaluation: a project's rubrics, a report per rubric, its downloads.

Thin views: a permission check through ``evaluation.permissions``, the
judges' answers brought up to date (``judgments_combine``), a selector, a
template. Charts are SVG drawn on the server: the report needs no JavaScript.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.dateparse import parse_datetime
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import project_config
from annotation.projects.selectors import project_visible_get
from evaluation import charts, permissions
from evaluation.agreement import charts as agreement_charts
from evaluation.agreement.project import agreement_current
from evaluation.judge_pages import judge_report_links, judges_section
from evaluation.models import EvaluationResult, Rubric
from evaluation.selectors import (
    BEST,
    SOURCES,
    ReportQuery,
    report_build,
    report_csv_rows,
    report_json,
    report_query_read,
    result_line,
    results_best,
    results_query,
    rubric_get,
)
from evaluation.services import judgments_combine
from trees.downloads import file_download
from trees.formats.records import CSV, JSONL
from trees.formats.spreadsheet import spreadsheet_lines

SOURCE_LABELS = {
    BEST: "best available: combined where people judged, automatic elsewhere",
    **dict(EvaluationResult.Source.choices),
}


def _forbidden(request: HttpRequest, project: Project) -> HttpResponse:
    message = "Reports are for the project's managers and reviewers."
    return render(request, "annotation/forbidden.html", {"message": message, "project": project}, status=403)


def _report_project(request: HttpRequest, name: str) -> Project | HttpResponse:
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_view_report(request.user, project):
        return _forbidden(request, project)
    return project


def report_rubric(request: HttpRequest, name: str, rubric: str) -> tuple[Project, Rubric] | HttpResponse:
    """The project and rubric a report page or download is about, the judges' answers brought
    up to date; or the refusal page for those who may not see reports."""
    project = _report_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    found = rubric_get(name=rubric)
    judgments_combine(project=project, rubric=found)
    return project, found


@require_GET
@login_required
def project_rubrics(request: HttpRequest, name: str) -> HttpResponse:
    """The rubrics a project is judged with (its rubric schemes) or has results of."""
    project = _report_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    linked = {
        getattr(scheme, "rubric_name", "")
        for scheme in project_config(project).schemes
        if scheme.annotation_type == "rubric"
    }
    evaluated = set(
        EvaluationResult.objects.filter(project=project)
        .values_list("rubric_version__rubric__name", flat=True)
        .distinct()
    )
    rubrics = Rubric.objects.filter(name__in=linked | evaluated).order_by("name")
    return render(request, "evaluation/project_rubrics.html", {"project": project, "rubrics": rubrics})


@require_GET
@login_required
def rubric_report(request: HttpRequest, name: str, rubric: str) -> HttpResponse:
    """Outcomes, mean score with its interval, pass rates and histogram; grouped side by side on request."""
    chosen = report_rubric(request, name, rubric)
    if isinstance(chosen, HttpResponse):
        return chosen
    project, found = chosen
    problems = []
    try:
        query = report_query_read(project=project, rubric=found, params=request.GET)
    except ProblemsError as error:
        problems = error.problems
        query = report_query_read(project=project, rubric=found, params={})
    report = report_build(project=project, query=query)
    spec = query.spec
    questions = {item.key: item.question for item in spec.checks}
    weights = {criterion.key: criterion.weight for criterion in spec.criteria}
    groups = [
        {
            "name": group,
            "summary": summary,
            "outcomes": charts.outcome_chart(summary, f"outcomes-{index}", f"Outcomes: {group}"),
            "pass_rates": charts.pass_rate_chart(summary, f"pass-rates-{index}", f"Pass rates: {group}"),
        }
        for index, (group, summary) in enumerate(report.groups)
    ]
    rules = {
        outcome.name: "otherwise" if index == len(spec.outcomes) - 1 else outcome.condition()
        for index, outcome in enumerate(spec.outcomes)
    }
    group_rates = [{key: rate for key, _, rate in summary.pass_rates} for _, summary in report.groups]
    context = {
        "project": project,
        "rubric": found,
        "spec": spec,
        "query": query,
        "report": report,
        "problems": problems,
        "outcome_rows": [
            (name, count, share, rules.get(name, "(not in this version)"))
            for name, count, share in report.overall.outcomes
        ],
        "versions": query.versions,
        "sources": [(source, SOURCE_LABELS[source]) for source in SOURCES],
        "pass_rows": [
            {
                "key": key,
                "question": questions.get(key, ""),
                "weight": weights.get(key),
                "passed": passed,
                "failed": report.overall.count - passed,
                "rate": rate,
                "by_group": [rates.get(key) for rates in group_rates],
            }
            for key, passed, rate in report.overall.pass_rates
        ],
        "outcome_chart": charts.outcome_chart(report.overall, "outcomes"),
        "histogram_chart": charts.histogram_chart(report.overall, "histogram"),
        "pass_rate_chart": charts.pass_rate_chart(report.overall, "pass-rates"),
        "interval_chart": charts.interval_chart(
            [("all", report.overall), *report.groups] if report.groups else [("all", report.overall)],
            "means",
        ),
        "groups": groups,
        "downloads": _downloads(query),
    }
    return render(request, "evaluation/report.html", context)


def _downloads(query: ReportQuery) -> str:
    """The query string the download links repeat, so they give what the page shows."""
    params = {"version": query.version.number, "source": query.source}
    if query.group:
        params["group"] = query.group
    return urlencode(params)


def _attachment(response: HttpResponse, filename: str) -> HttpResponse:
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


@require_GET
@login_required
def rubric_report_download(request: HttpRequest, name: str, rubric: str, fmt: str) -> HttpResponse:
    """The report's figures as JSON or CSV (``group, metric, key, value``)."""
    chosen = report_rubric(request, name, rubric)
    if isinstance(chosen, HttpResponse):
        return chosen
    project, found = chosen
    try:
        query = report_query_read(project=project, rubric=found, params=request.GET)
    except ProblemsError as error:
        return HttpResponse("\n".join(str(p) for p in error.problems), status=400, content_type="text/plain")
    data = report_json(
        project=project, rubric=found, query=query, report=report_build(project=project, query=query)
    )
    stem = f"{project.name}-{found.name}-v{query.version.number}-report"
    if fmt == "json":
        body = json.dumps(data, indent=2, ensure_ascii=False)
        return _attachment(HttpResponse(body, content_type="application/json"), f"{stem}.json")
    # Group names are metadata values anyone importing trees chose: no cell may run as a formula.
    return file_download(spreadsheet_lines(report_csv_rows(data)), kind=CSV, filename=f"{stem}.csv")


@require_GET
@login_required
def rubric_results_download(request: HttpRequest, name: str, rubric: str, fmt: str) -> HttpResponse:
    """One line per item (and node or path): JSONL as ``evaluate -o`` writes it, or CSV."""
    chosen = report_rubric(request, name, rubric)
    if isinstance(chosen, HttpResponse):
        return chosen
    project, found = chosen
    try:
        query = report_query_read(project=project, rubric=found, params=request.GET)
    except ProblemsError as error:
        return HttpResponse("\n".join(str(p) for p in error.problems), status=400, content_type="text/plain")
    results: Iterator[EvaluationResult] = results_query(project=project, query=query).iterator(
        chunk_size=2000
    )
    if query.source == BEST:
        results = results_best(results)
    stem = f"{project.name}-{found.name}-v{query.version.number}-results"
    if fmt == "jsonl":
        lines = (json.dumps(result_line(result), ensure_ascii=False) + "\n" for result in results)
        return file_download(lines, kind=JSONL, filename=f"{stem}.jsonl")
    keys = query.spec.keys

    def rows() -> Iterator[list[Any]]:
        yield ["id", "node", "source", "score", "outcome", *keys, "model_name", "explanation"]
        for result in results:
            flags = [int(bool(result.details.get(key))) for key in keys]
            yield [
                result.tree.external_id,
                result.node,
                result.source,
                result.score,
                result.outcome,
                *flags,
                result.model_name,
                result.explanation,
            ]

    # Tree ids, model names and explanations are other people's text: no cell may run as a formula.
    return file_download(spreadsheet_lines(rows()), kind=CSV, filename=f"{stem}.csv")


# Pairs listed under a field's matrix, those with the most units in common first; the JSON has them all.
PAIRS_LISTED = 50


@require_GET
@login_required
def project_agreement(request: HttpRequest, name: str) -> HttpResponse:
    """Agreement per scheme and field, with each pair of annotators: kept figures, unless answers changed."""
    project = _report_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    current = agreement_current(project)
    reports = judge_report_links(project, current.figures["judges"])
    context = {
        "project": project,
        "figures": current.figures,
        # Kept in the figures as ISO text; shown as a date and time.
        "computed_at": parse_datetime(current.figures["computed_at"]),
        "recomputed": current.recomputed,
        "judge_reports": sorted(reports.items()),
        "schemes": [
            _agreement_section(scheme, index, reports)
            for index, scheme in enumerate(current.figures["schemes"])
        ],
    }
    return render(request, "evaluation/agreement.html", context)


def _agreement_section(scheme: dict[str, Any], index: int, reports: dict[str, str]) -> dict[str, Any]:
    """A scheme's figures with their charts: a bar per field, a matrix per pair measure of each field."""
    fields = []
    for number, field in enumerate(scheme["fields"]):
        by_measure: dict[str, list[dict[str, Any]]] = {}
        for pair in field["pairs"]:
            by_measure.setdefault(pair["measure"], []).append(pair)
        matrices = []
        for position, (measure, pairs) in enumerate(by_measure.items()):
            chart_id = f"pairs-{index}-{number}-{position}"
            listed = sorted(pairs, key=lambda pair: (-pair["n_units"], pair["a"], pair["b"]))
            matrices.append(
                {
                    "measure": measure,
                    "heatmap": agreement_charts.pair_heatmap(pairs, chart_id, f"{measure}: {field['field']}"),
                    "pairs": listed[:PAIRS_LISTED],
                    "more": max(len(listed) - PAIRS_LISTED, 0),
                }
            )
        judges = judges_section(field["judges"], reports) if field.get("judges") else None
        fields.append({**field, "matrices": matrices, "judges": judges})
    chart = agreement_charts.headline_chart(scheme, f"scheme-{index}") if scheme["fields"] else None
    reference = _reference_section(scheme["reference"]) if scheme.get("reference") else None
    return {**scheme, "fields": fields, "chart": chart, "reference": reference}


def _reference_section(reference: dict[str, Any]) -> dict[str, Any]:
    """Each field's comparison with the reference as a table: a row per annotator, a column per measure."""
    fields = []
    for field in reference["fields"]:
        measures = [measure["measure"] for measure in field["measures"]]
        rows: dict[str, dict[str, Any]] = {}
        for result in field["annotators"]:
            row = rows.setdefault(result["annotator"], {"annotator": result["annotator"], "results": {}})
            row["results"][result["measure"]] = result
        listed = [
            {**row, "results": [row["results"].get(measure) for measure in measures]}
            for _, row in sorted(rows.items())
        ]
        fields.append({**field, "rows": listed})
    return {**reference, "fields": fields}
