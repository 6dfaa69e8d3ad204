"""The reviewer's pages: the queue of submitted work, and one item's answers side by side.

Thin views over ``annotation.review.selectors`` and ``annotation.review.services``:
a decision is a plain form post (accept, or reject with a comment), redirected
back to the item on success and redrawn with the comment kept on refusal.
Managers change the item's gold from the same page (``review_gold``), each
change with its undo (``annotation.review.gold_undo``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import capfirst
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import permissions
from annotation.models import Assignment, Project, ProjectItem, Review
from annotation.problems import ProblemsError
from annotation.projects.config import project_config
from annotation.projects.selectors import project_visible_get
from annotation.quality.gold import GoldChanged, GoldState, gold_item_unmark, gold_restore
from annotation.review.gold_marking import NotGoldable, gold_from_work
from annotation.review.gold_undo import GoldUndo, undo_offer_drop, undo_offer_get, undo_offer_keep
from annotation.review.selectors import QUEUE_FILTERS, ReviewItem, gold_in_words, review_item, review_queue
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
    gold: bool = False,
) -> HttpResponse:
    """The item's page; after a refused decision (or, with ``gold``, gold change), with the reason
    on its column and the comment kept."""
    item = review_item(project=project, tree_id=tree_id, viewer=request.user)
    problem: dict[str, Any] = {}
    if refused is not None:
        try:
            about = int(sent.get("assignment", ""))
        except ValueError:
            about = 0  # shown above the columns
        problem = {
            "assignment": about,
            "message": refused[0],
            "comment": sent.get("comment", ""),
            "gold": gold,
        }
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
        "can_manage": permissions.can_manage(request.user, project),
        "gold_undo": _undo_offered(request, item),
    }
    return render(request, "annotation/review_item.html", context, status=refused[1] if refused else 200)


# -- the item's gold --------------------------------------------------------------------------------


class GoldChangeForm(forms.Form):
    change = forms.ChoiceField(choices=[("mark", "mark"), ("remove", "remove"), ("undo", "undo")])
    assignment = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    version = forms.IntegerField(required=False, min_value=1, max_value=MAX_VERSION)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("change") == "mark" and (data.get("assignment") is None or data.get("version") is None):
            raise forms.ValidationError("which answer to mark is missing")
        return data


@require_POST
@login_required
def review_gold(request: HttpRequest, name: str, tree_id: int) -> HttpResponse:
    """Managers only: make an annotator's answer the item's gold answer, make the item regular
    work again, or undo the last of these changes; back to the item's gold with the undo."""
    project = _reviewed_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    if not permissions.can_manage(request.user, project):
        context = {"message": "Gold answers are changed by the project's managers.", "project": project}
        return render(request, "annotation/forbidden.html", context, status=403)
    form = GoldChangeForm(request.POST)
    if not form.is_valid():
        message = "The change did not read: reload the page and try again."
        return _render_item(request, project, tree_id, refused=(message, 400), sent=form.data, gold=True)
    item = (
        ProjectItem.objects.select_related("project", "tree").filter(project=project, tree_id=tree_id).first()
    )
    if item is None:
        raise Http404("no such item in this project")
    change = form.cleaned_data["change"]
    if change == "undo":
        return _gold_undo(request, item)
    if change == "remove":
        before, after = gold_item_unmark(item=item)
        said = f"{item.tree.external_id} is regular work again: its expected answers are kept."
    else:
        refused_or_change = _gold_mark(request, item, form.cleaned_data)
        if isinstance(refused_or_change, HttpResponse):
            return refused_or_change
        before, after, said = refused_or_change
    if before == after:
        messages.info(request, "Nothing changed: that was already the item's gold.")
    else:
        undo = GoldUndo(before, after, said)
        undo_offer_keep(request.session, project_id=project.pk, tree_id=tree_id, undo=undo)
    return _to_gold(project, tree_id)


def _gold_mark(
    request: HttpRequest, item: ProjectItem, data: dict[str, Any]
) -> HttpResponse | tuple[GoldState, GoldState, str]:
    project, tree_id = item.project, item.tree_id
    assignment = (
        Assignment.objects.select_related("user")
        .filter(pk=data["assignment"], project=project, tree_id=tree_id, kind=Assignment.Kind.WORK)
        .first()
    )
    if assignment is None:
        raise Http404("no such work on this item")
    who = assignment.user.get_username()
    sent = {"assignment": assignment.pk}
    try:
        before, after = gold_from_work(assignment=assignment, version=data["version"])
    except NotGoldable as refused:
        message = f"{who}'s work: {refused}."
        return _render_item(request, project, tree_id, refused=(message, 400), sent=sent, gold=True)
    except StaleVersion as stale:
        message = (
            f"{who}'s work changed while you were looking at it (it is now at version {stale.current}): "
            "look at it again before you make it the gold answer."
        )
        return _render_item(request, project, tree_id, refused=(message, 409), sent=sent, gold=True)
    except ProblemsError as error:
        problems = "; ".join(str(problem) for problem in error.problems)
        message = f"{who}'s answer cannot be the gold answer: {problems}."
        return _render_item(request, project, tree_id, refused=(message, 400), sent=sent, gold=True)
    return before, after, f"{who}'s answer is now the gold answer of {item.tree.external_id}."


def _gold_undo(request: HttpRequest, item: ProjectItem) -> HttpResponse:
    project, tree_id = item.project, item.tree_id
    undo = undo_offer_get(request.session, project_id=project.pk, tree_id=tree_id)
    if undo is None:
        message = "There is no change of this item's gold to undo here: it is offered right after the change."
        return _render_item(request, project, tree_id, refused=(message, 409), sent={}, gold=True)
    try:
        gold_restore(item=item, state=undo.before, expected=undo.after)
    except GoldChanged:
        undo_offer_drop(request.session, project_id=project.pk, tree_id=tree_id)
        message = "Someone changed this item's gold since: nothing was undone. Look at it again."
        return _render_item(request, project, tree_id, refused=(message, 409), sent={}, gold=True)
    except ProblemsError as error:
        problems = "; ".join(str(problem) for problem in error.problems)
        message = (
            f"The earlier gold answer no longer fits the project's schemes: nothing was undone ({problems})."
        )
        return _render_item(request, project, tree_id, refused=(message, 400), sent={}, gold=True)
    undo_offer_drop(request.session, project_id=project.pk, tree_id=tree_id)
    messages.success(request, f"Undone: the gold of {item.tree.external_id} is back as it was.")
    return _to_gold(project, tree_id)


def _to_gold(project: Project, tree_id: int) -> HttpResponse:
    url = reverse("annotation:review-item", kwargs={"name": project.name, "tree_id": tree_id})
    return HttpResponseRedirect(url + "#gold")


def _undo_offered(request: HttpRequest, item: ReviewItem) -> dict[str, Any] | None:
    """The undo of the manager's last change of the item's gold, while nobody has changed it since."""
    undo = undo_offer_get(request.session, project_id=item.project.pk, tree_id=item.tree.pk)
    if undo is None or undo.after != item.gold:
        return None
    schemes = project_config(item.project).schemes
    return {"said": undo.said, "replaced": gold_in_words(schemes, undo.replaced)}
