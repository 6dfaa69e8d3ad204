"""An annotator's answer made an item's gold answer, from the review page.

The manager picks the answer they are looking at; it is checked and
normalised by the same gold service as the admin, the API and ``import_gold``
(``annotation.quality.gold``), at the version the manager saw (work changed
since is refused, as a review decision is). The gold before and after are
returned so the page can offer the undo (``annotation.quality.gold.gold_restore``).
"""

from __future__ import annotations

from django.db import transaction
from django.http import Http404

from annotation.models import Annotation, Assignment, ProjectItem
from annotation.projects.config import project_config
from annotation.quality.gold import GoldState, gold_item_set
from annotation.work.submissions import StaleVersion


class NotGoldable(Exception):
    """The work cannot be an item's gold answer (it is not submitted); the message says why."""


def gold_from_work(*, assignment: Assignment, version: int) -> tuple[GoldState, GoldState]:
    """Make ``assignment``'s answers, at the ``version`` the manager saw, its item's gold answers:
    the gold before and after. The item's explanation is kept (it is the manager's own text).

    Raises NotGoldable (work not submitted), StaleVersion (it changed since) and
    ProblemsError (no answer, or one the project's schemes refuse).
    """
    with transaction.atomic():
        # The work first, then the item: the order a submission takes them in.
        status, current = (
            Assignment.objects.select_for_update()
            .filter(pk=assignment.pk)
            .values_list("status", "version")
            .get()
        )
        if current != version:
            raise StaleVersion(current)
        if status != Assignment.Status.SUBMITTED:
            raise NotGoldable("only submitted work can be the gold answer")
        item = (
            ProjectItem.objects.select_for_update(of=("self",))
            .select_related("project")
            .filter(project_id=assignment.project_id, tree_id=assignment.tree_id)
            .first()
        )
        if item is None:
            raise Http404("no such item in this project")
        # Answers to schemes the project no longer has stay out: they could not be scored.
        names = {scheme.name for scheme in project_config(item.project).schemes}
        answers = {
            scheme: payload
            for scheme, payload in Annotation.objects.filter(
                project_id=assignment.project_id, tree_id=assignment.tree_id, user_id=assignment.user_id
            ).values_list("scheme", "payload")
            if scheme in names
        }
        before = GoldState.of(item)
        who = assignment.user.get_username()
        gold_item_set(item=item, answers=answers, explanation=item.gold_explanation, origin=f"{who}'s answer")
        return before, GoldState.of(item)
