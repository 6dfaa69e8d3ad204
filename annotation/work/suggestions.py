"""A judge's suggestions on the annotate page (the project's ``suggestions:``), and what each
human answer records about them.

The suggestion for an item is the judge account's submitted answer to it, scheme by scheme:
read in one query, and only for projects with the option, so an annotator of any other
project is never shown one and their page costs what it did. ``show: before`` puts it on the
page while the annotator answers; ``show: after`` only once they have submitted the item, so
their answer is their own. Gold checks and training items never show one: they measure the
annotator against known answers. The judge's answers are never handed out as anyone's
work: an annotator's item carries their own answers only (``selectors.item_view``), and the
judge's reach them only here, marked as a suggestion.

Each answer written keeps ``Annotation.suggestion`` (``suggestion_mark``): whether a
suggestion was visible when it was made, and whether the annotator copied it in.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q

from annotation.models import Annotation, Assignment, Project
from annotation.projects.config import ProjectConfig, project_config
from annotation.projects.suggestion_config import JUDGE_PREFIX
from annotation.schemes.answer_text import answer_text

Mark = Annotation.Suggestion


def item_suggestions(
    *, project: Project, tree_id: int, config: ProjectConfig | None = None
) -> dict[str, Any]:
    """The judge's submitted answers to the item, by scheme name (one query; none, and no query,
    for a project without suggestions)."""
    config = config or project_config(project)
    if not config.suggestions.enabled:
        return {}
    return _answers(project, tree_id, config)[0]


def _answers(
    project: Project, tree_id: int, config: ProjectConfig, annotator: int | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The judge's submitted answers to the item by scheme, and ``annotator``'s (any status),
    in one query."""
    judge = get_user_model().objects.filter(username=config.suggestions.source).values("pk")[:1]
    whose = Q(user__in=judge, status=Annotation.Status.SUBMITTED)
    if annotator is not None:
        whose |= Q(user_id=annotator)
    rows = Annotation.objects.filter(
        whose, project=project, tree_id=tree_id, scheme__in=[scheme.name for scheme in config.schemes]
    ).values_list("user_id", "scheme", "payload")
    suggested: dict[str, Any] = {}
    mine: dict[str, Any] = {}
    for user_id, scheme, payload in rows:
        (mine if user_id == annotator else suggested)[scheme] = payload
    return suggested, mine


def suggestions_shown(*, assignment: Assignment, config: ProjectConfig) -> bool:
    """Whether the annotator may see the suggestions on this item now: the project has them,
    the item is real work, and (``show: after``) they have submitted it (once: work a reviewer
    sent back has been seen with its suggestion, and keeps it)."""
    show = config.suggestions.show
    if not config.suggestions.enabled or assignment.kind != Assignment.Kind.WORK:
        return False
    return show == "before" or assignment.submitted_at is not None


def suggestions_data(
    *, config: ProjectConfig, suggested: dict[str, Any], mine: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What the page shows: who suggests (the judge's name), when, and each scheme's answer
    with its words (``answer_text``), in the config's order; with ``mine`` (shown after
    answering), the annotator's own answer in words beside it (``yours``)."""
    source = config.suggestions.source
    return {
        "from": source,
        "judge": source.removeprefix(JUDGE_PREFIX),
        "show": config.suggestions.show,
        "schemes": [
            {
                "scheme": scheme.name,
                "description": getattr(scheme, "description", "") or scheme.name,
                "payload": suggested[scheme.name],
                "text": answer_text(scheme, suggested[scheme.name]),
            }
            | ({"yours": answer_text(scheme, mine.get(scheme.name))} if mine is not None else {})
            for scheme in config.schemes
            if scheme.name in suggested
        ],
    }


def item_suggestions_data(*, project: Project, assignment: Assignment) -> dict[str, Any] | None:
    """The page's suggestions for the annotator's item, or none (no query when there can be none)."""
    config = project_config(project)
    if not suggestions_shown(assignment=assignment, config=config):
        return None
    if config.suggestions.show == "after":
        # Shown to compare: the annotator's answers beside the judge's, read with them.
        suggested, mine = _answers(project, assignment.tree_id, config, assignment.user_id)
        return suggestions_data(config=config, suggested=suggested, mine=mine)
    suggested = item_suggestions(project=project, tree_id=assignment.tree_id, config=config)
    return suggestions_data(config=config, suggested=suggested)


def submitted_suggestions_data(*, project: Project, assignment: Assignment) -> dict[str, Any] | None:
    """What a submission answers with: the suggestions, when the project shows them only after
    answering (the page shows them then); none, and no query, otherwise."""
    if project_config(project).suggestions.show != "after":
        return None
    return item_suggestions_data(project=project, assignment=assignment)


def suggestion_mark(
    *, show: str, suggested: bool, taken: bool, seen: bool, changed: bool, before: str
) -> str:
    """What an answer written now records (``Annotation.Suggestion``).

    ``suggested``: the judge answered this scheme; ``taken``: the annotator copied it in
    (``show: before`` only); ``seen``: the item was submitted before this write, if only before
    a reviewer sent it back (so, with ``show: after``, the suggestion has been shown);
    ``changed``: this write changes the answer; ``before``: what the answer recorded until now.
    A mark saying the suggestion was copied, or seen before a change, stays.
    """
    if not suggested:
        return before
    if show == "before":
        return Mark.BEFORE_TAKEN if taken or before == Mark.BEFORE_TAKEN else Mark.BEFORE
    if before == Mark.AFTER_SEEN or (seen and changed):
        return Mark.AFTER_SEEN
    return Mark.AFTER
