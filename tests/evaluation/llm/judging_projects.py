"""The specs' projects for judges: a rubric project of short conversations, and a tree
project whose every item has one branch point of two replies (``m1-1``, ``m1-2``)."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.factories import ChainTreeFactory, DatasetFactory, ProjectFactory, RubricFactory

RUBRIC = (
    "name: helpfulness\n"
    "title: Helpful replies\n"
    "criteria:\n"
    "  - {key: helpful, question: 'Is the reply helpful?', weight: 0.5}\n"
    "  - {key: polite, question: 'Is the reply polite?', weight: 0.5}\n"
    "outcomes:\n"
    "  - {name: good, min_score: 0.5}\n"
    "  - {name: bad}\n"
)


def rubric_project(name: str = "rubrics", items: int = 2) -> Any:
    RubricFactory(yaml=RUBRIC)
    dataset = DatasetFactory()
    for index in range(items):
        ChainTreeFactory(dataset=dataset, chain=2, external_id=f"conv_{index}")
    return ProjectFactory(
        name=name,
        dataset=dataset,
        config_yaml=(
            "annotation_schemes:\n"
            "  - {annotation_type: rubric, name: review, description: Review, rubric: helpfulness}\n"
        ),
    )


def branch_project(name: str = "branches", items: int = 1) -> Any:
    dataset = DatasetFactory()
    for index in range(items):
        ChainTreeFactory(dataset=dataset, chain=1, replies=2, external_id=f"tree_{index}")
    return ProjectFactory(
        name=name,
        dataset=dataset,
        config_yaml=(
            "annotation_schemes:\n"
            "  - annotation_type: tree_annotation\n"
            "    name: branches\n"
            "    description: Which reply is better?\n"
            "    branch_comparison: {enabled: true}\n"
        ),
    )


def rubric_reply(helpful: bool = True, polite: bool = True) -> str:
    return json.dumps(
        {
            "criteria": {
                "helpful": {"holds": helpful, "reason": "It answers the question."},
                "polite": {"holds": polite, "reason": "It is courteous."},
            }
        }
    )


def label_reply(label: str) -> str:
    return json.dumps({"label": label, "reason": "One reads better."})


def shown_first(body: dict[str, Any]) -> str:
    """Which reply a comparison request shows as Response A: "reply 1" or "reply 2"."""
    found = re.search(r"Response A:\n(reply \d)", body["messages"][-1]["content"])
    assert found, body["messages"][-1]["content"]
    return found.group(1)
