"""A model judge, run for real, measured against three people on the same items.

Ann, Ben and Cleo compare two replies on each of eight items (their answers stored as the
annotate page stores them). The judge ``judge:scripted`` is a model behind the specs' chat
server, run through the runner: it sees each pair in both orders, and on one item it prefers
whatever is shown first (a flip, so a tie). Dana, who manages the project, reads the agreement
through the API: each person-person κ and each judge-person κ equals the one worked out here from
the raw labels, with the formula written out; the judge report counts the flip.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

import pytest
from rest_framework.test import APIClient

from annotation.models import Annotation
from evaluation.llm.judges import judge_create
from evaluation.llm.judging import judge_run
from tests.annotation.annotator_items import person, project_over
from tests.evaluation.llm.judging_projects import label_reply

pytestmark = pytest.mark.django_db(transaction=True)

COMPARE = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Which reply is better?
    branch_comparison: {enabled: true}
"""
LABELS = ["Better", "Same", "Worse"]
B, S, W = LABELS
PEOPLE = ["ann", "ben", "cleo"]
# What each person says of the first reply against the second, item by item.
SAID = {
    "ann": [B, B, S, W, W, B, S, W],
    "ben": [B, S, S, W, B, B, S, W],
    "cleo": [B, B, W, W, W, S, S, B],
}
# What the model thinks of the first reply against the second; on item 6 it has no view and
# prefers whichever reply it is shown first: the runner must record that as a tie (Same).
THINKS = {0: B, 1: B, 2: S, 3: W, 4: W, 5: B, 7: W}
POSITION_BIASED = 6
JUDGE = [THINKS.get(index, S) for index in range(8)]


def item(index: int) -> dict[str, Any]:
    return {
        "id": f"item-{index}",
        "tree": {
            "id": "q",
            "role": "user",
            "content": f"Question {index}: which reply is better?",
            "children": [
                {"id": "r1", "role": "assistant", "content": f"First reply to question {index}."},
                {"id": "r2", "role": "assistant", "content": f"Second reply to question {index}."},
            ],
        },
    }


def scripted_model(body: dict[str, Any]) -> str:
    """The model's answer: how Response A stands against Response B."""
    prompt = body["messages"][-1]["content"]
    index = int(re.search(r"Question (\d+):", prompt).group(1))
    first_shown_first = re.search(r"Response A:\nFirst reply", prompt) is not None
    if index == POSITION_BIASED:
        return label_reply(B)
    view = THINKS[index]
    return label_reply(view if first_shown_first else LABELS[2 - LABELS.index(view)])


def cohen_by_hand(first: list[str], second: list[str]) -> float:
    """κ = (p_o - p_e) / (1 - p_e), p_o the share of items labelled alike, p_e that share by
    chance from each coder's own label shares: Σ_label n_first(label)/n · n_second(label)/n."""
    n = len(first)
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    expected = sum(first.count(label) / n * second.count(label) / n for label in LABELS)
    return (observed - expected) / (1 - expected)


def test_a_judge_run_through_a_model_is_measured_against_three_people(chat_server, endpoint):
    dana = person("dana")
    project = project_over("judged", COMPARE, [item(index) for index in range(8)], managers=[dana])
    trees = {tree.external_id: tree for tree in project.dataset.trees.all()}
    people = {username: person(username) for username in PEOPLE}
    Annotation.objects.bulk_create(
        Annotation(
            project=project,
            tree=trees[f"item-{index}"],
            user=people[username],
            scheme="compare",
            payload={
                "branch_comparisons": {
                    "q": {"shown_order": ["r1", "r2"], "pairs": [{"a": "r1", "b": "r2", "label": label}]}
                }
            },
            status=Annotation.Status.SUBMITTED,
        )
        for username, labels in SAID.items()
        for index, label in enumerate(labels)
    )
    judge = judge_create(name="scripted", kind="comparison", endpoint=endpoint)
    chat_server.respond = scripted_model

    report = judge_run(judge=judge, project=project)

    assert (report.pairs, report.flips) == (8, 1)
    assert len(chat_server.chats) == 16  # every pair in both orders
    stored = {
        answer.tree.external_id: answer.payload["branch_comparisons"]["q"]["pairs"][0]
        for answer in Annotation.objects.filter(user=judge.user).select_related("tree")
    }
    assert all((pair["a"], pair["b"]) == ("r1", "r2") for pair in stored.values())
    assert [stored[f"item-{index}"]["label"] for index in range(8)] == JUDGE

    client = APIClient()
    client.force_authenticate(dana)
    response = client.get(f"/api/v1/projects/{project.name}/agreement")
    assert response.status_code == 200, response.content
    figures = response.json()
    assert figures["annotators"] == PEOPLE and figures["judges"] == ["judge:scripted"]
    (scheme,) = [scheme for scheme in figures["schemes"] if scheme["scheme"] == "compare"]
    (field,) = [field for field in scheme["fields"] if field["field"] == "branch comparison"]

    among_people = {(pair["a"], pair["b"]): pair["value"] for pair in field["pairs"]}
    assert among_people == pytest.approx(
        {(a, b): cohen_by_hand(SAID[a], SAID[b]) for a, b in combinations(PEOPLE, 2)}, abs=1e-9
    )
    (against,) = field["judges"]["judges"]
    assert against["judge"] == "judge:scripted"
    assert {result["human"]: result["value"] for result in against["humans"]} == pytest.approx(
        {name: cohen_by_hand(JUDGE, SAID[name]) for name in PEOPLE}, abs=1e-9
    )

    judge_report = client.get(f"/api/v1/projects/{project.name}/judges/scripted/report")
    assert judge_report.status_code == 200, judge_report.content
    flips = judge_report.json()["flips"]
    assert (flips["pairs"], flips["flipped"], flips["rate"]) == (8, 1, 0.125)
    assert judge_report.json()["verdicts"]["items"] == 8
