"""Gold items: items with known answers, mixed into annotators' work to measure them.

A manager marks an item gold with its expected answers (in the admin, or
``import_gold`` from a file); the answers are checked by the schemes, like
an annotator's. Gold items leave the regular pool: they never count toward
an item's overlap, and exports leave them out unless asked. Hand-out
asks ``annotation.work.assignment.gold_pick`` first: while a project's
training phase is on and the annotator has not passed it, the next gold
item is a training item (``annotation.quality.training``); otherwise, at the
project's ``quality.gold_rate``, a gold item they have not seen comes in
place of regular work. An annotator's answers to a gold item are scored
(``annotation.quality.gold_scoring``) in the same transaction as the submission;
their accuracy is what ``annotation.quality.report`` reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from annotation.models import Assignment, Project, ProjectItem
from annotation.problems import Problems, describe, join
from annotation.projects.config import ProjectConfig, project_config
from annotation.projects.counts import project_counts_forget
from annotation.quality.gold_scoring import answers_score, scored_schemes
from annotation.schemes import Scheme
from trees.audit import Target, audit_record, audit_record_many
from trees.models import ConversationTree
from trees.selectors import tree_shape
from trees.shapes import TreeShape

WORK, GOLD, TRAINING = Assignment.Kind.WORK, Assignment.Kind.GOLD, Assignment.Kind.TRAINING
# Potato writes an expected answer as the bare value; the schemes' payloads wrap it in a key.
SHORTHAND_KEYS = {"radio": "label", "likert": "rating", "number": "value", "slider": "value", "text": "text"}


# -- marking items gold ------------------------------------------------------------


def gold_answers_check(
    *,
    config: ProjectConfig,
    answers: Any,
    shape: TreeShape | None,
    problems: Problems,
    path: str = "",
) -> dict[str, Any]:
    """The expected answers normalised by their schemes; what is wrong goes to ``problems``.

    Takes the payloads annotators send, or Potato's bare values (``"positive"``
    for a radio, ``["a", "b"]`` for a multiselect, ``4`` for a likert). A
    comparison need not say the order its replies are shown in. A null
    answer means nothing is expected for that scheme.
    """
    if not isinstance(answers, Mapping):
        problems.add(path, f"must be an object of scheme name: expected answer, got {describe(answers)}")
        return {}
    names = [scheme.name for scheme in config.schemes]
    normalized: dict[str, Any] = {}
    for name, payload in answers.items():
        where = join(path, str(name))
        if name not in names:
            problems.add(
                where, f"no scheme of that name (expected {', '.join(sorted(names))})", "unknown_scheme"
            )
            continue
        if payload is None:
            continue
        scheme = config.scheme(name)
        payload = _expanded(scheme, payload, shape)
        value = scheme.validate(payload, where, problems, shape)
        if value is not None:
            normalized[name] = value
    return normalized


def _expanded(scheme: Scheme, payload: Any, shape: TreeShape | None) -> Any:
    kind = scheme.annotation_type
    if kind in SHORTHAND_KEYS and not isinstance(payload, Mapping):
        return {SHORTHAND_KEYS[kind]: payload}
    if kind == "multiselect" and isinstance(payload, list):
        return {"labels": payload}
    if kind == "tree_annotation" and isinstance(payload, Mapping) and shape is not None:
        comparisons = payload.get("branch_comparisons")
        if isinstance(comparisons, Mapping):
            filled = {
                parent: {"shown_order": shape.siblings_under(parent), **comparison}
                if isinstance(comparison, Mapping) and "shown_order" not in comparison and parent in shape
                else comparison
                for parent, comparison in comparisons.items()
            }
            return {**payload, "branch_comparisons": filled}
    return payload


def needs_shape(config: ProjectConfig) -> tuple[bool, bool]:
    """Whether checking answers needs the tree's shape, and its texts."""
    return (
        any(scheme.annotation_type in ("tree_annotation", "span", "rubric") for scheme in config.schemes),
        any(scheme.reads_text for scheme in config.schemes),
    )


def gold_answers_normalize(*, item: ProjectItem, answers: Any, is_gold: bool = True) -> dict[str, Any]:
    """``answers`` for ``item`` checked against its tree by the project's schemes, normalised;
    raises ProblemsError. A gold item needs at least one expected answer."""
    config = project_config(item.project)
    with_shape, with_texts = needs_shape(config)
    shape = tree_shape(item.tree_id, with_texts=with_texts) if with_shape else None
    problems = Problems()
    normalized = gold_answers_check(config=config, answers=answers, shape=shape, problems=problems)
    if is_gold and not normalized and not problems:
        problems.add("", "a gold item needs the expected answer of at least one scheme", "required")
    problems.raise_if_any()
    return normalized


@transaction.atomic
def gold_item_set(
    *, item: ProjectItem, answers: Any, explanation: str = "", is_gold: bool = True, origin: str = ""
) -> ProjectItem:
    """Give ``item`` its expected answers (and make it gold, or not); raises ProblemsError.

    ``origin`` says in the audit log where the answers came from, when not typed in."""
    normalized = gold_answers_normalize(item=item, answers=answers, is_gold=is_gold)
    was_gold = item.is_gold
    item.is_gold, item.gold_answers, item.gold_explanation = is_gold, normalized, explanation
    item.save(update_fields=["is_gold", "gold_answers", "gold_explanation"])
    if was_gold != is_gold:
        # Gold items leave the regular pool: the project's counts change with them.
        project_counts_forget(item.project_id)
    audit_record(
        "gold.set",
        target=Target.row(ConversationTree, item.tree_id, "external_id"),
        scope=item.project.name,
        details={"is_gold": is_gold, "schemes": sorted(normalized)} | ({"origin": origin} if origin else {}),
    )
    return item


@dataclass(frozen=True)
class GoldState:
    """An item's gold as it stands: what an undo puts back, and what it expects to find."""

    is_gold: bool
    answers: dict[str, Any]
    explanation: str

    @classmethod
    def of(cls, item: ProjectItem) -> GoldState:
        return cls(item.is_gold, dict(item.gold_answers or {}), item.gold_explanation)

    def as_json(self) -> dict[str, Any]:
        return {"is_gold": self.is_gold, "answers": self.answers, "explanation": self.explanation}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GoldState:
        return cls(bool(data["is_gold"]), dict(data["answers"]), str(data["explanation"]))


class GoldChanged(Exception):
    """The item's gold is no longer what the person undoing a change last saw."""


def _locked(item: ProjectItem) -> ProjectItem:
    """``item`` read afresh and locked: two managers changing one item's gold take turns."""
    return ProjectItem.objects.select_for_update(of=("self",)).select_related("project").get(pk=item.pk)


@transaction.atomic
def gold_restore(*, item: ProjectItem, state: GoldState, expected: GoldState) -> ProjectItem:
    """Put ``item``'s gold back to ``state`` (an undo), if it is still ``expected``, what the person
    undoing last saw; raises GoldChanged when someone changed it since, ProblemsError when
    the project's schemes no longer take the old answers."""
    item = _locked(item)
    if GoldState.of(item) != expected:
        raise GoldChanged("this item's gold changed since: look at it again")
    return gold_item_set(
        item=item,
        answers=state.answers,
        explanation=state.explanation,
        is_gold=state.is_gold,
        origin="undo",
    )


def gold_item_unmark(*, item: ProjectItem) -> tuple[GoldState, GoldState]:
    """Make ``item`` regular work again, its expected answers kept (``gold_items_mark``): the gold
    before and after, for an undo."""
    with transaction.atomic():
        item = _locked(item)
        before = GoldState.of(item)
        gold_items_mark(items=ProjectItem.objects.filter(pk=item.pk), is_gold=False)
        return before, replace(before, is_gold=False)


def gold_items_mark(*, items: QuerySet[ProjectItem], is_gold: bool) -> tuple[int, int]:
    """Mark ``items`` gold (or not): returns how many changed, and how many could not be
    marked because they have no expected answers yet."""
    unanswered = items.filter(is_gold=False, gold_answers={}).count() if is_gold else 0
    changing = (
        items.filter(is_gold=True) if not is_gold else items.filter(is_gold=False).exclude(gold_answers={})
    )
    with transaction.atomic():
        rows = list(changing.values_list("pk", "tree_id", "tree__external_id", "project__name", "project_id"))
        ProjectItem.objects.filter(pk__in=[pk for pk, *_ in rows]).update(is_gold=is_gold)
        for project_id in {row[-1] for row in rows}:
            project_counts_forget(project_id)
        by_project: dict[str, list[Target]] = {}
        for _, tree_id, external_id, project_name, _ in rows:
            by_project.setdefault(project_name, []).append(Target(ConversationTree, tree_id, external_id))
        for project_name, targets in by_project.items():
            audit_record_many("gold.mark" if is_gold else "gold.unmark", targets, scope=project_name)
    return len(rows), unanswered


# -- hand-out ---------------------------------------------------------------------------


# -- scoring ---------------------------------------------------------------------------


def item_gold_score(
    *, project: Project, tree_id: int, answers: Mapping[str, Any], config: ProjectConfig | None = None
) -> float | None:
    """The score of ``answers`` (payloads by scheme) against the item's expected ones (one query)."""
    config = config or project_config(project)
    expected = (
        ProjectItem.objects.filter(project=project, tree_id=tree_id)
        .values_list("gold_answers", flat=True)
        .first()
    )
    return answers_score(scored_schemes(config), expected or {}, answers).score
