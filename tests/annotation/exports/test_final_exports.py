"""Exports of final answers: ``--status final`` writes what was adjudicated, with where each field came from.

One record per item with a final answer (never an annotator's), in every
format: potato records carry ``version`` and ``provenance``; pairs and sft
say in ``source.provenance`` where their comparison, ratings or path came from.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.exports import annotations_export
from annotation.models import FinalAnswer
from annotation.review.finals import final_save
from tests.annotation.review.adjudicated import adjudicated_project, all_submit, people

pytestmark = pytest.mark.django_db

CHOICES = {
    "overall": {"from": "carol"},
    "response/node/resp_a": {"from": "bob"},
    "response/path": {"value": ["root", "resp_b"]},
    "response/comparison/root": {"from": "alice"},
}


@pytest.fixture
def adjudicated():
    who = people()
    project = adjudicated_project(who)
    tree_id = all_submit(project, who)
    final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, choices=CHOICES)
    return project


def lines(project, format_name: str) -> list[dict]:
    return [
        json.loads(line)
        for line in annotations_export(project=project, format_name=format_name, status="final")
    ]


def test_the_final_export_equals_what_was_adjudicated(adjudicated):
    final = FinalAnswer.objects.get(project=adjudicated)

    (record,) = lines(adjudicated, "potato")

    assert record["id"] == "conv_001"
    assert record["user"] == "rita"
    assert record["status"] == "final"
    assert record["version"] == 1
    assert record["annotations"] == final.answers
    assert record["provenance"] == {
        "overall": "carol",
        "response/node/resp_a": "bob",
        "response/path": "edited",
        "response/comparison/root": "alice",
        "response/node/resp_b": "alice",
    }


def test_pairs_and_sft_of_finals_say_where_each_came_from(adjudicated):
    pairs = lines(adjudicated, "pairs")
    (path,) = lines(adjudicated, "sft")

    comparison = next(pair for pair in pairs if pair["source"]["kind"] == "branch_comparison")
    assert comparison["annotator"] == "rita"
    assert comparison["source"]["provenance"] == {"response/comparison/root": "alice"}
    rating = next(pair for pair in pairs if pair["source"]["kind"] == "node_rating")
    assert rating["source"]["provenance"] == {"response/node/resp_a": "bob", "response/node/resp_b": "alice"}
    assert path["source"]["provenance"] == "edited"
    assert path["messages"][-1] == {"role": "assistant", "content": "Sure, what seems to be the problem?"}


def test_the_command_writes_finals_and_refuses_an_annotator_with_them(adjudicated):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "export_annotations",
        adjudicated.name,
        "--format",
        "potato",
        "--status",
        "final",
        stdout=out,
        stderr=err,
    )
    assert [json.loads(line)["status"] for line in out.getvalue().splitlines()] == ["final"]

    with pytest.raises(CommandError) as refused:
        call_command(
            "export_annotations", adjudicated.name, "--format", "potato", "--status", "final", "--user", "bob"
        )
    assert refused.value.returncode == 2


def test_items_without_a_final_answer_are_not_in_the_final_export():
    who = people()
    project = adjudicated_project(who, name="unadjudicated")
    all_submit(project, who)

    assert lines(project, "potato") == []
