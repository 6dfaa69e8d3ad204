"""The ``quality:`` section of a project's YAML: gold checks, flagging and the training phase.

::

    quality:
      gold_rate: 0.1          # share of an annotator's items that are gold checks (default 0: none)
      min_accuracy: 0.7       # annotators whose gold accuracy is below this are flagged
      min_gold_answers: 5     # ... once they have answered this many gold items
      schemes: [quality]      # the schemes scored against gold (default: every scheme that can be)
      training:
        items: 3              # gold items answered, with feedback, before real work (default 0: none)
        pass_accuracy: 0.8    # the mean score over a round of them that passes
        attempts: 2           # rounds allowed, each with fresh items (null: no limit)
      adjudication:
        auto: majority        # fields enough annotators agree on are final without a person
        min_agreement: 0.67   # ... the share of the item's annotators that must agree

Potato's own sections load unchanged: ``gold_standards:`` (``frequency`` and
``accuracy``) and ``training:`` (``passing_criteria``, ``failure_action``)
are read as ours and noted; what only concerns how Potato runs (its item
files, feedback switches) is reported as ignored, since gold items here are
items of the project marked in the admin or by ``import_gold``. Our keys
win over Potato's. Errors name the key path like every config error:
``quality.training.items: must be an integer ≥ 0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from annotation.problems import Problems, describe, join

SECTION = "quality"
QUALITY_KEYS = frozenset(
    {"gold_rate", "min_accuracy", "min_gold_answers", "schemes", "training", "adjudication"}
)
TRAINING_KEYS = frozenset({"items", "pass_accuracy", "attempts"})
ADJUDICATION_KEYS = frozenset({"auto", "min_agreement"})
AUTO_RULES = ("majority",)
POTATO_GOLD_KEYS = frozenset({"enabled", "frequency", "mode", "accuracy"})
POTATO_GOLD_IGNORED = frozenset({"items_file", "feedback", "auto_promote"})
POTATO_ACCURACY_KEYS = frozenset({"min_threshold", "evaluation_count"})
POTATO_TRAINING_KEYS = frozenset({"enabled", "passing_criteria", "failure_action", "annotation_schemes"})
POTATO_TRAINING_IGNORED = frozenset({"data_file", "allow_retry", "feedback"})
POTATO_CRITERIA_KEYS = frozenset({"min_correct", "require_all_correct", "max_attempts"})
POTATO_CRITERIA_IGNORED = frozenset({"max_mistakes", "max_mistakes_per_question"})
FAILURE_ACTIONS = ("move_to_done", "repeat_training")


@dataclass(frozen=True)
class TrainingConfig:
    items: int = 0
    pass_accuracy: float = 0.8
    attempts: int | None = 1

    @property
    def enabled(self) -> bool:
        return self.items > 0


@dataclass(frozen=True)
class AdjudicationConfig:
    """How an item's final answer may be reached without a person (``annotation.review.finals``)."""

    auto: str | None = None  # "majority", or None: every final answer is a person's
    min_agreement: float = 0.67

    @property
    def enabled(self) -> bool:
        return self.auto is not None


@dataclass(frozen=True)
class QualityConfig:
    gold_rate: float = 0.0
    min_accuracy: float = 0.7
    min_gold_answers: int = 5
    # None: every scheme a score can be computed for.
    schemes: tuple[str, ...] | None = None
    training: TrainingConfig = field(default_factory=TrainingConfig)
    adjudication: AdjudicationConfig = field(default_factory=AdjudicationConfig)

    @property
    def enabled(self) -> bool:
        """Whether hand-out has anything to mix in: gold checks or a training phase."""
        return self.gold_rate > 0 or self.training.enabled

    def as_dict(self) -> dict[str, Any]:
        return {
            "gold_rate": self.gold_rate,
            "min_accuracy": self.min_accuracy,
            "min_gold_answers": self.min_gold_answers,
            "schemes": list(self.schemes) if self.schemes is not None else None,
            "training": {
                "items": self.training.items,
                "pass_accuracy": self.training.pass_accuracy,
                "attempts": self.training.attempts,
            },
            "adjudication": {
                "auto": self.adjudication.auto,
                "min_agreement": self.adjudication.min_agreement,
            },
        }


def parse_quality(
    raw: Mapping[str, Any], scheme_names: list[str], problems: Problems, notes: list[str]
) -> QualityConfig:
    """The quality settings from the whole config ``raw``: Potato's sections first, then ours."""
    values: dict[str, Any] = {}
    training: dict[str, Any] = {}
    adjudication: dict[str, Any] = {}
    if "gold_standards" in raw:
        _potato_gold(raw["gold_standards"], values, problems, notes)
    if "training" in raw:
        _potato_training(raw["training"], values, training, problems, notes)
    section = raw.get(SECTION)
    if section is not None:
        if not isinstance(section, Mapping):
            problems.add(SECTION, f"must be a mapping, got {describe(section)}")
        else:
            _ours(section, values, training, problems)
            _adjudication(section.get("adjudication"), adjudication, problems)
    schemes = values.get("schemes")
    if schemes is not None:
        path = values.pop("schemes_path")
        for index, name in enumerate(schemes):
            if name not in scheme_names:
                problems.add(
                    join(path, index),
                    f'no scheme named "{name}" (expected one of {", ".join(scheme_names) or "none"})',
                )
    else:
        values.pop("schemes_path", None)
    return replace(
        QualityConfig(**values),
        training=TrainingConfig(**training),
        adjudication=AdjudicationConfig(**adjudication),
    )


def _adjudication(raw: Any, values: dict[str, Any], problems: Problems) -> None:
    """``quality.adjudication``: the automatic rule and the agreement it needs."""
    if raw is None:
        return
    where = join(SECTION, "adjudication")
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be a mapping like {{auto: majority}}, got {describe(raw)}")
        return
    problems.check_keys(raw, where, ADJUDICATION_KEYS)
    auto = raw.get("auto")
    if auto is not None and auto not in AUTO_RULES:
        shown = f'"{auto}"' if isinstance(auto, str) else describe(auto)
        problems.add(join(where, "auto"), f'must be "majority" or null, got {shown}')
    elif auto is not None:
        values["auto"] = auto
    if "min_agreement" in raw:
        share = _fraction(raw["min_agreement"], join(where, "min_agreement"), problems)
        if share is not None and share <= 0.5:
            problems.add(join(where, "min_agreement"), f"must be more than 0.5 (a majority), got {share:g}")
        elif share is not None:
            values["min_agreement"] = share


def _ours(
    section: Mapping[str, Any], values: dict[str, Any], training: dict[str, Any], problems: Problems
) -> None:
    problems.check_keys(section, SECTION, QUALITY_KEYS)
    if "gold_rate" in section:
        rate = _fraction(section["gold_rate"], join(SECTION, "gold_rate"), problems, below_one=True)
        if rate is not None:
            values["gold_rate"] = rate
    if "min_accuracy" in section:
        accuracy = _fraction(section["min_accuracy"], join(SECTION, "min_accuracy"), problems)
        if accuracy is not None:
            values["min_accuracy"] = accuracy
    if "min_gold_answers" in section:
        count = _count(section["min_gold_answers"], join(SECTION, "min_gold_answers"), problems, minimum=1)
        if count is not None:
            values["min_gold_answers"] = count
    if "schemes" in section:
        names = section["schemes"]
        path = join(SECTION, "schemes")
        if not isinstance(names, list) or not names or not all(isinstance(name, str) for name in names):
            problems.add(path, f"must be a non-empty list of scheme names, got {describe(names)}")
        else:
            values["schemes"], values["schemes_path"] = tuple(names), path
    raw_training = section.get("training")
    if raw_training is None:
        return
    where = join(SECTION, "training")
    if not isinstance(raw_training, Mapping):
        problems.add(where, f"must be a mapping like {{items: 3}}, got {describe(raw_training)}")
        return
    problems.check_keys(raw_training, where, TRAINING_KEYS)
    if "items" in raw_training:
        count = _count(raw_training["items"], join(where, "items"), problems, minimum=0)
        if count is not None:
            training["items"] = count
    if "pass_accuracy" in raw_training:
        accuracy = _fraction(raw_training["pass_accuracy"], join(where, "pass_accuracy"), problems)
        if accuracy is not None:
            training["pass_accuracy"] = accuracy
    if "attempts" in raw_training:
        attempts = raw_training["attempts"]
        if attempts is None:
            training["attempts"] = None
        else:
            count = _count(attempts, join(where, "attempts"), problems, minimum=1, allow_none=True)
            if count is not None:
                training["attempts"] = count


def _potato_gold(raw: Any, values: dict[str, Any], problems: Problems, notes: list[str]) -> None:
    """Potato's ``gold_standards:``: one gold item every ``frequency`` items, flagged below ``accuracy``."""
    if not isinstance(raw, Mapping):
        problems.add("gold_standards", f"must be a mapping, got {describe(raw)}")
        return
    problems.check_keys(raw, "gold_standards", POTATO_GOLD_KEYS, POTATO_GOLD_IGNORED)
    if raw.get("enabled", True) is False:
        notes.append("gold_standards: not enabled, so no gold checks are mixed in")
        return
    mode = raw.get("mode", "mixed")
    if mode not in ("mixed", "training", "separate"):
        problems.add("gold_standards.mode", f"must be mixed, training or separate, got {describe(mode)}")
    frequency = raw.get("frequency")
    if mode == "mixed" and frequency is not None:
        every = _count(frequency, "gold_standards.frequency", problems, minimum=2)
        if every is not None:
            values["gold_rate"] = 1 / every
            notes.append(f"gold_standards.frequency: read as quality.gold_rate 1/{every}")
    elif mode in ("training", "separate"):
        notes.append(
            f"gold_standards.mode: {mode} is read as no gold checks in the work "
            "(gold items still make up the training, when quality.training is on)"
        )
    accuracy = raw.get("accuracy")
    if accuracy is None:
        return
    if not isinstance(accuracy, Mapping):
        problems.add("gold_standards.accuracy", f"must be a mapping, got {describe(accuracy)}")
        return
    problems.check_keys(accuracy, "gold_standards.accuracy", POTATO_ACCURACY_KEYS)
    if "min_threshold" in accuracy:
        threshold = _fraction(accuracy["min_threshold"], "gold_standards.accuracy.min_threshold", problems)
        if threshold is not None:
            values["min_accuracy"] = threshold
            notes.append(f"gold_standards.accuracy.min_threshold: read as quality.min_accuracy {threshold:g}")
    if "evaluation_count" in accuracy:
        count = _count(accuracy["evaluation_count"], "gold_standards.accuracy.evaluation_count", problems, 1)
        if count is not None:
            values["min_gold_answers"] = count
            notes.append(
                f"gold_standards.accuracy.evaluation_count: read as quality.min_gold_answers {count}"
            )


def _potato_training(
    raw: Any, values: dict[str, Any], training: dict[str, Any], problems: Problems, notes: list[str]
) -> None:
    """Potato's ``training:``: ``min_correct`` questions answered right, retaken on failure or not."""
    if not isinstance(raw, Mapping):
        problems.add("training", f"must be a mapping, got {describe(raw)}")
        return
    problems.check_keys(raw, "training", POTATO_TRAINING_KEYS, POTATO_TRAINING_IGNORED)
    if raw.get("enabled", False) is not True:
        return
    criteria = raw.get("passing_criteria") or {}
    if not isinstance(criteria, Mapping):
        problems.add("training.passing_criteria", f"must be a mapping, got {describe(criteria)}")
        criteria = {}
    problems.check_keys(criteria, "training.passing_criteria", POTATO_CRITERIA_KEYS, POTATO_CRITERIA_IGNORED)
    # Potato retries a question until it is answered right; here a round is scored as answered,
    # so "min_correct right" is a round of that many items that must all be right.
    items = _count(criteria.get("min_correct", 3), "training.passing_criteria.min_correct", problems, 1)
    if items is None:
        return
    training["items"], training["pass_accuracy"] = items, 1.0
    action = raw.get("failure_action", "move_to_done")
    if action not in FAILURE_ACTIONS:
        problems.add(
            "training.failure_action", f"must be {' or '.join(FAILURE_ACTIONS)}, got {describe(action)}"
        )
    attempts: int | None = 1
    if action == "repeat_training":
        attempts = None
        if "max_attempts" in criteria:
            attempts = _count(criteria["max_attempts"], "training.passing_criteria.max_attempts", problems, 1)
    training["attempts"] = attempts
    notes.append(
        f"training: read as quality.training: {items} gold items, all answered right, "
        + (
            f"in {attempts} attempt{'s' if attempts != 1 else ''}"
            if attempts
            else "in any number of attempts"
        )
    )
    schemes = raw.get("annotation_schemes")
    if schemes is not None:
        if not isinstance(schemes, list) or not all(isinstance(name, str) for name in schemes) or not schemes:
            problems.add(
                "training.annotation_schemes", f"must be a list of scheme names, got {describe(schemes)}"
            )
        else:
            values["schemes"], values["schemes_path"] = tuple(schemes), "training.annotation_schemes"
            notes.append("training.annotation_schemes: read as quality.schemes (for gold checks too)")


def _fraction(value: Any, path: str, problems: Problems, *, below_one: bool = False) -> float | None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value <= 1
        or (below_one and value == 1)
    ):
        bound = "from 0 up to (not including) 1" if below_one else "from 0 to 1"
        shown = (
            f"{value:g}"
            if isinstance(value, int | float) and not isinstance(value, bool)
            else describe(value)
        )
        problems.add(path, f"must be a number {bound}, got {shown}")
        return None
    return float(value)


def _count(
    value: Any, path: str, problems: Problems, minimum: int, *, allow_none: bool = False
) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        problems.add(
            path, f"must be an integer ≥ {minimum}" + (" (or null for no limit)" if allow_none else "")
        )
        return None
    return value
