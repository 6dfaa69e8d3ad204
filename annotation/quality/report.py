"""How well annotators do on gold items: accuracy, flags, training, and the hardest gold items.

An annotator's accuracy is the mean score of the gold checks they submitted
in their work (training items are reported apart, as their training
status). Once they have ``quality.min_gold_answers`` scored gold answers,
an accuracy under ``quality.min_accuracy`` flags them to the project's
managers. The report costs five queries whatever the project's size.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Avg, Count, Q

from annotation.models import Assignment, Membership, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.projects.quality_config import QualityConfig
from annotation.quality.training import TrainingStatus, training_state

WORK, GOLD, TRAINING = Assignment.Kind.WORK, Assignment.Kind.GOLD, Assignment.Kind.TRAINING
SUBMITTED = Assignment.Status.SUBMITTED


@dataclass(frozen=True)
class AnnotatorQuality:
    user_id: int
    username: str
    submitted: int  # regular items submitted
    gold_answered: int  # gold checks submitted with a score
    accuracy: float | None  # their mean score on those
    flagged: bool
    training: TrainingStatus


@dataclass(frozen=True)
class GoldItemQuality:
    tree_id: int
    external_id: str
    answered: int  # submitted answers to it, as a gold check or in training
    mean_score: float | None
    explanation: str


@dataclass(frozen=True)
class QualityReport:
    config: QualityConfig
    annotators: list[AnnotatorQuality]
    gold_items: list[GoldItemQuality]  # hardest (lowest mean score) first; unanswered last
    warnings: list[str] = field(default_factory=list)

    @property
    def flagged(self) -> list[AnnotatorQuality]:
        return [annotator for annotator in self.annotators if annotator.flagged]


def is_flagged(config: QualityConfig, gold_answered: int, accuracy: float | None) -> bool:
    """Below the minimum accuracy, once enough gold answers have been scored to tell."""
    if accuracy is None or gold_answered < config.min_gold_answers:
        return False
    return accuracy < config.min_accuracy


def project_quality(*, project: Project) -> QualityReport:
    """Every annotator's accuracy and training status, and every gold item's results.

    Five queries: the annotators; everyone's assignments counted by kind;
    the training assignments (few: rounds of items per annotator); the gold
    items; their answers counted. Anyone with assignments is listed, member
    or not any more.
    """
    config = project_config(project).quality
    people: dict[int, str] = dict(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR).values_list(
            "user_id", "user__username"
        )
    )
    submitted: dict[int, int] = defaultdict(int)
    gold: dict[int, tuple[int, float | None]] = {}
    for user_id, username, kind, done, scored, mean in (
        Assignment.objects.filter(project=project)
        .order_by()
        .values("user_id", "user__username", "kind")
        .annotate(
            done=Count("pk", filter=Q(status=SUBMITTED)),
            scored=Count("pk", filter=Q(status=SUBMITTED, gold_score__isnull=False)),
            mean=Avg("gold_score", filter=Q(status=SUBMITTED)),
        )
        .values_list("user_id", "user__username", "kind", "done", "scored", "mean")
    ):
        people.setdefault(user_id, username)
        if kind == WORK:
            submitted[user_id] += done
        elif kind == GOLD:
            gold[user_id] = (scored, mean)
    training_rows: dict[int, list[tuple[str, float | None]]] = defaultdict(list)
    if config.training.enabled:
        for user_id, status, score in (
            Assignment.objects.filter(project=project, kind=TRAINING)
            .order_by("user_id", "leased_at", "pk")
            .values_list("user_id", "status", "gold_score")
        ):
            training_rows[user_id].append((status, score))
    annotators = []
    for user_id, username in sorted(people.items(), key=lambda person: person[1]):
        answered, accuracy = gold.get(user_id, (0, None))
        annotators.append(
            AnnotatorQuality(
                user_id=user_id,
                username=username,
                submitted=submitted[user_id],
                gold_answered=answered,
                accuracy=accuracy,
                flagged=is_flagged(config, answered, accuracy),
                training=training_state(config.training, training_rows[user_id]),
            )
        )
    items = _gold_items(project)
    return QualityReport(config, annotators, items, _warnings(config, len(items)))


def _gold_items(project: Project) -> list[GoldItemQuality]:
    results = {
        tree_id: (answered, mean)
        for tree_id, answered, mean in Assignment.objects.filter(
            project=project, kind__in=[GOLD, TRAINING], status=SUBMITTED
        )
        .order_by()
        .values("tree_id")
        .annotate(answered=Count("pk"), mean=Avg("gold_score"))
        .values_list("tree_id", "answered", "mean")
    }
    items = [
        GoldItemQuality(tree_id, external_id, *results.get(tree_id, (0, None)), explanation)
        for tree_id, external_id, explanation in ProjectItem.objects.filter(project=project, is_gold=True)
        .order_by("tree_id")
        .values_list("tree_id", "tree__external_id", "gold_explanation")
    ]
    items.sort(key=lambda item: (item.mean_score is None, item.mean_score or 0.0))
    return items


def _warnings(config: QualityConfig, gold_items: int) -> list[str]:
    warnings = []
    if config.training.enabled and gold_items < config.training.items:
        warnings.append(
            f"The training takes {config.training.items} gold items a round but the project has "
            f"{gold_items}: annotators cannot start work until more items are marked gold."
        )
    if config.gold_rate > 0 and not gold_items:
        warnings.append("Gold checks are on (quality.gold_rate) but no item is marked gold yet.")
    return warnings
