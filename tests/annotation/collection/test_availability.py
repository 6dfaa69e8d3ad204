"""What each person may be handed, counted as Open-Assistant counts it — with
tasks out counting against every limit, so availability never promises a
place that someone is already working on.

Alice, Bob, Carol, Dave and Erin work in ``SMALL`` projects.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.collection.availability import RANDOM, availability
from annotation.collection.tasks import task_nack, task_next, workflow_config
from tests.annotation.collection.collect import collect_project, draw_lottery, person, prompt, reply, review

pytestmark = pytest.mark.django_db

NOTHING = {
    "random": 0,
    "initial_prompt": 0,
    "label_initial_prompt": 0,
    "label_assistant_reply": 0,
    "label_prompter_reply": 0,
    "assistant_reply": 0,
    "prompter_reply": 0,
    "rank_assistant_replies": 0,
    "rank_prompter_replies": 0,
}


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


def counts(project, user, now=None):
    config = workflow_config(project)
    return availability(project=project, user=user, config=config, now=now or timezone.now()).counts()


def test_an_empty_project_wants_prompts_as_the_lottery_counts_them(team):
    alice = team[0]
    project = collect_project(
        team, max_active_trees=3, max_initial_prompt_review=5, max_prompt_lottery_waiting=20
    )

    # min(missing growing trees + room in review, room in the lottery) = min(3 + 5, 20)
    assert counts(project, alice) == NOTHING | {"initial_prompt": 8, RANDOM: 8}


def test_prompt_tasks_out_count_against_the_prompts_wanted(team):
    alice, bob, *_ = team
    project = collect_project(team, max_active_trees=1, max_initial_prompt_review=1)
    task_next(project=project, user=alice, task_type="initial_prompt")

    assert counts(project, bob)["initial_prompt"] == 1
    task_next(project=project, user=bob, task_type="initial_prompt")
    assert counts(project, alice)["initial_prompt"] == 0


def test_nobody_reviews_their_own_prompt_or_one_they_reviewed(team):
    alice, bob, carol, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)

    assert counts(project, alice)["label_initial_prompt"] == 0
    assert counts(project, bob)["label_initial_prompt"] == 1
    review(project, [bob], root)
    assert counts(project, bob)["label_initial_prompt"] == 0
    assert counts(project, carol)["label_initial_prompt"] == 1


def test_label_tasks_out_count_against_the_reviews_required(team):
    alice, bob, carol, dave, _ = team
    project = collect_project(team)  # two reviews per prompt
    prompt(project, alice)
    task_next(project=project, user=bob, task_type="label_initial_prompt")
    assert counts(project, carol)["label_initial_prompt"] == 1

    task_next(project=project, user=carol, task_type="label_initial_prompt")

    assert counts(project, dave)["label_initial_prompt"] == 0


def test_an_expired_task_holds_no_place(team):
    alice, bob, carol, dave, _ = team
    project = collect_project(team)
    prompt(project, alice)
    task_next(project=project, user=bob, task_type="label_initial_prompt")
    task_next(project=project, user=carol, task_type="label_initial_prompt")

    later = timezone.now() + timedelta(seconds=301)  # recent_tasks_span_sec is 300

    assert counts(project, dave, later)["label_initial_prompt"] == 1


def test_a_skip_hides_the_message_from_that_person_only_when_asked(team):
    alice, bob, carol, *_ = team
    project = collect_project(team)
    prompt(project, alice)
    kept = task_next(project=project, user=bob, task_type="label_initial_prompt")
    task_nack(project=project, task_id=kept.pk, user=bob, dont_show_again=False)
    assert counts(project, bob)["label_initial_prompt"] == 1

    hidden = task_next(project=project, user=bob, task_type="label_initial_prompt")
    task_nack(project=project, task_id=hidden.pk, user=bob, reason="not my language")

    assert counts(project, bob)["label_initial_prompt"] == 0
    assert counts(project, carol)["label_initial_prompt"] == 1


def growing_tree(team, **workflow):
    alice, bob, carol, *_ = team
    project = collect_project(team, **workflow)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    return project, root


def test_replies_are_wanted_below_max_children_count_counting_the_tasks_out(team):
    _alice, bob, carol, dave, _erin = team
    project, root = growing_tree(team)  # two replies per message

    assert counts(project, bob)["assistant_reply"] == 1
    task_next(project=project, user=bob, task_type="assistant_reply")
    reply(project, carol, root)

    assert counts(project, dave)["assistant_reply"] == 0


def test_nobody_replies_twice_to_one_message(team):
    _alice, bob, carol, _dave, _erin = team
    project, root = growing_tree(team, max_children_count=2)
    reply(project, bob, root)

    assert counts(project, bob)["assistant_reply"] == 0
    assert counts(project, carol)["assistant_reply"] == 1


def test_an_assistant_message_takes_num_prompter_replies_and_no_more(team):
    _alice, bob, carol, dave, erin = team
    project, root = growing_tree(team, goal_tree_size=5)
    answer = reply(project, bob, root)
    review(project, [dave, erin], answer)
    assert counts(project, carol)["prompter_reply"] == 1

    task_next(project=project, user=carol, task_type="prompter_reply")

    assert counts(project, dave)["prompter_reply"] == 0


def test_no_replies_below_the_trees_depth(team):
    _alice, bob, carol, dave, erin = team
    project, root = growing_tree(team, max_tree_depth=1, goal_tree_size=3)
    answer = reply(project, bob, root)
    review(project, [dave, erin], answer)

    assert counts(project, carol)["prompter_reply"] == 0  # depth 1 is the last level


def test_reply_tasks_out_count_against_the_trees_goal_size(team):
    _alice, bob, carol, _dave, _erin = team
    project, _root = growing_tree(team, goal_tree_size=2, max_children_count=3)
    task_next(project=project, user=bob, task_type="assistant_reply")

    # The prompt and the reply being written make the goal of 2: nothing more is wanted.
    assert counts(project, carol)["assistant_reply"] == 0


def test_replies_awaiting_review_and_not_own_are_counted_by_role(team):
    alice, bob, carol, dave, erin = team
    # One tree may grow and none may wait for review: no more prompts are wanted.
    project, root = growing_tree(team, goal_tree_size=5, max_active_trees=1, max_initial_prompt_review=0)
    answer = reply(project, bob, root)
    review(project, [dave, erin], answer)
    reply(project, carol, root)
    reply(project, alice, answer)

    assert counts(project, dave) == NOTHING | {
        "label_assistant_reply": 1,
        "label_prompter_reply": 1,
        RANDOM: 2,
    }
    assert counts(project, carol)["label_assistant_reply"] == 0  # her own


def test_ranking_is_wanted_of_people_without_a_reply_among_the_siblings(team):
    alice, bob, carol, dave, erin = team
    project, root = growing_tree(team, goal_tree_size=3, max_active_trees=1, max_initial_prompt_review=0)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)

    # The tree left growing: a growing slot is free, so a prompt is wanted again.
    assert counts(project, dave) == NOTHING | {"rank_assistant_replies": 1, "initial_prompt": 1, RANDOM: 2}
    assert counts(project, bob)["rank_assistant_replies"] == 0
    assert counts(project, alice)["rank_assistant_replies"] == 1
