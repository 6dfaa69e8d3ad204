"""What a judge is asked about one tree, and the annotation its answers make (no requests here).

Rubric schemes: one question per judged unit, asking every criterion and gate of the
rubric's current version —

=============  =====================================  ==========================================
target         the unit asked about                   the annotation's payload
=============  =====================================  ==========================================
conversation   the main line (the first reply at      ``{"criteria": {...}, "note": ...}``
               each turn; all of a linear one)
path           the main line, as the path judged      ``{"path": [...], "criteria": ..., "note"}``
node           each assistant message, with the       ``{"nodes": {id: {"criteria", "note"}}}``
               line that leads to it
=============  =====================================  ==========================================

The note holds each criterion's one-line reason (``key: reason`` a line), the same note a
person may write beside their answers; the verdict's details keep them by key.

Comparison (``tree_annotation`` with ``branch_comparison`` in pairs): at every decision
point, every pair of sibling replies, each asked in both orders (A-then-B, B-then-A).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from annotation.problems import Problems
from annotation.schemes.base import Scheme
from annotation.schemes.tree import TreeAnnotation
from evaluation.llm.models import Judge
from evaluation.llm.prompts import (
    comparison_answer_read,
    comparison_values,
    label_mirror,
    label_tie,
    messages_render,
    rubric_answer_read,
    rubric_values,
    transcript,
)
from evaluation.rubrics import RubricSpec
from evaluation.schemes import MAX_NOTE_CHARS
from evaluation.subjects import TreeIndex
from trees.formats.records import MessageRecord, TreeRecord
from trees.shapes import TreeShape


@dataclass
class Question:
    """One request's worth: its name (for failures and the log), its messages, and how its
    answer is read (raising ``prompts.Malformed``)."""

    name: str
    messages: list[dict[str, str]]
    read: Callable[[str], Any]


@dataclass
class Answered:
    """The readable answers of a tree's questions, by question name (failed ones absent)."""

    values: dict[str, Any] = field(default_factory=dict)


# -- rubric ------------------------------------------------------------------------------


@dataclass
class RubricUnit:
    key: str  # "" for the conversation, else the judged (or last) node
    line: list[MessageRecord]

    @property
    def question(self) -> str:
        return "conversation" if not self.key else f"node {self.key}"


def rubric_units(spec: RubricSpec, record: TreeRecord) -> list[RubricUnit]:
    index = TreeIndex(record)
    if spec.target == "node":
        return [
            RubricUnit(message.external_id, index.line_to(message.external_id))
            for message in index.preorder()
            if message.role == "assistant"
        ]
    line = index.main_line()
    if not line:
        return []
    return [RubricUnit("" if spec.target == "conversation" else line[-1].external_id, line)]


def rubric_questions(judge: Judge, spec: RubricSpec, record: TreeRecord) -> list[Question]:
    keys = spec.keys
    questions = []
    for unit in rubric_units(spec, record):
        subject = (
            "the last assistant message of the conversation below (the one being judged)"
            if spec.target == "node"
            else "the conversation below"
        )
        values = rubric_values(
            rubric=spec.title or spec.name,
            description=spec.description,
            subject=subject,
            conversation=transcript([(message.role, message.text) for message in unit.line]),
            questions=[(item.key, item.question) for item in spec.checks],
        )
        messages = messages_render("rubric", judge.system_prompt, judge.prompt_template, values)
        questions.append(
            Question(unit.question, messages, lambda text, keys=keys: rubric_answer_read(text, keys))
        )
    return questions


def _rubric_answer(answers: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {"criteria": {key: answer.holds for key, answer in answers.items()}}
    note = "\n".join(f"{key}: {answer.reason}" for key, answer in answers.items())
    if note:
        payload["note"] = note[:MAX_NOTE_CHARS]
    return payload


def rubric_payload(
    spec: RubricSpec, record: TreeRecord, answered: Answered
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The annotation's payload (None when nothing was answered) and the verdict's details."""

    def detail(answers: dict[str, Any]) -> dict[str, Any]:
        return {key: {"holds": answer.holds, "reason": answer.reason} for key, answer in answers.items()}

    units = rubric_units(spec, record)
    if spec.target == "node":
        nodes = {
            unit.key: answered.values[unit.question] for unit in units if unit.question in answered.values
        }
        details = {"nodes": {node: {"criteria": detail(answers)} for node, answers in nodes.items()}}
        payload = {"nodes": {node: _rubric_answer(answers) for node, answers in nodes.items()}}
        return (payload if nodes else None), details
    unit = units[0] if units else None
    answers = answered.values.get(unit.question) if unit is not None else None
    if unit is None or answers is None:
        return None, {}
    payload = _rubric_answer(answers)
    if spec.target == "path":
        payload = {"path": [message.external_id for message in unit.line], **payload}
    return payload, {"criteria": detail(answers)}


# -- comparisons -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    node: str  # the decision point
    a: str
    b: str

    def question(self, order: str) -> str:
        return f"{self.node}: {self.a} vs {self.b} ({order})"


AB, BA = "a-then-b", "b-then-a"


def comparison_pairs(shape: TreeShape, deleted: frozenset[str] = frozenset()) -> list[Pair]:
    """The pairs of sibling replies to compare, leaving out any pair that a deleted message is
    in or above: moderation took that text away, and it is not sent to a model."""
    return [
        Pair(node, a, b)
        for node in shape.decision_points()
        if not deleted.intersection(shape.path_to(node))
        for a, b in combinations([reply for reply in shape.siblings_under(node) if reply not in deleted], 2)
    ]


def comparison_questions(
    judge: Judge, scheme: TreeAnnotation, shape: TreeShape, deleted: frozenset[str] = frozenset()
) -> list[Question]:
    labels = list(scheme.comparison_labels)
    questions = []
    for pair in comparison_pairs(shape, deleted):
        path = shape.path_to(pair.node)
        conversation = transcript([(shape.roles.get(node, ""), shape.texts.get(node, "")) for node in path])
        for order, (first, second) in ((AB, (pair.a, pair.b)), (BA, (pair.b, pair.a))):
            values = comparison_values(
                conversation=conversation,
                response_a=shape.texts.get(first, ""),
                response_b=shape.texts.get(second, ""),
                labels=labels,
                description=scheme.comparison_description,
            )
            messages = messages_render("comparison", judge.system_prompt, judge.prompt_template, values)
            questions.append(
                Question(
                    pair.question(order),
                    messages,
                    lambda text, labels=labels: comparison_answer_read(text, labels),
                )
            )
    return questions


def comparison_payload(
    scheme: TreeAnnotation, shape: TreeShape, answered: Answered, deleted: frozenset[str] = frozenset()
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The payload (pairs answered in both orders; a disagreement is a tie) and the details:
    ``{"pairs": [{"node", "a", "b", "first", "second", "label", "flipped", "reasons"}]}``, where
    ``first`` is the label asked A-then-B, ``second`` the label as answered B-then-A (about B
    against A), and ``label`` the pair's (None when an order failed, or for a flip when the
    labels have no middle one to be the tie)."""
    labels = list(scheme.comparison_labels)
    mirror, tie = label_mirror(labels), label_tie(labels)
    pairs, comparisons = [], {}
    for pair in comparison_pairs(shape, deleted):
        first = answered.values.get(pair.question(AB))
        second = answered.values.get(pair.question(BA))
        label, flipped = None, False
        if first is not None and second is not None:
            flipped = first.label != mirror[second.label]
            label = tie if flipped else first.label
        pairs.append(
            {
                "node": pair.node,
                "a": pair.a,
                "b": pair.b,
                "first": first.label if first else None,
                "second": second.label if second else None,
                "label": label,
                "flipped": flipped,
                "reasons": [answer.reason if answer else None for answer in (first, second)],
            }
        )
        comparison = comparisons.setdefault(
            pair.node,
            {
                "shown_order": list(shape.siblings_under(pair.node)),
                "pairs": [],
            },
        )
        if label is not None:
            comparison["pairs"].append({"a": pair.a, "b": pair.b, "label": label})
    if not any(comparison["pairs"] for comparison in comparisons.values()):
        return None, {"pairs": pairs}
    payload: dict[str, Any] = {"branch_comparisons": comparisons}
    if scheme.rates_nodes:
        payload["node_annotations"] = {}
    if scheme.path_enabled:
        payload["selected_path"] = []
    return payload, {"pairs": pairs}


def payload_checked(scheme: Scheme, payload: dict[str, Any], shape: TreeShape) -> dict[str, Any]:
    """The payload as the scheme stores it; a payload the scheme refuses is this code's
    mistake, not the model's (answers were read strictly before), so it raises."""
    problems = Problems()
    value = scheme.validate(payload, scheme.name, problems, shape)
    if problems.items or value is None:
        raise ValueError(
            "; ".join(f"{problem.path}: {problem.message}" for problem in problems.items) or "refused"
        )
    return value
