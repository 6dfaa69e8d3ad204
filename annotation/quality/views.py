"""The quality page: annotators' accuracy on gold items and their training, and its link
from the project's page."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotation import permissions
from annotation.models import Project
from annotation.projects.links import register_project_link
from annotation.projects.selectors import project_visible_get
from annotation.projects.views import forbidden
from annotation.quality.report import project_quality as project_quality_report


@require_GET
@login_required
def project_quality(request: HttpRequest, name: str) -> HttpResponse:
    """Annotators' accuracy on gold items and their training, for the project's managers and reviewers."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_review(request.user, project):
        return forbidden(request, "The quality page is for the project's managers and reviewers.", project)
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
