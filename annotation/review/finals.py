"""Adjudication: an item's final answer, made from its annotators' answers.

A reviewer or manager takes one annotator's answer whole, takes fields
(``annotation.review.merging``: a scheme, a node's rating, the path, a
comparison, a span) from different annotators, or edits a field's value.
Fields every annotator agrees on are taken without a choice; with
``quality.adjudication.auto: majority`` so are fields ``min_agreement`` of them
agree on (``auto:majority``), and an item whose every field does is final
without a person (``finals_auto``, run as an item's submissions complete and by
``adjudicate_auto``).

The final answer is checked by the schemes as a submission is, saved at the
version the adjudicator saw (an older one is refused: ``StaleVersion``), kept
with every earlier version (``FinalAnswerRevision``), written to the audit
log, and announced (``signals.item_finalised``) once committed.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from annotation import permissions
from annotation.models import FinalAnswer, FinalAnswerRevision, Project, ProjectItem
from annotation.problems import Problems, ProblemsError, describe, join
from annotation.projects.config import ProjectConfig, project_config
from annotation.quality.gold import gold_answers_check, gold_item_set, needs_shape
from annotation.review.adjudication import item_votes, scheme_kinds, submitted_columns
from annotation.review.merging import EDITED, FieldVotes, Merged, auto_majority, fields_answers, prefilled
from annotation.review.services import ReviewRefused
from annotation.review.signals import item_finalised
from annotation.work.submissions import StaleVersion
from trees.audit import Target, audit_record
from trees.models import ConversationTree
from trees.selectors import tree_shape


def final_save(
    *,
    project: Project,
    tree_id: int,
    by: AbstractBaseUser,
    version: int,
    take: str | None = None,
    choices: Mapping[str, Any] | None = None,
) -> FinalAnswer:
    """Save ``tree_id``'s final answer as ``by`` decides it, at the ``version`` they saw (0: none yet).

    ``take`` names an annotator whose whole answer is the start; ``choices``
    settle fields one by one: ``{"from": username}`` or ``{"value": ...}`` (an
    edit; null leaves the field out). A field annotators disagree on must be
    settled one way or the other. Raises ReviewRefused (not a reviewer or
    manager), StaleVersion, ProblemsError (a choice or the answer it makes is
    wrong, each problem at its field).
    """
    if not permissions.can_review(by, project):
        raise ReviewRefused("only the project's reviewers and managers adjudicate its items", "forbidden")
    config = project_config(project)
    with transaction.atomic():
        item = _locked_item(project, tree_id)
        final = FinalAnswer.objects.filter(project=project, tree_id=item.tree_id).first()
        current = final.version if final is not None else 0
        if version != current:
            raise StaleVersion(current)
        columns = submitted_columns(project=project, tree_ids=[item.tree_id])[item.tree_id]
        votes = item_votes(config, columns)
        adjudication = config.quality.adjudication
        start = prefilled(votes, min_agreement=adjudication.min_agreement if adjudication.enabled else None)
        fields, provenance = _decided(config, votes, start, columns, take, choices or {})
        answers = _checked(config, item.tree_id, fields_answers(scheme_kinds(config), fields))
        return _write(project, item.tree, final, answers, provenance, by)


def finals_auto(*, project: Project, tree_ids: Collection[int] | None = None) -> list[int]:
    """Make final, without a person, the complete items (their full overlap submitted) whose every
    field reaches the project's ``min_agreement``; returns their tree ids. Items already final, or
    of a project without ``quality.adjudication.auto``, are left alone."""
    config = project_config(project)
    adjudication = config.quality.adjudication
    if not adjudication.enabled:
        return []
    items = ProjectItem.objects.filter(
        project=project, is_gold=False, submitted_count__gte=config.assignment.annotations_per_item
    ).exclude(tree__finals__project=project)
    if tree_ids is not None:
        items = items.filter(tree_id__in=list(tree_ids))
    candidates = list(items.order_by("tree_id").values_list("tree_id", flat=True))
    done = []
    for start in range(0, len(candidates), 500):
        page = candidates[start : start + 500]
        for tree_id, columns in submitted_columns(project=project, tree_ids=page).items():
            merged = auto_majority(item_votes(config, columns), adjudication.min_agreement)
            if len(columns) < 2 or merged.undecided:
                continue  # waits for a person
            if _auto_save(project, config, tree_id, merged):
                done.append(tree_id)
    return done


def gold_from_finals(*, project: Project, tree_ids: Collection[int] | None = None) -> int:
    """Make the items with a final answer (``tree_ids`` among them, when given) gold, with their
    final answers as the expected ones: how many were made gold. One action for the page,
    the admin and the API."""
    finals = FinalAnswer.objects.filter(project=project).select_related("project")
    if tree_ids is not None:
        finals = finals.filter(tree_id__in=list(tree_ids))
    made = 0
    with transaction.atomic():
        items = {
            item.tree_id: item
            for item in ProjectItem.objects.filter(
                project=project, tree_id__in=finals.values("tree_id")
            ).select_related("project")
        }
        for final in finals.order_by("tree_id"):
            item = items.get(final.tree_id)
            if item is None or not final.answers:
                continue
            gold_item_set(item=item, answers=final.answers, explanation=item.gold_explanation)
            made += 1
    return made


# -- the steps ----------------------------------------------------------------------------


def _locked_item(project: Project, tree_id: int) -> ProjectItem:
    """The item, locked: two adjudicators of one item take turns (Http404 when no such item)."""
    item = (
        ProjectItem.objects.select_for_update(of=("self",))
        .select_related("tree")
        .filter(project=project, tree_id=tree_id)
        .first()
    )
    if item is None:
        raise Http404("no such item in this project")
    return item


def _decided(
    config: ProjectConfig,
    votes: list[FieldVotes],
    start: Merged,
    columns: Mapping[str, Any],
    take: str | None,
    choices: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The final answer's fields and where each came from; what cannot be is a problem at its field."""
    problems = Problems()
    by_name = {vote.name: vote for vote in votes}
    fields, provenance = dict(start.fields), dict(start.provenance)
    if not columns and not choices:
        problems.add("", "no annotator has submitted this item yet: there is nothing to adjudicate", "empty")
    if take is not None:
        if take not in columns:
            problems.add("take", _not_annotator(take, columns), "unknown_annotator")
        else:
            for vote in votes:
                fields[vote.name], provenance[vote.name] = vote.values[take], take
    if not isinstance(choices, Mapping):
        problems.add("fields", f"must be an object of field: choice, got {describe(choices)}")
        choices = {}
    kinds = scheme_kinds(config)
    for name, choice in choices.items():
        where = join("fields", str(name))
        if str(name).partition("/")[0] not in kinds:
            problems.add(where, f"no scheme of that name (expected {', '.join(kinds)})", "unknown_scheme")
        elif (
            not isinstance(choice, Mapping) or len(choice) != 1 or next(iter(choice)) not in ("from", "value")
        ):
            problems.add(where, 'must be {"from": <annotator>} or {"value": <the field\'s value>}')
        elif "value" in choice:
            fields[name], provenance[name] = choice["value"], EDITED
        elif name not in by_name:
            problems.add(where, "no annotator answered this field: give its value instead", "unknown_field")
        elif choice["from"] not in columns:
            problems.add(join(where, "from"), _not_annotator(choice["from"], columns), "unknown_annotator")
        else:
            fields[name], provenance[name] = by_name[name].values[choice["from"]], choice["from"]
    for name in start.undecided:
        if name not in provenance and name not in choices:
            problems.add(
                join("fields", name),
                "the annotators disagree: take one's value or give your own",
                "undecided",
            )
    problems.raise_if_any()
    kept = {name: value for name, value in fields.items() if value is not None}
    return kept, {name: provenance[name] for name in kept}


def _not_annotator(name: Any, columns: Mapping[str, Any]) -> str:
    who = ", ".join(columns) or "nobody yet"
    return f'"{name}" submitted no answer to this item (submitted: {who})'


def _checked(config: ProjectConfig, tree_id: int, answers: dict[str, Any]) -> dict[str, Any]:
    """The answers checked and normalised by their schemes, as a submission's are (a comparison
    edited without the order its replies were shown in gets the tree's order)."""
    with_shape, with_texts = needs_shape(config)
    shape = tree_shape(tree_id, with_texts=with_texts) if with_shape else None
    problems = Problems()
    normalized = gold_answers_check(config=config, answers=answers, shape=shape, problems=problems)
    refused = {problem.path.split(".")[0] for problem in problems.items}
    for scheme in config.schemes:
        if scheme.required and scheme.name not in refused and scheme.is_empty(normalized.get(scheme.name)):
            problems.add(scheme.name, "is required", "required")
    problems.raise_if_any()
    return normalized


def _write(
    project: Project,
    tree: ConversationTree,
    final: FinalAnswer | None,
    answers: dict[str, Any],
    provenance: dict[str, str],
    by: AbstractBaseUser | None,
) -> FinalAnswer:
    """Save the new version, keep it in the history, log it, and announce it once committed."""
    now = timezone.now()
    previous = final.version if final is not None else 0
    if final is None:
        final = FinalAnswer.objects.create(
            project=project, tree=tree, answers=answers, provenance=provenance, decided_by=by, updated_at=now
        )
    else:
        FinalAnswer.objects.filter(pk=final.pk).update(
            answers=answers, provenance=provenance, decided_by=by, updated_at=now, version=F("version") + 1
        )
        final.refresh_from_db()
    FinalAnswerRevision.objects.create(
        final=final,
        version=final.version,
        answers=answers,
        provenance=provenance,
        decided_by=by,
        created_at=now,
    )
    audit_record(
        "final.save" if by is not None else "final.auto",
        target=Target.row(ConversationTree, tree.pk, "external_id"),
        scope=project.name,
        details={"version": final.version, "previous_version": previous, "provenance": provenance},
        actor=by if by is not None else None,
    )
    external_id, version = tree.external_id, final.version
    transaction.on_commit(lambda: item_finalised.send(project, tree_id=external_id, version=version, by=by))
    return final


def _auto_save(project: Project, config: ProjectConfig, tree_id: int, merged: Merged) -> bool:
    """One item made final by the rule, unless a person got there first; an answer the schemes
    refuse (a tree changed since) is left for a person."""
    with transaction.atomic():
        item = _locked_item(project, tree_id)
        if FinalAnswer.objects.filter(project=project, tree_id=tree_id).exists():
            return False
        try:
            answers = _checked(config, tree_id, fields_answers(scheme_kinds(config), merged.fields))
        except ProblemsError:
            return False
        _write(project, item.tree, None, answers, merged.provenance, None)
    return True
