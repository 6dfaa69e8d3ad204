"""The pages every project page starts from: the site's root, the list of one's projects,
and the refusal page the other groups' views share."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from annotation.models import Project
from annotation.projects.selectors import projects_with_progress


def home(request: HttpRequest) -> HttpResponseRedirect:
    """The site's root: your projects once signed in, the login page before."""
    return redirect("annotation:projects" if request.user.is_authenticated else "login")


def forbidden(request: HttpRequest, message: str, project: Project | None = None) -> HttpResponse:
    return render(request, "annotation/forbidden.html", {"message": message, "project": project}, status=403)


@require_GET
@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    """The projects the user belongs to, with their own and the overall progress."""
    rows = projects_with_progress(user=request.user)
    return render(request, "annotation/project_list.html", {"rows": rows})
