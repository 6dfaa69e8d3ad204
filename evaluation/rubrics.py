"""Rubrics as YAML, validated: weighted yes/no criteria, gates, ordered outcome rules.

::

    name: scheduling                    # letters, digits, _ and - (names it in URLs and commands)
    title: Scheduling agent
    target: conversation                # or path, or node (see evaluation.subjects)
    normalize: false                    # true: divide by the sum of the positive weights
    criteria:
      - key: correct_time
        question: Was the meeting booked at the right time?
        weight: 0.25                    # negative weights are penalties
        check: {equals: [metadata.final_state.start, metadata.ground_truth.start]}   # optional
        requires: [booking_confirmed]   # optional: holds only when these gates hold too
    gates:                              # named checks without weight, for outcome rules
      - key: booking_confirmed
        question: Is the booking confirmed?
        check: {python: booking_confirmed}
    outcomes:                           # the first rule that holds wins; the last is the fallback
      - {name: successful_completion, min_score: 0.75, requires: [booking_confirmed]}
      - {name: graceful_failure, min_score: 0.5}
      - {name: hard_failure}
    show_metadata: [ground_truth]       # optional: shown to human judges beside the conversation

Score = Σ weights of the criteria that hold ÷ Σ positive weights, clipped to
[0, 1] (HealthBench's rubric score). Without ``normalize: true`` the positive
weights must sum to 1.0, so the score is simply the sum of the weights that
hold. Every problem is reported with its key path
(``criteria[2].weight: ...``), all of them at once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from annotation.bounded_yaml import load_yaml
from annotation.problems import Problem, Problems, ProblemsError, describe, join
from evaluation.checks import Check, ParseContext, parse_check, registered_python_checks
from evaluation.paths import PathError, parse_metadata_path
from evaluation.subjects import TARGETS

TOP_KEYS = frozenset(
    {"name", "title", "description", "target", "normalize", "criteria", "gates", "outcomes", "show_metadata"}
)
CRITERION_KEYS = frozenset({"key", "question", "weight", "check", "requires"})
GATE_KEYS = frozenset({"key", "question", "check"})
OUTCOME_KEYS = frozenset({"name", "min_score", "requires", "description"})
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Weights are written as decimals; their float sum is off in the last bits.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Criterion:
    key: str
    question: str
    weight: float
    check: Check | None = field(default=None, compare=False, repr=False)
    check_source: Any = None  # the check as written, for the admin and the API
    # Gates without which the criterion does not hold, whatever its own check or judges say
    # (the scheduling method's "if not booking_confirmed: return False").
    requires: tuple[str, ...] = ()

    @property
    def automatic(self) -> bool:
        return self.check is not None


@dataclass(frozen=True)
class Gate:
    key: str
    question: str
    check: Check | None = field(default=None, compare=False, repr=False)
    check_source: Any = None

    @property
    def automatic(self) -> bool:
        return self.check is not None


@dataclass(frozen=True)
class Outcome:
    name: str
    min_score: float = 0.0
    requires: tuple[str, ...] = ()
    description: str = ""

    def condition(self) -> str:
        """The rule in words: "score ≥ 0.75 and booking_confirmed" ("always" for none)."""
        parts = [f"score ≥ {self.min_score:g}"] if self.min_score else []
        parts.extend(self.requires)
        return " and ".join(parts) or "always"


@dataclass(frozen=True)
class RubricSpec:
    name: str
    title: str
    description: str
    target: str
    normalize: bool
    criteria: tuple[Criterion, ...]
    gates: tuple[Gate, ...]
    outcomes: tuple[Outcome, ...]
    warnings: tuple[str, ...] = ()
    # Metadata paths shown to human judges beside the conversation (evaluation.judge_metadata).
    show_metadata: tuple[str, ...] = ()

    @property
    def checks(self) -> tuple[Criterion | Gate, ...]:
        """Criteria then gates: everything a judge or a check answers yes or no."""
        return (*self.criteria, *self.gates)

    @property
    def keys(self) -> list[str]:
        return [item.key for item in self.checks]

    @property
    def positive_total(self) -> float:
        return math.fsum(criterion.weight for criterion in self.criteria if criterion.weight > 0)

    def item(self, key: str) -> Criterion | Gate:
        for item in self.checks:
            if item.key == key:
                return item
        raise KeyError(key)

    @property
    def outcome_names(self) -> list[str]:
        return [outcome.name for outcome in self.outcomes]

    def as_json(self) -> dict[str, Any]:
        """The rubric as plain data (stored with each version, served by the API)."""

        def with_check(entry: dict[str, Any], item: Criterion | Gate) -> dict[str, Any]:
            if item.check_source is not None:
                entry["check"] = item.check_source
            return entry

        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "target": self.target,
            "normalize": self.normalize,
            "criteria": [
                with_check(
                    {"key": c.key, "question": c.question, "weight": c.weight}
                    | ({"requires": list(c.requires)} if c.requires else {}),
                    c,
                )
                for c in self.criteria
            ],
            "gates": [with_check({"key": g.key, "question": g.question}, g) for g in self.gates],
            "outcomes": [
                {
                    "name": o.name,
                    "min_score": o.min_score,
                    "requires": list(o.requires),
                    **({"description": o.description} if o.description else {}),
                }
                for o in self.outcomes
            ],
        } | ({"show_metadata": list(self.show_metadata)} if self.show_metadata else {})


def parse_rubric(text: str, *, python_checks: Collection[str] | None = None) -> RubricSpec:
    """Validate a rubric's YAML; raises ProblemsError listing every problem.

    ``python_checks`` are the names YAML may use with ``python:`` (by default
    those registered in ``settings.BRANCHPOINT_RUBRIC_CHECKS``).
    """
    return rubric_from_data(load_yaml(text), python_checks=python_checks)


def rubric_from_data(raw: Any, *, python_checks: Collection[str] | None = None) -> RubricSpec:
    if python_checks is None:
        python_checks = registered_python_checks()
    context = ParseContext(python_checks=frozenset(python_checks))
    problems = Problems()
    if not isinstance(raw, Mapping):
        raise ProblemsError([Problem("", f"a rubric must be a mapping of keys, got {describe(raw)}")])
    problems.check_keys(raw, "", TOP_KEYS)
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.add("name", "is required: letters, digits, _ and - (it names the rubric in URLs)")
        name = ""
    title = _text(raw, "title", "", problems) or name
    description = _text(raw, "description", "", problems)
    target = raw.get("target", "conversation")
    if target not in TARGETS:
        shown = f'"{target}"' if isinstance(target, str) else describe(target)
        problems.add("target", f"{shown} is not a target ({', '.join(TARGETS)})")
        target = "conversation"
    normalize = raw.get("normalize", False)
    if not isinstance(normalize, bool):
        problems.add("normalize", f"must be true or false, got {describe(normalize)}")
        normalize = False

    seen: dict[str, str] = {}
    criteria = _criteria(raw.get("criteria"), problems, context, seen)
    gates = _gates(raw.get("gates"), problems, context, seen)
    criteria = _criteria_requires(raw.get("criteria"), criteria, gates, problems)
    outcomes = _outcomes(raw.get("outcomes"), problems, seen)
    warnings = _weights(criteria, normalize, problems)
    show_metadata = _show_metadata(raw.get("show_metadata"), problems)
    problems.raise_if_any()
    return RubricSpec(
        name=name,
        title=title,
        description=description,
        target=target,
        normalize=normalize,
        criteria=tuple(criteria),
        gates=tuple(gates),
        outcomes=tuple(outcomes),
        warnings=tuple(warnings),
        show_metadata=show_metadata,
    )


def _text(raw: Mapping[str, Any], key: str, path: str, problems: Problems, *, required: bool = False) -> str:
    value = raw.get(key)
    where = join(path, key)
    if value is None:
        if required:
            problems.add(where, "is required (a non-empty string)")
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        problems.add(where, f"must be a non-empty string, got {describe(value)}")
        return ""
    return value.strip()


def _entries(raw: Any, key: str, problems: Problems, *, required: bool) -> list[tuple[str, Mapping]]:
    if raw is None:
        if required:
            problems.add(key, "is required (a list)")
        return []
    if not isinstance(raw, list) or (required and not raw):
        problems.add(key, f"must be a non-empty list, got {describe(raw)}")
        return []
    entries = []
    for index, entry in enumerate(raw):
        path = join(key, index)
        if not isinstance(entry, Mapping):
            problems.add(path, f"must be a mapping, got {describe(entry)}")
            continue
        entries.append((path, entry))
    return entries


def _key(entry: Mapping[str, Any], path: str, problems: Problems, seen: dict[str, str]) -> str | None:
    key = entry.get("key")
    if not isinstance(key, str) or not _KEY.match(key):
        problems.add(join(path, "key"), "is required: letters, digits and _, not starting with a digit")
        return None
    if key in seen:
        problems.add(join(path, "key"), f'"{key}" is already the key of {seen[key]}')
        return None
    seen[key] = path
    return key


def _check(entry: Mapping[str, Any], path: str, problems: Problems, context: ParseContext) -> Check | None:
    if entry.get("check") is None:
        return None
    return parse_check(entry["check"], join(path, "check"), problems, context)


def _criteria(raw: Any, problems: Problems, context: ParseContext, seen: dict[str, str]) -> list[Criterion]:
    criteria = []
    for path, entry in _entries(raw, "criteria", problems, required=True):
        problems.check_keys(entry, path, CRITERION_KEYS)
        key = _key(entry, path, problems, seen)
        question = _text(entry, "question", path, problems, required=True)
        weight = entry.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
            problems.add(join(path, "weight"), f"must be a number, got {describe(weight)}")
            weight = None
        elif weight == 0:
            problems.add(join(path, "weight"), "must not be 0 (a check without weight is a gate)")
            weight = None
        check = _check(entry, path, problems, context)
        if key is not None and weight is not None:
            criteria.append(Criterion(key, question, float(weight), check, entry.get("check")))
    return criteria


def _criteria_requires(
    raw: Any, criteria: list[Criterion], gates: list[Gate], problems: Problems
) -> list[Criterion]:
    """The criteria with the gates each requires: only gates, so a criterion never waits on
    another criterion (no order between criteria, no cycles)."""
    gate_keys = [gate.key for gate in gates]
    known = ", ".join(gate_keys) if gate_keys else "none"
    requires: dict[str, tuple[str, ...]] = {}
    for path, entry in _entries(raw, "criteria", Problems(), required=False):
        if "requires" not in entry:
            continue
        value, where = entry["requires"], join(path, "requires")
        if not isinstance(value, list):
            problems.add(where, f"must be a list of gate keys, got {describe(value)}")
            continue
        keys = []
        for index, key in enumerate(value):
            if isinstance(key, str) and key in gate_keys:
                keys.append(key)
            else:
                shown = f'"{key}"' if isinstance(key, str) else describe(key)
                problems.add(join(where, index), f"unknown gate {shown} (gates are: {known})", "unknown_key")
        requires[entry.get("key")] = tuple(keys)
    return [replace(c, requires=requires.get(c.key, ())) for c in criteria]


def _gates(raw: Any, problems: Problems, context: ParseContext, seen: dict[str, str]) -> list[Gate]:
    gates = []
    for path, entry in _entries(raw, "gates", problems, required=False):
        problems.check_keys(entry, path, GATE_KEYS)
        key = _key(entry, path, problems, seen)
        question = _text(entry, "question", path, problems, required=True)
        check = _check(entry, path, problems, context)
        if key is not None:
            gates.append(Gate(key, question, check, entry.get("check")))
    return gates


def _outcomes(raw: Any, problems: Problems, keys: dict[str, str]) -> list[Outcome]:
    outcomes: list[Outcome] = []
    names: dict[str, str] = {}
    entries = _entries(raw, "outcomes", problems, required=True)
    known = ", ".join(keys) if keys else "none"
    for position, (path, entry) in enumerate(entries):
        problems.check_keys(entry, path, OUTCOME_KEYS)
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            problems.add(join(path, "name"), "is required: letters, digits, _ and -")
            name = None
        elif name in names:
            problems.add(join(path, "name"), f'"{name}" is already the name of {names[name]}')
            name = None
        else:
            names[name] = path
        min_score = entry.get("min_score", 0)
        if isinstance(min_score, bool) or not isinstance(min_score, int | float) or not 0 <= min_score <= 1:
            shown = describe(min_score) if not isinstance(min_score, int | float) else str(min_score)
            problems.add(join(path, "min_score"), f"must be a number from 0 to 1, got {shown}")
            min_score = 0
        requires_raw = entry.get("requires", [])
        requires: list[str] = []
        if not isinstance(requires_raw, list):
            problems.add(
                join(path, "requires"),
                f"must be a list of criterion or gate keys, got {describe(requires_raw)}",
            )
        else:
            for index, key in enumerate(requires_raw):
                if not isinstance(key, str) or key not in keys:
                    shown = f'"{key}"' if isinstance(key, str) else describe(key)
                    problems.add(
                        join(join(path, "requires"), index),
                        f"unknown key {shown} (criteria and gates are: {known})",
                        "unknown_key",
                    )
                else:
                    requires.append(key)
        if position == len(entries) - 1 and (requires_raw or min_score):
            problems.add(
                path,
                "the last outcome is the fallback when no rule above holds: "
                "it takes no min_score or requires",
            )
        description = _text(entry, "description", path, problems)
        if name is not None:
            outcomes.append(Outcome(name, float(min_score), tuple(requires), description))
    return outcomes


def _show_metadata(raw: Any, problems: Problems) -> tuple[str, ...]:
    """The metadata paths to show judges, as written; each is read now, so a typo is a problem
    with its place rather than a box that never shows."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("show_metadata", f"must be a list of metadata keys or paths, got {describe(raw)}")
        return ()
    paths = []
    for index, entry in enumerate(raw):
        where = join("show_metadata", index)
        if not isinstance(entry, str) or not entry.strip():
            got = "an empty string" if isinstance(entry, str) else describe(entry)
            problems.add(where, f"must be a metadata key or path (ground_truth.time), got {got}")
            continue
        try:
            parse_metadata_path(entry)
        except PathError as error:
            problems.add(where, str(error))
            continue
        paths.append(entry.strip())
    return tuple(paths)


def _weights(criteria: list[Criterion], normalize: bool, problems: Problems) -> list[str]:
    """Check the weights add up; returns the warnings for a normalised rubric."""
    if not criteria:
        return []
    positive = math.fsum(c.weight for c in criteria if c.weight > 0)
    penalties = any(c.weight < 0 for c in criteria)
    if positive <= 0:
        problems.add("criteria", "needs at least one criterion with a positive weight")
        return []
    if normalize:
        if abs(positive - 1) <= TOLERANCE:
            return []
        return [f"the positive weights sum to {_number(positive)}: scores are divided by {_number(positive)}"]
    if abs(positive - 1) > TOLERANCE:
        which = "positive weights" if penalties else "weights"
        problems.add(
            "criteria",
            f"the {which} sum to {_number(positive)}, not 1.0: fix them, "
            "or set normalize: true to divide scores by their sum",
            "weights",
        )
    return []


def _number(value: float) -> str:
    return f"{round(value, 9):g}"
