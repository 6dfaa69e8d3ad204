"""A collected tree's life through the services: reviewed, drawn in the lottery,
grown, ranked and scored — as Open-Assistant's tree manager does it.

Alice writes prompts; Bob and Carol review them and reply as the assistant;
Dave and Erin review replies and rank. Trees are ``SMALL``: a prompt and
three replies, two reviews per message, two rankings per branch point.
"""

from __future__ import annotations

import random

import pytest
from django.core.management import call_command

from annotation.collection import scoring
from annotation.collection.advance import scoring_retry
from annotation.collection.errors import NoTaskAvailable
from annotation.collection.models import CollectedTree, Task
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_next
from annotation.models import Annotation
from annotation.projects.services import project_config_update
from tests.annotation.collection.collect import (
    NOT_SPAM,
    SPAM,
    collect_project,
    fresh,
    person,
    prompt,
    rank,
    reply,
    review,
    state,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


def test_a_tree_goes_from_prompt_to_ready_for_export(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team)

    root = prompt(project, alice, "How do I keep basil alive?")
    assert state(root) == "initial_prompt_review"
    assert (root.role, root.depth, root.review_count, root.review_result) == ("user", 0, 0, None)

    review(project, [bob], root)
    assert (fresh(root).review_count, fresh(root).review_result, state(root)) == (
        1,
        None,
        "initial_prompt_review",
    )
    review(project, [carol], root)
    # Accepted: it waits in the lottery, which the next request for a task draws.
    assert (fresh(root).review_result, state(root)) == (True, "prompt_lottery_waiting")
    first = reply(project, bob, root, "Water it when the soil is dry.")
    assert state(root) == "growing"
    assert CollectedTree.objects.get(pk=root.tree_id).won_prompt_lottery_at is not None

    second = reply(project, carol, root, "Give it six hours of sun.")
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    follow_up = reply(project, alice, first, "How often is that?")
    assert (first.role, second.role, follow_up.role) == ("assistant", "assistant", "user")
    assert state(root) == "growing"  # four messages, but the last awaits its reviews
    review(project, [dave, erin], follow_up)
    assert state(root) == "ranking"

    rank(project, dave, root, [second, first])
    assert state(root) == "ranking"
    rank(project, alice, root, [second, first])
    # Both rankings are in: scored at once, second reply best.
    assert state(root) == "ready_for_export"
    assert [fresh(m).rank for m in (root, first, second, follow_up)] == [None, 1, 0, None]


def test_reviews_and_rankings_are_stored_as_annotations(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave], first, {"spam": 0, "lang_mismatch": 0, "quality": 0.75})
    review(project, [dave], second, NOT_SPAM)

    def payload(user, scheme):
        return Annotation.objects.get(project=project, tree_id=root.tree_id, user=user, scheme=scheme).payload

    assert payload(bob, "label_prompt") == {
        "node_annotations": {root.external_id: {"spam": 0.0, "lang_mismatch": 0.0}}
    }
    assert payload(dave, "label_reply") == {
        "node_annotations": {
            first.external_id: {"spam": 0.0, "lang_mismatch": 0.0, "quality": 0.75},
            second.external_id: {"spam": 0.0, "lang_mismatch": 0.0},
        }
    }
    review(project, [erin], first)
    review(project, [erin], second)
    reply(project, alice, first)
    follow_up = Task.objects.get(type="prompter_reply").created_message
    review(project, [dave, erin], follow_up)
    task = rank(project, dave, root, [second, first])

    assert payload(dave, "rank_replies") == {
        "rankings": {
            root.external_id: {
                "order": [second.external_id, first.external_id],
                "shown_order": task.payload["replies"],
            }
        }
    }
    assert sorted(task.payload["replies"]) == sorted([first.external_id, second.external_id])
    # One row per person, tree and scheme, whatever the number of messages they judged.
    assert sorted(
        Annotation.objects.filter(project=project, status="submitted", source="human").values_list(
            "user__username", "scheme"
        )
    ) == [
        ("bob", "label_prompt"),
        ("carol", "label_prompt"),
        ("dave", "label_reply"),
        ("dave", "rank_replies"),
        ("erin", "label_reply"),
    ]


def test_a_rejected_prompt_aborts_its_tree(team):
    alice, bob, carol, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)

    review(project, [bob], root, SPAM)
    review(project, [carol], root, NOT_SPAM)  # 1 - 0.5 = 0.5, not above 0.6

    assert (fresh(root).review_result, state(root)) == (False, "aborted_low_grade")


def test_a_rejected_reply_does_not_abort_its_tree_and_frees_its_place(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team, max_children_count=1, goal_tree_size=3)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    spam = reply(project, bob, root, "buy cheap watches")
    with pytest.raises(NoTaskAvailable):  # the reply awaiting review holds the only place
        task_next(project=project, user=carol, task_type="assistant_reply", message=root)

    review(project, [dave, erin], spam, SPAM)

    assert (fresh(spam).review_result, state(root)) == (False, "growing")
    # The rejected reply no longer counts against max_children_count 1.
    assert reply(project, carol, root, "Water it.").role == "assistant"


def test_acceptance_needs_a_score_strictly_above_the_threshold(team):
    alice, bob, carol, *_ = team
    # 1 - mean(spam) - mean(lang_mismatch) = 1 - 0 - 0.5 = 0.5: exactly the threshold.
    project = collect_project(team, acceptance_threshold_initial_prompt=0.5)
    root = prompt(project, alice)

    review(project, [bob], root, {"spam": 0, "lang_mismatch": 1})
    review(project, [carol], root, NOT_SPAM)

    assert fresh(root).review_result is False


def test_the_lottery_lets_only_max_active_trees_grow(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team, max_active_trees=1)
    first, second = prompt(project, alice, "One?"), prompt(project, dave, "Two?")
    review(project, [bob, carol], first)
    review(project, [bob, carol], second)
    task_next(project=project, user=erin, task_type="assistant_reply")

    # Drawn on the requests for tasks, while fewer than max_active_trees grow.
    assert sorted([state(first), state(second)]) == ["growing", "prompt_lottery_waiting"]


def test_a_tree_with_nothing_to_rank_goes_straight_to_ready_for_export(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team, goal_tree_size=3)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    answer = reply(project, bob, root)
    review(project, [dave, erin], answer)
    follow_up = reply(project, alice, answer)  # one reply per message: no sibling group anywhere

    review(project, [dave, erin], follow_up)

    assert state(root) == "ready_for_export"
    assert Task.objects.filter(type__startswith="rank").count() == 0


def test_each_tree_keeps_the_goal_and_limits_it_was_created_with(team):
    alice, bob, _carol, *_ = team
    project = collect_project(team)
    before = prompt(project, alice)
    project_config_update(
        project=project, config_yaml="workflow: {goal_tree_size: 9, max_children_count: 4}\n"
    )
    after = prompt(project, bob)

    kept = {
        tree.pk: (tree.goal_tree_size, tree.max_depth, tree.max_children_count)
        for tree in CollectedTree.objects.all()
    }
    assert kept == {before.tree_id: (4, 2, 2), after.tree_id: (9, 3, 4)}


def test_a_random_goal_size_lies_between_the_minimum_and_the_goal(team):
    alice, *_ = team
    project = collect_project(team, random_goal_tree_size=True, min_goal_tree_size=2, goal_tree_size=5)

    for index in range(12):
        task = task_next(project=project, user=alice, task_type="initial_prompt")
        data = {"text": f"prompt {index}"}
        task_submit(project=project, task_id=task.pk, user=alice, data=data, rng=random.Random(index))
    goals = set(CollectedTree.objects.values_list("goal_tree_size", flat=True))

    assert goals <= {2, 3, 4, 5} and len(goals) > 1


def grown_to_ranking(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    follow_up = reply(project, alice, first)
    review(project, [dave, erin], follow_up)
    assert state(root) == "ranking"
    return project, root, first, second


def test_a_scoring_failure_goes_to_scoring_failed_and_a_retry_scores_it(team, monkeypatch):
    _alice, _bob, _carol, dave, erin = team
    project, root, first, second = grown_to_ranking(team)

    def broken(rankings):
        raise RuntimeError("scoring is broken today")

    monkeypatch.setattr(scoring, "ranked_pairs", broken)
    rank(project, dave, root, [first, second])
    rank(project, erin, root, [first, second])
    assert state(root) == "scoring_failed"
    assert fresh(first).rank is None

    monkeypatch.undo()
    report = scoring_retry(project=project)

    assert (report.scored, report.failed, report.back_to_ranking) == (1, 0, 0)
    assert (state(root), fresh(first).rank, fresh(second).rank) == ("ready_for_export", 0, 1)


def test_retry_scoring_from_the_command_line(team, monkeypatch, capsys):
    _alice, _bob, _carol, dave, erin = team
    project, root, first, second = grown_to_ranking(team)
    monkeypatch.setattr(scoring, "ranked_pairs", lambda rankings: 1 / 0)
    rank(project, dave, root, [first, second])
    rank(project, erin, root, [second, first])
    monkeypatch.undo()

    call_command("retry_scoring", project.name)

    assert state(root) == "ready_for_export"
    assert (
        capsys.readouterr().out
        == f"{project.name}: 1 scored, 0 failed again, 0 back to ranking (rankings missing)\n"
    )
