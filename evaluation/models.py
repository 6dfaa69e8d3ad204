"""Rubrics, their versions, and the results computed with them.

A ``Rubric`` is a name and its current YAML; every change of the YAML makes a
new ``RubricVersion`` (numbered 1, 2, ...), which is never edited again.
Results point at the version they were computed with, so a report of last
month's evaluation still means what it meant then.

``EvaluationResult`` is one verdict per (version, project, tree, unit,
source): the unit is "" for a whole conversation, else the external id of
the judged node (the last node of a judged path). The unique constraint is
what makes ``evaluate`` idempotent: running it again replaces its rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.models import Project
from trees.fields import JSONField
from trees.models import ConversationTree


class Rubric(models.Model):
    name = models.SlugField(max_length=100, unique=True, help_text="Used on the command line and in URLs.")
    title = models.CharField(max_length=200, blank=True)
    yaml = models.TextField("rubric (YAML)", help_text="Criteria, gates, outcomes and target; see the docs.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.title or self.name


class RubricVersion(models.Model):
    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    yaml = models.TextField()
    # The validated rubric as plain data (RubricSpec.as_json): what the API and pages show.
    spec = JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["rubric_id", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["rubric", "number"], name="rubric_version_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.rubric.name} v{self.number}"


class EvaluationResult(models.Model):
    class Source(models.TextChoices):
        AUTO = "auto", "auto (automatic checks)"
        HUMAN = "human", "human (judges' majority)"
        COMBINED = "combined", "combined (judges where they answered, checks elsewhere)"

    rubric_version = models.ForeignKey(RubricVersion, on_delete=models.CASCADE, related_name="results")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="evaluation_results")
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="evaluation_results")
    node = models.CharField(
        max_length=255,
        blank=True,
        default="",
        help_text="The judged node (a path's last); empty for a conversation.",
    )
    source = models.CharField(max_length=16, choices=Source.choices)
    details = JSONField(default=dict, help_text="Criterion or gate key → holds.")
    score = models.FloatField()
    outcome = models.CharField(max_length=100)
    explanation = models.TextField(blank=True)
    # Human results: criterion → judge (user id) → answer, for agreement.
    votes = JSONField(default=dict, blank=True)
    # The model that wrote the judged reply, for A/B reports.
    model_name = models.CharField(max_length=255, blank=True, default="")
    computed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project_id", "tree_id", "node"]
        constraints = [
            models.UniqueConstraint(
                fields=["rubric_version", "project", "tree", "node", "source"],
                name="evaluation_result_unique",
            ),
        ]
        indexes = [
            models.Index(fields=["project", "rubric_version", "source"], name="evaluation_result_report"),
        ]

    def __str__(self) -> str:
        where = f"{self.tree_id}/{self.node}" if self.node else str(self.tree_id)
        return f"{where}: {self.outcome} ({self.score:g}, {self.source})"


class AgreementSnapshot(models.Model):
    """A project's agreement figures, computed once and kept until its judgements change.

    ``stamp`` fingerprints the judgements the figures were computed from
    (``evaluation.agreement.project.agreement_stamp``): any submission,
    import or change gives another stamp, so every process sees the
    snapshot is stale and the next reader recomputes it.
    """

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="agreement_snapshot"
    )
    stamp = models.CharField(max_length=255)
    figures = JSONField(default=dict)
    computed_at = models.DateTimeField(default=timezone.now)
    seconds = models.FloatField(default=0.0, help_text="How long computing the figures took.")

    class Meta:
        ordering = ["project_id"]
        verbose_name = "agreement snapshot"

    def __str__(self) -> str:
        return f"agreement of {self.project} at {self.computed_at:%Y-%m-%d %H:%M}"
