"""Exporting collected trees in Open-Assistant's tree format, and reading the
export back through the foundation's oasst importer unchanged.

Alice, Bob, Carol, Dave and Erin grow ``SMALL`` trees.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotation.collection.export import ExportFilters, collected_export
from annotation.collection.models import Task
from annotation.collection.moderation import message_delete, report_create
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_nack, task_next
from tests.annotation.collection.collect import (
    SPAM,
    collect_project,
    draw_lottery,
    person,
    prompt,
    rank,
    reply,
    review,
    state,
)
from trees.models import Message
from trees.services import dataset_get_or_create, tree_import, trees_export

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin", "frank")]


def finished(team, **workflow):
    """A tree ready for export: a prompt, two ranked answers, a follow-up (and a rejected answer)."""
    alice, bob, carol, dave, erin, frank = team
    project = collect_project(team, max_children_count=3, **workflow)
    root = prompt(project, alice, "How do I keep basil alive?")
    review(project, [bob, carol], root, {"spam": 0, "lang_mismatch": 0, "quality": 1})
    draw_lottery(project)
    first = reply(project, bob, root, "Water it when the soil is dry.")
    second = reply(project, carol, root, "Give it six hours of sun.")
    spam = reply(project, frank, root, "buy cheap watches")
    review(project, [dave, erin], first, {"spam": 0, "lang_mismatch": 0, "quality": 0.5})
    review(project, [dave, erin], second, {"spam": 0, "lang_mismatch": 0, "quality": 1})
    review(project, [dave, erin], spam, SPAM)
    follow_up = reply(project, alice, first, "How often is that?")
    skipped = task_next(project=project, user=frank, task_type="label_prompter_reply")
    task_nack(project=project, task_id=skipped.pk, user=frank)
    review(project, [dave, erin], follow_up)
    report_create(project=project, message=second, user=frank, reason="a bit short")
    rank(project, dave, root, [second, first])
    rank(project, erin, root, [second, first])
    assert state(root) == "ready_for_export"
    return project, root, first, second, spam, follow_up


def lines(project, filters=None) -> list[dict]:
    return [json.loads(line) for line in collected_export(project=project, filters=filters)]


def test_a_finished_tree_exports_as_open_assistant_does(team):
    project, root, first, second, _spam, follow_up = finished(team)

    assert lines(project) == [
        {
            "message_tree_id": root.external_id,
            "tree_state": "ready_for_export",
            "prompt": {
                "message_id": root.external_id,
                "text": "How do I keep basil alive?",
                "role": "prompter",
                "lang": "en",
                "review_count": 2,
                "review_result": True,
                "deleted": False,
                "synthetic": False,
                "labels": {
                    "spam": {"value": 0.0, "count": 2},
                    "lang_mismatch": {"value": 0.0, "count": 2},
                    "quality": {"value": 1.0, "count": 2},
                },
                "replies": [
                    {
                        "message_id": second.external_id,
                        "parent_id": root.external_id,
                        "text": "Give it six hours of sun.",
                        "role": "assistant",
                        "lang": "en",
                        "review_count": 2,
                        "review_result": True,
                        "deleted": False,
                        "rank": 0,
                        "synthetic": False,
                        "emojis": {"red_flag": 1},
                        "labels": {
                            "spam": {"value": 0.0, "count": 2},
                            "lang_mismatch": {"value": 0.0, "count": 2},
                            "quality": {"value": 1.0, "count": 2},
                        },
                        "replies": [],
                    },
                    {
                        "message_id": first.external_id,
                        "parent_id": root.external_id,
                        "text": "Water it when the soil is dry.",
                        "role": "assistant",
                        "lang": "en",
                        "review_count": 2,
                        "review_result": True,
                        "deleted": False,
                        "rank": 1,
                        "synthetic": False,
                        "labels": {
                            "spam": {"value": 0.0, "count": 2},
                            "lang_mismatch": {"value": 0.0, "count": 2},
                            "quality": {"value": 0.5, "count": 2},
                        },
                        "replies": [
                            {
                                "message_id": follow_up.external_id,
                                "parent_id": first.external_id,
                                "text": "How often is that?",
                                "role": "prompter",
                                "lang": "en",
                                "review_count": 2,
                                "review_result": True,
                                "deleted": False,
                                "synthetic": False,
                                "emojis": {"_skip_labeling": 1},
                                "labels": {
                                    "spam": {"value": 0.0, "count": 2},
                                    "lang_mismatch": {"value": 0.0, "count": 2},
                                },
                                "replies": [],
                            }
                        ],
                    },
                ],
            },
        }
    ]


def test_the_export_reimports_through_the_oasst_importer_unchanged(team):
    project, *_ = finished(team)
    # A second tree, still growing, is not exported by default.
    prompt(project, team[0], "Another?")
    exported = "".join(collected_export(project=project))

    copy = dataset_get_or_create("copy")
    report = tree_import(dataset=copy, source=io.BytesIO(exported.encode()), format_name="oasst")

    assert report.committed and report.trees_created == 1
    # The same objects (PostgreSQL's jsonb keeps no key order inside metadata such as labels).
    again = "".join(trees_export(dataset=copy, format_name="oasst"))
    assert [json.loads(line) for line in again.splitlines()] == [
        json.loads(line) for line in exported.splitlines()
    ]


def test_review_result_is_given_only_when_true_or_after_more_than_two_reviews(team):
    alice, bob, carol, dave, erin, frank = team
    unaccepted = ExportFilters(states=("growing",), accepted_only=False)
    project = collect_project(team, num_reviews_reply=3, goal_tree_size=5)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    rejected, pending = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin, frank], rejected, SPAM)
    review(project, [dave, erin], pending, SPAM)

    replies = {r["message_id"]: r for r in lines(project, unaccepted)[0]["prompt"]["replies"]}

    assert replies[rejected.external_id]["review_result"] is False  # three reviews
    assert "review_result" not in replies[pending.external_id]  # two: not decided, left out
    assert [
        r["message_id"] for r in lines(project, ExportFilters(states=("growing",)))[0]["prompt"]["replies"]
    ] == []


def test_deleted_messages_are_left_out_unless_asked_for_and_ranks_close_up(team):
    project, _root, first, second, _spam, _follow_up = finished(team)
    message_delete(project=project, message=second)

    replies = lines(project)[0]["prompt"]["replies"]
    assert [(r["message_id"], r["rank"]) for r in replies] == [(first.external_id, 0)]

    with_deleted = lines(project, ExportFilters(include_deleted=True))[0]["prompt"]["replies"]
    assert [(r["message_id"], r["rank"], r["deleted"]) for r in with_deleted] == [
        (second.external_id, 0, True),
        (first.external_id, 1, False),
    ]


def test_filters_by_state_language_and_synthetic(team):
    project, _root, first, *_ = finished(team)
    alice = team[0]
    task = task_next(project=project, user=alice, task_type="initial_prompt")
    german = task_submit(project=project, task_id=task.pk, user=alice, data={"text": "Hallo?", "lang": "de"})

    in_review = ExportFilters(states=("initial_prompt_review",), accepted_only=False)
    assert [t["message_tree_id"] for t in lines(project, in_review)] == [german.created_message.external_id]
    # Accepted messages only (the default): a prompt still in review is not, so its tree is left out.
    assert lines(project, ExportFilters(states=("initial_prompt_review",))) == []
    every = ExportFilters(states=("ready_for_export", "initial_prompt_review"), accepted_only=False)
    assert len(lines(project, every)) == 2
    german_only = ExportFilters(states=every.states, langs=("de",), accepted_only=False)
    assert [t["prompt"]["lang"] for t in lines(project, german_only)] == ["de"]

    Message.objects.filter(pk=first.pk).update(synthetic=True, model_name="basil-bot")
    kept = lines(project, ExportFilters(synthetic="exclude"))[0]["prompt"]["replies"]
    assert [r["message_id"] for r in kept] == [lines(project)[0]["prompt"]["replies"][0]["message_id"]]
    assert lines(project)[0]["prompt"]["replies"][1]["model_name"] == "basil-bot"


def test_unknown_filters_are_refused():
    with pytest.raises(ValueError, match="unknown tree state 'done'"):
        ExportFilters(states=("done",))
    with pytest.raises(ValueError, match="synthetic must be one of include, exclude, got 'only'"):
        ExportFilters(synthetic="only")


def test_export_collected_writes_a_file(team, tmp_path, capsys):
    project, _root, *_ = finished(team)
    target = tmp_path / "trees.jsonl"

    call_command("export_collected", project.name, "-o", str(target))

    assert capsys.readouterr().out == f"exported 1 tree of {project.name} to {target}\n"
    assert target.read_text() == "".join(collected_export(project=project))
    assert Task.objects.filter(project=project, status="done").count() > 0


def test_reviews_and_rankings_appear_in_the_annotation_exports(team):
    project, root, first, second, spam, follow_up = finished(team)
    from annotation.exports import annotations_export

    records = [json.loads(line) for line in annotations_export(project=project, format_name="potato")]

    dave = [r["annotations"] for r in records if r["user"] == "dave"]
    assert dave == [
        {
            "label_reply": {
                "node_annotations": {
                    first.external_id: {"spam": 0.0, "lang_mismatch": 0.0, "quality": 0.5},
                    second.external_id: {"spam": 0.0, "lang_mismatch": 0.0, "quality": 1.0},
                    spam.external_id: {"spam": 1.0, "lang_mismatch": 0.0},
                    follow_up.external_id: {"spam": 0.0, "lang_mismatch": 0.0},
                }
            },
            "rank_replies": {
                "rankings": {
                    root.external_id: {
                        "order": [second.external_id, first.external_id],
                        "shown_order": dave_shown(project, root),
                    }
                }
            },
        }
    ]


def dave_shown(project, root) -> list[str]:
    return Task.objects.get(project=project, user__username="dave", type="rank_assistant_replies").payload[
        "replies"
    ]
