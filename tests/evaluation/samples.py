"""The scheduling sample (platform/samples/scheduling/) and the people and projects around it.

Plain functions, not fixtures: each test file names its own personas.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from annotation.models import Project
from evaluation.models import Rubric
from evaluation.services import rubric_save
from tests.annotation.annotator_items import project_over
from trees.formats import potato
from trees.formats.records import TreeRecord

SAMPLE = Path(__file__).resolve().parents[2] / "platform" / "samples" / "scheduling"
RUBRIC_YAML = (SAMPLE / "rubric.yaml").read_text()
CONVERSATIONS: list[dict[str, Any]] = json.loads((SAMPLE / "conversations.json").read_text())
EXPECTED: dict[str, dict[str, Any]] = json.loads((SAMPLE / "expected.json").read_text())
CRITERIA = [
    "correct_participants",
    "correct_time",
    "correct_duration",
    "explored_alternatives",
    "clear_explanation",
]
OUTCOMES = ["successful_completion", "graceful_failure", "partial_failure", "hard_failure"]
# A project judging the scheduling sample with people as well as checks.
REVIEW_CONFIG = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Judge the scheduling assistant, rubric: scheduling}\n"


def sample_records() -> list[TreeRecord]:
    """The sample conversations as the Potato reader gives them (no database)."""
    source = io.BytesIO(json.dumps(CONVERSATIONS).encode())
    return list(potato.read(source))


def scheduling_rubric() -> Rubric:
    return rubric_save(yaml_text=RUBRIC_YAML).rubric


def scheduling_project(
    name: str = "scheduling",
    config_yaml: str = REVIEW_CONFIG,
    items: list[dict[str, Any]] | None = None,
    annotators: list[Any] = (),
    **roles: list[Any],
) -> Project:
    """The sample rubric and a project over the sample conversations (or ``items``)."""
    if not Rubric.objects.filter(name="scheduling").exists():
        scheduling_rubric()
    return project_over(name, config_yaml, items or CONVERSATIONS, annotators, **roles)
