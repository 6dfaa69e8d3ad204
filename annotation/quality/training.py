"""The training phase: gold items answered with feedback before an annotator's real work.

With ``quality.training.items: N`` on, a new annotator's first items are
rounds of N gold items (the project's gold items in the order they were
added, skipping any they have seen). After each one they are shown the
expected answers, their own, and the item's explanation. A round whose mean
score reaches ``pass_accuracy`` passes the training; a round that does not
starts another, with fresh items, until ``attempts`` rounds have been
taken — then the annotator has failed it, and gets no work in the project.
Training items cannot be skipped, and cannot be changed once submitted
(their answers have been shown).

Nothing is stored beyond the assignments themselves: the state is read
back from the annotator's training assignments (one query), so changing the
configuration applies at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.projects.quality_config import TrainingConfig
from annotation.quality.gold_scoring import answers_score, scored_schemes
from annotation.schemes.answer_text import answer_text
from trees.markdown import message_html

OFF, NOT_STARTED, IN_PROGRESS, PASSED, FAILED = "off", "not_started", "in_progress", "passed", "failed"
SUBMITTED = Assignment.Status.SUBMITTED
TRAINING = Assignment.Kind.TRAINING


@dataclass(frozen=True)
class TrainingStatus:
    """Where one annotator is in the training."""

    state: str  # off, not_started, in_progress, passed, failed
    items: int = 0  # items per round
    answered: int = 0  # items answered in the current round (or the last one, once decided)
    attempt: int = 0  # the round they are on (or the deciding one), from 1
    attempts: int | None = None  # rounds allowed (None: no limit)
    score: float | None = None  # the mean score of that round so far
    pass_accuracy: float = 0.0

    @property
    def done(self) -> bool:
        return self.state in (OFF, PASSED)

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "items": self.items,
            "answered": self.answered,
            "attempt": self.attempt,
            "attempts": self.attempts,
            "score": self.score,
            "pass_accuracy": self.pass_accuracy,
        }

    def __str__(self) -> str:
        """The status in a few words, for pages."""
        score = f" ({self.score:.0%})" if self.score is not None else ""
        if self.state == OFF:
            return "no training"
        if self.state == NOT_STARTED:
            return "not started"
        if self.state == PASSED:
            return f"passed{score}"
        if self.state == FAILED:
            return f"failed{score}"
        round_ = f", attempt {self.attempt}" if self.attempt > 1 else ""
        return f"{self.answered} of {self.items} answered{round_}"


def training_state(training: TrainingConfig, answers: Iterable[tuple[str, float | None]]) -> TrainingStatus:
    """The status from the annotator's training assignments in the order handed out:
    ``(status, gold_score)`` pairs. Only submitted ones count; a score of None
    (nothing in the item is scored) counts for neither side."""
    if not training.enabled:
        return TrainingStatus(OFF)
    handed = list(answers)
    base = {"items": training.items, "attempts": training.attempts, "pass_accuracy": training.pass_accuracy}
    if not handed:
        return TrainingStatus(NOT_STARTED, **base)
    scores = [score for status, score in handed if status == SUBMITTED]
    rounds = [scores[start : start + training.items] for start in range(0, len(scores), training.items)]
    for number, round_ in enumerate(rounds, start=1):
        mean = _mean(round_)
        if len(round_) < training.items:
            return TrainingStatus(IN_PROGRESS, answered=len(round_), attempt=number, score=mean, **base)
        if mean is None or mean >= training.pass_accuracy - 1e-9:
            return TrainingStatus(PASSED, answered=len(round_), attempt=number, score=mean, **base)
        if training.attempts is not None and number >= training.attempts:
            return TrainingStatus(FAILED, answered=len(round_), attempt=number, score=mean, **base)
    return TrainingStatus(IN_PROGRESS, answered=0, attempt=len(rounds) + 1, **base)


def _mean(scores: list[float | None]) -> float | None:
    known = [score for score in scores if score is not None]
    return sum(known) / len(known) if known else None


def training_status(
    *, project: Project, user: AbstractBaseUser | int, training: TrainingConfig | None = None
) -> TrainingStatus:
    """``user``'s (or the user id's) training status in ``project`` (one query; none when it is off)."""
    training = training or project_config(project).quality.training
    if not training.enabled:
        return TrainingStatus(OFF)
    rows = (
        Assignment.objects.filter(project=project, user=user, kind=TRAINING)
        .order_by("leased_at", "pk")
        .values_list("status", "gold_score")
    )
    return training_state(training, rows)


def training_feedback(*, project: Project, assignment: Assignment) -> dict[str, Any]:
    """What the annotator is shown after submitting a training item: each scheme's expected
    answer beside theirs, the item's score and explanation, and their training status.

    Three queries: the item's expected answers, the annotator's answers, the status.
    """
    config = project_config(project)
    item = ProjectItem.objects.filter(project=project, tree_id=assignment.tree_id).only(
        "gold_answers", "gold_explanation"
    )[0]
    given = dict(
        Annotation.objects.filter(
            project=project, tree_id=assignment.tree_id, user_id=assignment.user_id
        ).values_list("scheme", "payload")
    )
    expected = item.gold_answers or {}
    result = answers_score(scored_schemes(config), expected, given)
    schemes = []
    for scheme in config.schemes:
        if scheme.name not in expected:
            continue
        score = result.by_scheme.get(scheme.name)
        schemes.append(
            {
                "scheme": scheme.name,
                "description": scheme.description,
                "expected": expected[scheme.name],
                "given": given.get(scheme.name),
                "expected_text": answer_text(scheme, expected[scheme.name]),
                "given_text": answer_text(scheme, given.get(scheme.name)),
                "score": score,
            }
        )
    status = training_status(project=project, user=assignment.user_id, training=config.quality.training)
    return {
        "score": result.score,
        "explanation": item.gold_explanation,
        # The explanation is Markdown, as messages are: rendered and sanitised alike.
        "explanation_html": message_html(item.gold_explanation),
        "schemes": schemes,
        "training": status.as_dict() | {"summary": str(status)},
    }
