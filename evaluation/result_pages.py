"""The page behind a report's figures: the conversations with an outcome, or where a criterion
holds or fails, a page at a time, each leading to the item on the review page.

Thin, like ``evaluation.views``: the same permission (the project's managers and reviewers),
the same report query (version, source), a selector, a template.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.problems import ProblemsError
from evaluation.selectors import (
    RESULTS_PER_PAGE,
    report_query_read,
    result_filter_read,
    results_listed,
)
from evaluation.views import report_rubric


@require_GET
@login_required
def rubric_results(request: HttpRequest, name: str, rubric: str) -> HttpResponse:
    """The results a report line counts (``?outcome=`` or ``?key=&holds=yes|no``), in item order."""
    chosen = report_rubric(request, name, rubric)
    if isinstance(chosen, HttpResponse):
        return chosen
    project, found = chosen
    try:
        query = report_query_read(project=project, rubric=found, params=request.GET)
        chosen = result_filter_read(query=query, params=request.GET)
    except ProblemsError as error:
        context = {"project": project, "rubric": found, "problems": error.problems}
        return render(request, "evaluation/results.html", context, status=400)
    page = Paginator(results_listed(project=project, query=query, chosen=chosen), RESULTS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    spec = query.spec
    failing = {result.pk: [key for key in spec.keys if not result.details.get(key)] for result in page}
    kept = {"version": query.version.number, "source": query.source, **chosen.params()}
    context = {
        "project": project,
        "rubric": found,
        "spec": spec,
        "query": query,
        "chosen": chosen,
        "page": page,
        "rows": [(result, failing[result.pk]) for result in page],
        "kept": urlencode(kept),
        "report_query": urlencode({"version": query.version.number, "source": query.source}),
    }
    return render(request, "evaluation/results.html", context)
