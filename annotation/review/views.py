"""The reviewer's pages: the queue of submitted work, and one item's answers side by side.

Thin views over ``annotation.review.selectors`` and ``annotation.review.services``:
a decision is a plain form post (accept, or reject with a comment), redirected
back to the item on success and redrawn with the comment kept on refusal.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import capfirst
from django.views.decorators.http import require_GET, require_http_methods

from annotation import permissions
from annotation.models import Assignment, Project, Review
from annotation.projects.selectors import project_visible_get
from annotation.review.selectors import QUEUE_FILTERS, review_item, review_queue
from annotation.review.services import MAX_COMMENT_LENGTH, ReviewRefused, review_decide
from annotation.work.submissions import StaleVersion

# Versions are stored in 32-bit columns on PostgreSQL.
MAX_VERSION = 2**31 - 1


def _reviewed_project(request: HttpRequest, name: str) -> Project | HttpResponse:
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_review(request.user, project):
        message = "Reviewing is for the project's reviewers and managers."
        context = {"message": message, "project": project}
        return render(request, "annotation/forbidden.html", context, status=403)
    return project


class QueueFilterForm(forms.Form):
    status = forms.ChoiceField(
        choices=[(name, label) for name, (label, _) in QUEUE_FILTERS.items()], required=False
    )
    annotator = forms.CharField(required=False, max_length=150)
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)


@require_GET
@login_required
def review_list(request: HttpRequest, name: str) -> HttpResponse:
    """Items with submitted work, filtered by review status and annotator."""
    project = _reviewed_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    form = QueueFilterForm(request.GET)
    # A filter that does not read (a hand-edited URL) is dropped, not an error page.
    wanted = form.cleaned_data if form.is_valid() else {}
    queue = review_queue(
        project=project,
        status=wanted.get("status") or "pending",
        annotator=wanted.get("annotator") or "",
        page=wanted.get("page") or 1,
    )
    kept = {"status": queue.status} | ({"annotator": queue.annotator} if queue.annotator else {})
    context = {
        "project": project,
        "queue": queue,
        "filters": [(name, label, queue.counts[name]) for name, (label, _) in QUEUE_FILTERS.items()],
        "query": urlencode(kept),  # what the page links repeat
    }
    return render(request, "annotation/review_list.html", context)


class DecisionForm(forms.Form):
    assignment = forms.IntegerField(min_value=1, max_value=2**63 - 1)
    version = forms.IntegerField(min_value=1, max_value=MAX_VERSION)
    decision = forms.ChoiceField(choices=Review.Decision.choices)
    comment = forms.CharField(required=False, max_length=MAX_COMMENT_LENGTH)


@require_http_methods(["GET", "POST"])
@login_required
def review_item_page(request: HttpRequest, name: str, tree_id: int) -> HttpResponse:
    """GET: the item's answers, an annotator per column. POST: accept or reject one annotator's work."""
    project = _reviewed_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    if request.method == "GET":
        return _render_item(request, project, tree_id)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        return _render_item(request, project, tree_id, refused=(_form_problem(form), 400), sent=form.data)
    data = form.cleaned_data
    assignment = (
        Assignment.objects.select_related("project", "user", "tree")
        .filter(pk=data["assignment"], project=project, tree_id=tree_id)
        .first()
    )
    if assignment is None:
        raise Http404("no such work on this item")
    try:
        review_decide(
            reviewer=request.user,
            assignment=assignment,
            decision=data["decision"],
            comment=data["comment"],
            version=data["version"],
        )
    except ReviewRefused as refused:
        status = 403 if refused.code == "forbidden" else 400
        return _render_item(
            request, project, tree_id, refused=(f"{capfirst(refused.message)}.", status), sent=form.data
        )
    except StaleVersion as stale:
        message = (
            f"This work changed while you were looking at it (it is now at version {stale.current}): "
            "look at it again before you decide."
        )
        return _render_item(request, project, tree_id, refused=(message, 409), sent=form.data)
    who, item = assignment.user.get_username(), assignment.tree.external_id
    if data["decision"] == Review.Decision.ACCEPTED:
        messages.success(request, f"Accepted {who}'s work on {item}.")
    else:
        messages.success(request, f"Sent {item} back to {who} with your comment.")
    return redirect("annotation:review-item", name=project.name, tree_id=tree_id)


def _form_problem(form: DecisionForm) -> str:
    if "comment" in form.errors:
        return f"The comment is too long (at most {MAX_COMMENT_LENGTH:,} characters)."
    return "The decision did not read: reload the page and decide again."


def _render_item(
    request: HttpRequest,
    project: Project,
    tree_id: int,
    *,
    refused: tuple[str, int] | None = None,
    sent: Any = None,
) -> HttpResponse:
    """The item's page; after a refused decision, with the reason on its column and the comment kept."""
    item = review_item(project=project, tree_id=tree_id, viewer=request.user)
    problem: dict[str, Any] = {}
    if refused is not None:
        try:
            about = int(sent.get("assignment", ""))
        except ValueError:
            about = 0  # shown above the columns
        problem = {"assignment": about, "message": refused[0], "comment": sent.get("comment", "")}
    next_url = ""
    if item.next_tree_id is not None:
        next_url = reverse(
            "annotation:review-item", kwargs={"name": project.name, "tree_id": item.next_tree_id}
        )
    context = {
        "project": project,
        "item": item,
        "problem": problem,
        "reviewer_id": request.user.pk,
        "max_comment": MAX_COMMENT_LENGTH,
        "next_url": next_url,
    }
    return render(request, "annotation/review_item.html", context, status=refused[1] if refused else 200)
