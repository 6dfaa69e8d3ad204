"""The links from a project's page to its rubric reports and its agreement figures."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.urls import reverse

from annotation import permissions
from annotation.models import Project
from annotation.projects.links import register_project_link


@register_project_link
def rubric_reports_link(user: AbstractBaseUser | AnonymousUser, project: Project) -> tuple[str, str] | None:
    """Reviewers and managers read a project's rubric reports."""
    if not permissions.can_review(user, project):
        return None
    return "Rubric reports", reverse("evaluation:project-rubrics", kwargs={"name": project.name})


@register_project_link
def agreement_link(user: AbstractBaseUser | AnonymousUser, project: Project) -> tuple[str, str] | None:
    """Agreement names every annotator's figures: for reviewers and managers, like the reports."""
    if not permissions.can_review(user, project):
        return None
    return "Agreement", reverse("evaluation:agreement", kwargs={"name": project.name})
