"""The annotator's pages: their projects, a project's start page, My work, and the annotate page.

Views are thin: a selector or service call, a permission check through
``annotation.permissions``, a template. The annotate page's script then
talks to the JSON API (``annotation/api``) for drafts, submission and skips.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import (
    HttpRequest,
    HttpResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods

from annotation import permissions
from annotation.exports.views import ExportForm
from annotation.models import Assignment, Project
from annotation.projects.config import project_config
from annotation.projects.links import project_links
from annotation.projects.selectors import project_progress, project_visible_get
from annotation.projects.views import forbidden
from annotation.quality.training import TrainingStatus, training_feedback, training_status
from annotation.schemes import Scheme
from annotation.work.assignment import NoItemAvailable, item_lease
from annotation.work.item_json import item_data
from annotation.work.my_work import MY_WORK_FILTERS, my_work, my_work_neighbours
from annotation.work.selectors import ItemView, item_view, leased_item_view, review_returned
from annotation.work.submissions import NotAssigned
from annotation.work.suggestions import item_suggestions_data


@require_http_methods(["GET", "POST"])
@login_required
def project_detail(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the project's instructions and progress. POST: lease the next item and answer with
    its annotate page.

    The page comes in this answer rather than behind a redirect: the redirect's round trip was
    a third of the annotator's requests and a quarter of their CPU (bench/page_cycle.py). The
    page's script then shows the item's own address (``urls.page``, through
    ``history.replaceState``), so a reload or a bookmark asks for that item with a GET.
    """
    project = project_visible_get(user=request.user, name=name)
    if project.mode == Project.Mode.COLLECT:
        # Collection projects grow trees through tasks: their pages are annotation.collection's.
        return redirect("collection:picker", name=project.name)
    can_annotate = permissions.can_annotate(request.user, project)
    if request.method == "POST":
        if not can_annotate:
            return forbidden(request, "You are not an annotator in this project.", project)
        try:
            lease = item_lease(project=project, user=request.user)
        except NoItemAvailable as nothing:
            progress = project_progress(project=project, user=request.user)
            context = {"project": project, "reason": nothing.reason, "message": nothing.message}
            return render(request, "annotation/nothing_left.html", context | {"progress": progress})
        return _annotate_page(request, leased_item_view(project=project, user=request.user, lease=lease))
    context = {
        "project": project,
        "progress": project_progress(project=project, user=request.user),
        "can_annotate": can_annotate,
        "can_manage": permissions.can_manage(request.user, project),
        "can_review": permissions.can_review(request.user, project),
        "links": project_links(request.user, project),
    }
    if permissions.can_export(request.user, project):
        context["export_form"] = ExportForm(project=project)
    return render(request, "annotation/project_detail.html", context)


class MyWorkFilterForm(forms.Form):
    status = forms.ChoiceField(
        choices=[(name, label) for name, (label, _) in MY_WORK_FILTERS.items()], required=False
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)


@require_GET
@login_required
def my_work_page(request: HttpRequest, name: str) -> HttpResponse:
    """The signed-in annotator's items in the project, newest activity first, filtered by status."""
    project = project_visible_get(user=request.user, name=name)
    if project.mode == Project.Mode.COLLECT:
        return redirect("collection:picker", name=project.name)
    form = MyWorkFilterForm(request.GET)
    # A filter that does not read (a hand-edited URL) is dropped, not an error page.
    wanted = form.cleaned_data if form.is_valid() else {}
    work = my_work(
        project=project, user=request.user, status=wanted.get("status") or "all", page=wanted.get("page") or 1
    )
    context = {
        "project": project,
        "work": work,
        "filters": [(name, label, work.counts[name]) for name, (label, _) in MY_WORK_FILTERS.items()],
        "status_label": MY_WORK_FILTERS[work.status][0],
        "can_annotate": permissions.can_annotate(request.user, project),
    }
    return render(request, "annotation/my_work.html", context)


@require_GET
@login_required
def item_annotate(request: HttpRequest, name: str, tree_id: int) -> HttpResponse:
    """The annotate page of the user's own item; anyone else's is refused.

    Managers and reviewers are refused too unless the item is theirs as
    annotators: this page only ever shows its viewer's own answers.
    """
    project = project_visible_get(user=request.user, name=name)
    try:
        item = item_view(project=project, tree_id=tree_id, user=request.user, with_messages=True)
    except NotAssigned:
        return forbidden(request, "This item is not assigned to you.", project)
    return _annotate_page(request, item)


def _annotate_page(request: HttpRequest, item: ItemView) -> HttpResponse:
    """The annotate page of ``item``, the viewer's own (``item_annotate``; the hand-out's answer)."""
    project = item.project
    # A judge's suggestions, when the project shows them on this item now (annotation.work.suggestions).
    page_data = _annotate_page_data(item) | _suggestions_page_data(item)
    context = {
        "project": project,
        "item": item,
        # Work a reviewer sent back says why, on the page its annotator fixes it on.
        "returned": review_returned(assignment=item.assignment),
        # Previous and Next walk the annotator's My work (annotation.work.my_work).
        "neighbours": my_work_neighbours(assignment=item.assignment),
        "page_data": page_data,
        "page_data_script": _json_script(page_data, "annotate-data"),
        # A training item says so, and where the annotator is in the training (annotation.quality.training).
        "training": _training(item),
        "widget_scripts": _widget_files(project_config(project).schemes, "widget_script"),
        "widget_stylesheets": _widget_files(project_config(project).schemes, "widget_stylesheet"),
        # Spans are offsets into the text: with a span scheme, messages show as plain text.
        "span_mode": any(scheme.annotation_type == "span" for scheme in project_config(project).schemes),
        "conversation_details": _conversation_details(project_config(project).schemes, item.tree.metadata),
    }
    return render(request, "annotation/annotate.html", context)


def _conversation_details(schemes: list[Scheme], metadata: Any) -> list[tuple[str, str | None]]:
    """The tree's metadata the schemes show beside the conversation (a rubric's judges need
    what its questions are about), each key once, read-only."""
    details: dict[str, str | None] = {}
    for scheme in schemes:
        for key, text in scheme.metadata_shown(metadata if isinstance(metadata, dict) else {}):
            details.setdefault(key, text)
    return list(details.items())


def _json_script(data: Any, element_id: str) -> SafeString:
    """What Django's ``json_script`` filter writes, with its escaping done by ``str.replace``:
    the filter's ``str.translate`` took 0.2 s of a 1,000-message tree's page, whose data holds
    every message's text and rendered HTML (bench/annotate_page.py)."""
    text = json.dumps(data, cls=DjangoJSONEncoder)
    text = text.replace("&", "\\u0026").replace("<", "\\u003C").replace(">", "\\u003E")
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))


def _widget_files(schemes: list[Scheme], attribute: str) -> list[str]:
    """The extra widget files the page needs, once each, for its schemes and node schemes:
    their ``widget_script`` or their ``widget_stylesheet`` files."""
    scripts: list[str] = []
    for scheme in schemes:
        for kind in (scheme, getattr(scheme, "node_scheme", None)):
            script = getattr(kind, attribute, None)
            if script and script not in scripts:
                scripts.append(script)
    return scripts


def _annotate_page_data(item: ItemView) -> dict[str, Any]:
    """What the page script starts from: the item exactly as GET item gives it, the schemes and the URLs."""
    project, tree_id = item.project, item.tree.pk
    return {
        # The tree's messages come in here too: the script draws the rows (with
        # textContent), which for a 1,000-message tree is ten times cheaper
        # than rendering them through the template engine.
        "item": item_data(item),
        "schemes": [scheme.as_config() for scheme in project_config(project).schemes],
        "editable": item.editable,
        # Editable, but behind the page's Edit button (selectors.ItemView.opens_read_only).
        "read_only": item.opens_read_only,
        "urls": {
            # Where the page is: the hand-out answers a POST to the project's page with it.
            "page": reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id}),
            "draft": reverse("api:item-draft", kwargs={"name": project.name, "tree_id": tree_id}),
            "submit": reverse("api:item-submit", kwargs={"name": project.name, "tree_id": tree_id}),
            "skip": reverse("api:item-skip", kwargs={"name": project.name, "tree_id": tree_id}),
        },
    } | _training_page_data(item)


def _suggestions_page_data(item: ItemView) -> dict[str, Any]:
    """The judge's suggestions (one query; none, and no query, in a project without them)."""
    suggestions = item_suggestions_data(project=item.project, assignment=item.assignment)
    return {"suggestions": suggestions} if suggestions is not None else {}


def _training(item: ItemView) -> TrainingStatus | None:
    if item.assignment.kind != Assignment.Kind.TRAINING:
        return None
    return training_status(project=item.project, user=item.assignment.user_id)


def _training_page_data(item: ItemView) -> dict[str, Any]:
    """A training item is closed once submitted, and shows its feedback again when revisited."""
    assignment = item.assignment
    if assignment.kind != Assignment.Kind.TRAINING:
        return {}
    if assignment.status != Assignment.Status.SUBMITTED:
        return {"training": True}
    return {
        "training": True,
        "editable": False,
        "feedback": training_feedback(project=item.project, assignment=assignment),
    }
