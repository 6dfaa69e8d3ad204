"""From yes/no verdicts to a score, an outcome and an explanation.

Pure functions over a ``RubricSpec`` and a mapping ``key → bool`` (criteria
and gates; a key that is missing or None counts as not holding). A criterion
that ``requires`` gates holds only when they hold too, whoever judged it.

- score = Σ weights of the criteria that hold ÷ Σ positive weights, clipped
  to [0, 1] and rounded to 9 decimals (weights are decimals: 0.25 + 0.25 +
  0.10 + 0.20 must be 0.8, not 0.7999999999999999). HealthBench's example:
  points 7, 5, 10, -6 met T, F, T, T → (7 + 10 - 6) / (7 + 5 + 10) = 0.5.
- outcome = the first rule whose ``min_score`` and ``requires`` hold; the
  last rule is the fallback.
- explanation = which rule decided (and why the rules above it did not),
  the score's sum, then what passed and failed with each question.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from evaluation.rubrics import Outcome, RubricSpec


@dataclass(frozen=True)
class Evaluation:
    details: dict[str, bool]  # criterion or gate key → holds
    score: float
    outcome: str
    rule: int  # the deciding rule's index in the rubric's outcomes
    explanation: str
    notes: dict[str, str] = field(default_factory=dict)


def rubric_score(spec: RubricSpec, verdicts: Mapping[str, bool | None]) -> float:
    held = math.fsum(criterion.weight for criterion in spec.criteria if verdicts.get(criterion.key))
    score = held / spec.positive_total
    return round(min(max(score, 0.0), 1.0), 9)


def _rule_holds(rule: Outcome, score: float, verdicts: Mapping[str, bool | None]) -> bool:
    return score >= rule.min_score and all(verdicts.get(key) for key in rule.requires)


def rubric_outcome(spec: RubricSpec, verdicts: Mapping[str, bool | None], score: float) -> int:
    """The index of the deciding outcome rule."""
    last = len(spec.outcomes) - 1
    for index, rule in enumerate(spec.outcomes[:last]):
        if _rule_holds(rule, score, verdicts):
            return index
    return last


def evaluate(
    spec: RubricSpec, verdicts: Mapping[str, bool | None], notes: Mapping[str, str] | None = None
) -> Evaluation:
    """Score, outcome and explanation for ``verdicts``; ``notes`` add a remark per key
    (e.g. "no automatic check", "2 of 3 judges said yes")."""
    details = {key: bool(verdicts.get(key)) for key in spec.keys}
    notes = dict(notes or {})
    for criterion in spec.criteria:
        missing = [gate for gate in criterion.requires if not details.get(gate)]
        if missing and details[criterion.key]:
            details[criterion.key] = False
            unmet = f"requires {', '.join(missing)}, which does not hold"
            notes[criterion.key] = f"{notes[criterion.key]}; {unmet}" if criterion.key in notes else unmet
    score = rubric_score(spec, details)
    rule = rubric_outcome(spec, details, score)
    return Evaluation(
        details=details,
        score=score,
        outcome=spec.outcomes[rule].name,
        rule=rule,
        explanation=explain(spec, details, score, rule, notes),
        notes=notes,
    )


def _figure(value: float) -> str:
    return f"{round(value, 9):g}"


def _why_not(rule: Outcome, score: float, details: Mapping[str, bool]) -> str:
    reasons = []
    if score < rule.min_score:
        reasons.append(f"score {_figure(score)} < {_figure(rule.min_score)}")
    reasons.extend(f"{key} does not hold" for key in rule.requires if not details.get(key))
    return "; ".join(reasons)


def _why(rule: Outcome, score: float) -> str:
    reasons = []
    if rule.min_score:
        reasons.append(f"score {_figure(score)} ≥ {_figure(rule.min_score)}")
    reasons.extend(f"{key} holds" for key in rule.requires)
    return "; ".join(reasons)


def explain(
    spec: RubricSpec, details: Mapping[str, bool], score: float, rule: int, notes: Mapping[str, str]
) -> str:
    """A few lines a person can read: the deciding rule, the score's sum, each criterion and gate."""
    outcomes = spec.outcomes
    decided = outcomes[rule]
    count = len(outcomes)
    if rule == count - 1 and rule > 0:
        lines = [f"Outcome {decided.name}: the fallback (rule {rule + 1} of {count}), as no rule above held."]
    else:
        why = _why(decided, score)
        lines = [f"Outcome {decided.name}: rule {rule + 1} of {count} holds" + (f" ({why})." if why else ".")]
    for index, earlier in enumerate(outcomes[:rule]):
        lines.append(f"  rule {index + 1} {earlier.name} does not hold: {_why_not(earlier, score, details)}.")

    held = [c for c in spec.criteria if details.get(c.key)]
    terms = " + ".join(_figure(c.weight) for c in held).replace("+ -", "- ") or "0"
    total = spec.positive_total
    if abs(total - 1) >= 1e-9:
        terms = f"({terms}) ÷ {_figure(total)}"
    raw = math.fsum(c.weight for c in held) / total
    clipped = "" if 0 <= raw <= 1 else " (clipped to [0, 1])"
    lines.append(f"Score {_figure(score)} = {terms}{clipped}.")

    def entry(key: str, question: str, tag: str) -> str:
        note = notes.get(key)
        return f"  {key} ({tag}): {question}" + (f" [{note}]" if note else "")

    groups = (
        ("Passed:", [c for c in spec.criteria if c.weight > 0 and details.get(c.key)]),
        ("Failed:", [c for c in spec.criteria if c.weight > 0 and not details.get(c.key)]),
        ("Penalised:", [c for c in spec.criteria if c.weight < 0 and details.get(c.key)]),
        ("Penalties avoided:", [c for c in spec.criteria if c.weight < 0 and not details.get(c.key)]),
    )
    for heading, criteria in groups:
        if criteria:
            lines.append(heading)
            lines.extend(entry(c.key, c.question, _figure(c.weight)) for c in criteria)
    if spec.gates:
        lines.append("Gates:")
        lines.extend(entry(g.key, g.question, "yes" if details.get(g.key) else "no") for g in spec.gates)
    return "\n".join(lines)
