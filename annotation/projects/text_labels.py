"""Open-Assistant's text labels: what a review may say about a message.

Flags (``spam``, ``pii``, ...) take 0 or 1; scales (``quality``, ...) take a
number from 0 to 1. A label task shows either the full list its type has or,
in simple mode, only the mandatory labels plus ``lang_mismatch`` (and
``quality`` for replies), as Open-Assistant's spam checks did. Acceptance
reads ``spam`` and ``lang_mismatch`` only (``annotation.collection.lifecycle.acceptance_score``).

Plain Python, with the project configuration because a project's ``workflow:``
section chooses among these labels (``workflow_config``); the collection's
services and pages, and the agreement figures, read them from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotation.problems import Problems, describe, join, nearest

FLAG = "flag"
SCALE = "scale"
SIMPLE = "simple"
FULL = "full"


@dataclass(frozen=True)
class Label:
    name: str
    kind: str  # FLAG (0 or 1) or SCALE (0..1)
    widget: str  # Open-Assistant's widget: yes_no, flag or likert
    display_text: str
    help_text: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "kind": self.kind,
            "widget": self.widget,
            "display_text": self.display_text,
            "help_text": self.help_text,
        }


# In Open-Assistant's order (oasst_shared/schemas/protocol.py, TextLabel), which exports keep.
LABELS: dict[str, Label] = {
    label.name: label
    for label in (
        Label("spam", FLAG, "yes_no", "Seems to be intentionally low-quality or irrelevant"),
        Label("fails_task", FLAG, "yes_no", "Fails to follow the correct instruction / task"),
        Label(
            "lang_mismatch",
            FLAG,
            "flag",
            "Wrong Language",
            "The message is written in a language that differs from the currently selected language.",
        ),
        Label("pii", FLAG, "flag", "Contains personal identifiable information (PII)"),
        Label("not_appropriate", FLAG, "flag", "Inappropriate"),
        Label(
            "hate_speech",
            FLAG,
            "flag",
            "Content is abusive or threatening and expresses prejudice against a protected characteristic",
            "Prejudice refers to preconceived views not based on reason. Protected characteristics "
            "include gender, ethnicity, religion, sexual orientation, and similar characteristics.",
        ),
        Label("sexual_content", FLAG, "flag", "Contains sexual content"),
        Label("moral_judgement", FLAG, "flag", "Expresses moral judgement"),
        Label("political_content", FLAG, "flag", "Expresses political views"),
        Label("quality", SCALE, "likert", "Overall subjective quality rating of the message"),
        Label("toxicity", SCALE, "likert", "Rude, abusive, profane or insulting content"),
        Label("humor", SCALE, "likert", "Humorous content including sarcasm"),
        Label("helpfulness", SCALE, "likert", "Helpfulness of the message"),
        Label("creativity", SCALE, "likert", "Creativity"),
        Label("violence", SCALE, "likert", "Violence/abuse/terrorism/self-harm"),
    )
}
ORDER = {name: index for index, name in enumerate(LABELS)}

# Open-Assistant's defaults per task type (oasst_backend/config.py).
DEFAULT_LABELS_INITIAL_PROMPT = (
    "spam",
    "lang_mismatch",
    "quality",
    "creativity",
    "humor",
    "toxicity",
    "violence",
    "not_appropriate",
    "pii",
    "hate_speech",
    "sexual_content",
)
DEFAULT_LABELS_ASSISTANT_REPLY = (
    "spam",
    "lang_mismatch",
    "fails_task",
    "quality",
    "helpfulness",
    "creativity",
    "humor",
    "toxicity",
    "violence",
    "not_appropriate",
    "pii",
    "hate_speech",
    "sexual_content",
)
DEFAULT_LABELS_PROMPTER_REPLY = DEFAULT_LABELS_INITIAL_PROMPT
DEFAULT_MANDATORY = ("spam",)


def shown_labels(*, mode: str, valid: Sequence[str], mandatory: Sequence[str], reply: bool) -> list[str]:
    """The labels a task of ``mode`` asks for: all of ``valid``, or the simple spam check."""
    if mode == FULL:
        return list(valid)
    shown = list(mandatory)
    for extra in ("lang_mismatch", "quality") if reply else ("lang_mismatch",):
        if extra not in shown:
            shown.append(extra)
    return shown


def labels_validate(
    values: Any, *, shown: Sequence[str], mandatory: Sequence[str], path: str, problems: Problems
) -> dict[str, float] | None:
    """``values`` as ``{label: number}`` in label order, or None with the problems added.

    Only the labels the task showed may be given; the mandatory ones must be.
    Flags take 0 or 1 (or true/false); scales a number from 0 to 1.
    """
    if not isinstance(values, Mapping):
        problems.add(path, f"must be an object of label: value, got {describe(values)}")
        return None
    before = len(problems.items)
    out: dict[str, float] = {}
    for name, value in values.items():
        where = join(path, str(name))
        if name not in shown:
            suggestion = nearest(str(name), shown)
            hint = f' (did you mean "{suggestion}"?)' if suggestion else ""
            problems.add(where, f"is not a label of this task{hint}; expected one of {', '.join(shown)}")
            continue
        label = LABELS[name]
        if isinstance(value, bool):
            value = 1.0 if value else 0.0
        if not isinstance(value, int | float) or not math.isfinite(value):
            problems.add(where, f"must be a number from 0 to 1, got {describe(value)}")
            continue
        if label.kind == FLAG and value not in (0, 1):
            problems.add(where, f"is a flag: 0 or 1, got {value:g}")
            continue
        if not 0 <= value <= 1:
            problems.add(where, f"must be from 0 to 1, got {value:g}")
            continue
        out[name] = float(value)
    for name in mandatory:
        if name not in values:
            problems.add(join(path, name), "is required", "required")
    if len(problems.items) > before:
        return None
    return dict(sorted(out.items(), key=lambda item: ORDER[item[0]]))


def labels_summary(reviews: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float | int]]:
    """Open-Assistant's exported ``labels``: per label, the mean value and how many reviews gave it."""
    totals: dict[str, list[float]] = {}
    for review in reviews:
        for name, value in review.items():
            totals.setdefault(name, []).append(value)
    return {
        name: {"value": sum(values) / len(values), "count": len(values)}
        for name, values in sorted(totals.items(), key=lambda item: ORDER.get(item[0], len(ORDER)))
    }
