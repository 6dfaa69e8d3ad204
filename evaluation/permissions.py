"""Who may see evaluation reports and run evaluations: decided by annotation's permissions.

Reports show every judge's verdicts, so they are for the people who may see
everyone's answers (managers, reviewers, admins); running the automatic
checks changes stored results, so it is for managers and admins.
"""

from __future__ import annotations

from annotation import permissions
from annotation.models import Membership, Project
from annotation.permissions import User


def can_view_report(user: User, project: Project) -> bool:
    return permissions.can_see_all_annotations(user, project)


def can_evaluate(user: User, project: Project) -> bool:
    return permissions.can_manage(user, project)


def can_read_rubrics(user: User) -> bool:
    """Rubric definitions (criteria, checks, outcomes): staff, and managers and reviewers of any project."""
    if not user.is_authenticated:
        return False
    if user.is_staff or permissions.is_admin(user):
        return True
    roles = (Membership.Role.MANAGER, Membership.Role.REVIEWER)
    return Membership.objects.filter(user=user, role__in=roles).exists()


def can_save_rubric(user: User, *, creating: bool) -> bool:
    """Rubrics are shared by every project: saving one is for admins, and staff with the
    admin's permission to add (a new rubric) or change (a new version) them."""
    if not user.is_authenticated:
        return False
    if permissions.is_admin(user):
        return True
    return user.is_staff and user.has_perm(
        "evaluation.add_rubric" if creating else "evaluation.change_rubric"
    )
