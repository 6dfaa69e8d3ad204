"""A project to adjudicate, for the adjudication tests (services, pages, API, exports).

Alice, Bob and Carol annotate the documented seed conversation (root → resp_a →
user_2, root → resp_b) with a tree answer (node ratings, path, comparisons) and an
item-level radio; Rita reviews and Maggie manages.
"""

from __future__ import annotations

import copy
from typing import Any

from annotation.models import Annotation, Project
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over

CONFIG = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: response
    description: Rate each reply, choose the best path, compare the branches
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
  - {annotation_type: radio, name: overall, description: Overall, labels: [Helpful, Unhelpful]}
assignment: {annotations_per_item: 3}
"""
AUTO = "quality: {adjudication: {auto: majority, min_agreement: 0.67}}\n"


def tree_answer(ratings: dict[str, int], path: list[str], better: str = "Better") -> dict[str, Any]:
    return {
        "node_annotations": {node: {"rating": rating} for node, rating in ratings.items()},
        "selected_path": path,
        "branch_comparisons": {"root": {"pairs": [{"a": "resp_a", "b": "resp_b", "label": better}]}},
    }


ANSWERS = {
    "alice": {
        "response": tree_answer({"resp_a": 4, "resp_b": 2}, ["root", "resp_a", "user_2"]),
        "overall": {"label": "Helpful"},
    },
    "bob": {
        "response": tree_answer({"resp_a": 5, "resp_b": 2}, ["root", "resp_b"], "Worse"),
        "overall": {"label": "Helpful"},
    },
    "carol": {
        "response": tree_answer({"resp_a": 4, "resp_b": 2}, ["root", "resp_a", "user_2"]),
        "overall": {"label": "Unhelpful"},
    },
}


def people() -> dict[str, Any]:
    return {name: person(name) for name in ("alice", "bob", "carol", "rita", "maggie", "olga")}


def adjudicated_project(who: dict[str, Any], *, extra: str = "", name: str = "adjudicated") -> Project:
    """The project with no answers yet (Olga is no member)."""
    return project_over(
        name,
        CONFIG + extra,
        [SEED_ITEM],
        [who["alice"], who["bob"], who["carol"]],
        reviewers=[who["rita"]],
        managers=[who["maggie"]],
    )


def submit(project: Project, user: Any, answers: dict[str, Any]) -> int:
    """``user`` takes the item and submits ``answers`` (shown orders filled in as the page would)."""
    held = item_next(project=project, user=user)
    draft = Annotation.objects.get(project=project, tree_id=held.tree_id, user=user, scheme="response")
    answers = copy.deepcopy(answers)
    answers["response"]["branch_comparisons"]["root"]["shown_order"] = draft.payload["branch_comparisons"][
        "root"
    ]["shown_order"]
    item_submit(project=project, tree=held.tree, user=user, answers=answers, version=held.version)
    return held.tree_id


def all_submit(
    project: Project, who: dict[str, Any], names: tuple[str, ...] = ("alice", "bob", "carol")
) -> int:
    tree_id = 0
    for name in names:
        tree_id = submit(project, who[name], ANSWERS[name])
    return tree_id
