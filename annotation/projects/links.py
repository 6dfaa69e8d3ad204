"""Links that apps built on annotation add to a project's page.

annotation never imports those apps (evaluation, say); they register a
function here when they start, and the page asks each one for its link.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotation.models import Project

ProjectLink = Callable[[AbstractBaseUser | AnonymousUser, Project], tuple[str, str] | None]

_LINKS: list[ProjectLink] = []


def register_project_link(link: ProjectLink) -> ProjectLink:
    """Add ``link(user, project) -> (label, url) | None`` to every project page."""
    if link not in _LINKS:
        _LINKS.append(link)
    return link


def project_links(user: AbstractBaseUser | AnonymousUser, project: Project) -> list[tuple[str, str]]:
    """The links ``user`` may follow from ``project``'s page, in registration order."""
    return [found for link in _LINKS if (found := link(user, project)) is not None]
