"""The annotator's pages: their projects, a project's start page, and the annotate page.

Views are thin: a selector or service call, a permission check through
``annotation.permissions``, a template. The annotate page's script then
talks to the JSON API (``annotation/api``) for drafts, submission and skips.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseRedirect,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation import permissions
from annotation.api.serializers import ItemOutputSerializer
from annotation.assignment import NoItemAvailable, item_next
from annotation.exports import EXPORTS, STATUSES, annotations_export, get_export
from annotation.links import project_links, register_project_link
from annotation.models import Assignment, Project
from annotation.projects import project_config
from annotation.quality import project_quality as project_quality_report
from annotation.review_selectors import review_returned
from annotation.schemes import Scheme
from annotation.selectors import (
    ItemView,
    item_view,
    project_progress,
    project_visible_get,
    projects_with_progress,
)
from annotation.submissions import NotAssigned
from annotation.training import TrainingStatus, training_feedback, training_status
from trees.downloads import file_download


def home(request: HttpRequest) -> HttpResponseRedirect:
    """The site's root: your projects once signed in, the login page before."""
    return redirect("annotation:projects" if request.user.is_authenticated else "login")


def _forbidden(request: HttpRequest, message: str, project: Project | None = None) -> HttpResponse:
    return render(request, "annotation/forbidden.html", {"message": message, "project": project}, status=403)


@require_GET
@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    """The projects the user belongs to, with their own and the overall progress."""
    rows = projects_with_progress(user=request.user)
    return render(request, "annotation/project_list.html", {"rows": rows})


@require_http_methods(["GET", "POST"])
@login_required
def project_detail(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the project's instructions and progress. POST: lease the next item and go to it."""
    project = project_visible_get(user=request.user, name=name)
    if project.mode == Project.Mode.COLLECT:
        # Collection projects grow trees through tasks: their pages are annotation/workflow's.
        return redirect("workflow:picker", name=project.name)
    can_annotate = permissions.can_annotate(request.user, project)
    if request.method == "POST":
        if not can_annotate:
            return _forbidden(request, "You are not an annotator in this project.", project)
        try:
            assignment = item_next(project=project, user=request.user)
        except NoItemAvailable as nothing:
            progress = project_progress(project=project, user=request.user)
            context = {"project": project, "reason": nothing.reason, "message": nothing.message}
            return render(request, "annotation/nothing_left.html", context | {"progress": progress})
        return redirect("annotation:item", name=project.name, tree_id=assignment.tree_id)
    context = {
        "project": project,
        "progress": project_progress(project=project, user=request.user),
        "can_annotate": can_annotate,
        "can_manage": permissions.can_manage(request.user, project),
        "can_review": permissions.can_review(request.user, project),
        "links": project_links(request.user, project),
    }
    if permissions.can_export(request.user, project):
        context["export_form"] = ExportForm()
    return render(request, "annotation/project_detail.html", context)


class ExportForm(forms.Form):
    """What the project page's download asks: a format and which answers."""

    format = forms.ChoiceField(
        choices=[(name, f"{name}: {module.DESCRIPTION}") for name, module in EXPORTS.items()]
    )
    status = forms.ChoiceField(
        choices=[(name, selection.description) for name, selection in STATUSES.items()],
        initial="submitted",
        required=False,  # submitted, as everywhere else
    )


@require_GET
@login_required
def project_export(request: HttpRequest, name: str) -> HttpResponse:
    """The project's answers as a file (for those who may see everyone's): what export_annotations writes."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_export(request.user, project):
        return _forbidden(request, "Downloads are for the project's managers and reviewers.", project)
    form = ExportForm(request.GET)
    if not form.is_valid():
        problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        return HttpResponseBadRequest(
            f"cannot export: {problems}\n", content_type="text/plain; charset=utf-8"
        )
    format_name, status = form.cleaned_data["format"], form.cleaned_data["status"] or "submitted"
    options = {"name_annotators": True} if format_name in ("ccpe", "ccpe-hf") else {}
    lines = annotations_export(project=project, format_name=format_name, status=status, options=options)
    kind = get_export(format_name).FILE
    stem = project.name if status == "submitted" else f"{project.name}.{status}"
    return file_download(lines, kind=kind, filename=f"{stem}.{format_name}.{kind.extension}")


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
        return _forbidden(request, "This item is not assigned to you.", project)
    context = {
        "project": project,
        "item": item,
        # Work a reviewer sent back says why, on the page its annotator fixes it on.
        "returned": review_returned(assignment=item.assignment),
        "page_data": _annotate_page_data(item),
        # A training item says so, and where the annotator is in the training (annotation.training).
        "training": _training(item),
        "widget_scripts": _widget_files(project_config(project).schemes, "widget_script"),
        "widget_stylesheets": _widget_files(project_config(project).schemes, "widget_stylesheet"),
    }
    return render(request, "annotation/annotate.html", context)


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
        "item": ItemOutputSerializer(item).data,
        "schemes": [scheme.as_config() for scheme in project_config(project).schemes],
        "editable": item.editable,
        "urls": {
            "draft": reverse("api:item-draft", kwargs={"name": project.name, "tree_id": tree_id}),
            "submit": reverse("api:item-submit", kwargs={"name": project.name, "tree_id": tree_id}),
            "skip": reverse("api:item-skip", kwargs={"name": project.name, "tree_id": tree_id}),
        },
    } | _training_page_data(item)


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


@require_GET
@login_required
def project_quality(request: HttpRequest, name: str) -> HttpResponse:
    """Annotators' accuracy on gold items and their training, for the project's managers and reviewers."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_review(request.user, project):
        return _forbidden(request, "The quality page is for the project's managers and reviewers.", project)
    context = {"project": project, "report": project_quality_report(project=project)}
    return render(request, "annotation/quality.html", context)


@register_project_link
def quality_link(user: Any, project: Project) -> tuple[str, str] | None:
    """Managers and reviewers follow annotators' accuracy on gold items from the project's page."""
    if project.mode != Project.Mode.ANNOTATE or not permissions.can_review(user, project):
        return None
    return "Annotator quality (gold and training)", reverse(
        "annotation:quality", kwargs={"name": project.name}
    )
