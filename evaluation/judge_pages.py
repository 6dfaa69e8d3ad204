"""Model judges on the pages: their part of the agreement page, and a judge's report.

Thin, like ``evaluation.views``: a permission check, a selector
(``evaluation.judge_reports``), a template. The agreement page shows each field's judges
beside the people (``judges_section``) and links each judge to its report; the report is
for the same people as agreement (the project's managers and reviewers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.dateparse import parse_datetime
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET

from annotation.models import Annotation, Project
from annotation.projects.selectors import project_visible_get
from evaluation import permissions
from evaluation.judge_reports import judge_get, judge_report
from evaluation.llm.models import Judge, JudgeVerdict

# People listed beside each judge on the agreement page, those with the most units in common first;
# the figures (the API, the command's --json, the judge's report) have them all.
PEOPLE_LISTED = 50
POSITION_TEXT = {
    "below": "below the people's range",
    "within": "within the people's range",
    "above": "above the people's range",
}


def judge_report_links(project: Project, accounts: Sequence[str]) -> dict[str, str]:
    """Each judge account's report page, for the judges that still exist (one query, none without judges)."""
    if not accounts:
        return {}
    found = Judge.objects.filter(user__username__in=accounts).values_list("user__username", "name")
    return {account: reverse("evaluation:judge-report", args=[project.name, name]) for account, name in found}


def judge_report_admin_links(judge: Judge) -> SafeString | str:
    """The judge's admin page's links: its report in each project it has answered or judged in."""
    answered = Annotation.objects.filter(user=judge.user).values("project")
    judged = JudgeVerdict.objects.filter(judge=judge).values("project")
    projects = Project.objects.filter(Q(pk__in=answered) | Q(pk__in=judged)).order_by("name")
    links = [
        (reverse("evaluation:judge-report", args=[project.name, judge.name]), project.name)
        for project in projects
    ]
    if not links:
        return "no answers in any project yet"
    return format_html_join(", ", '<a href="{}">{}</a>', links)


def label_shown(label: Any) -> str:
    """A label as the pages print it: yes or no for a rubric criterion's answer."""
    if isinstance(label, bool):
        return "yes" if label else "no"
    return str(label)


def judges_section(judges: dict[str, Any], reports: dict[str, str]) -> dict[str, Any]:
    """A field's judges as the agreement page shows them: a row per judge, and the matrix of coders."""
    rows = [
        {
            **entry,
            "humans": sorted(entry["humans"], key=lambda human: (-human["n_units"], human["human"]))[
                :PEOPLE_LISTED
            ],
            "more": max(len(entry["humans"]) - PEOPLE_LISTED, 0),
            "report": reports.get(entry["judge"]),
            "position_text": POSITION_TEXT.get(entry["position"] or "", "no range to compare with"),
        }
        for entry in judges["judges"]
    ]
    matrix = judges["matrix"]
    if matrix is not None:
        matrix = {
            **matrix,
            "rows": [
                {**coder, "cells": cells}
                for coder, cells in zip(matrix["coders"], matrix["rows"], strict=True)
            ],
        }
    return {**judges, "rows": rows, "matrix": matrix}


@require_GET
@login_required
def judge_report_page(request: HttpRequest, name: str, judge: str) -> HttpResponse:
    """A judge against the project's people: confusion against their majority, flips, failures, cost."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_view_report(request.user, project):
        message = "Judge reports are for the project's managers and reviewers."
        context = {"message": message, "project": project}
        return render(request, "annotation/forbidden.html", context, status=403)
    found = judge_get(name=judge)
    report = judge_report(project=project, judge=found)
    fields = [_field(field) for field in report["fields"]]
    context = {
        "project": project,
        "judge": found,
        "report": report,
        "fields": fields,
        "computed_at": parse_datetime(report["computed_at"]),  # ISO text in the report
    }
    return render(request, "evaluation/judge_report.html", context)


def _field(field: dict[str, Any]) -> dict[str, Any]:
    """A field of the report with its confusion table as rows the template reads."""
    majority = field["majority"]
    confusion = None
    if majority is not None:
        labels = [label_shown(label) for label in majority["labels"]]
        confusion = {
            "labels": labels,
            "rows": [
                {"label": label, "counts": counts, "total": sum(counts)}
                for label, counts in zip(labels, majority["confusion"], strict=True)
            ],
            "totals": [sum(column) for column in zip(*majority["confusion"], strict=True)]
            if majority["confusion"]
            else [],
        }
    position = POSITION_TEXT.get(field["position"] or "", "no range to compare with")
    return {**field, "confusion": confusion, "position_text": position}
