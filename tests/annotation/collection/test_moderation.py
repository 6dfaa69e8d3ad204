"""Moderation: halt and resume a tree, soft-delete a message with its replies and
undo it, and reports (red flags) feeding auto-moderation — through the services.

Alice, Bob, Carol, Dave and Erin work in ``SMALL`` projects.
"""

from __future__ import annotations

import pytest

from annotation.collection.errors import ModerationRefused, NoTaskAvailable
from annotation.collection.models import Deletion, Report
from annotation.collection.moderation import (
    deletion_undo,
    message_delete,
    report_create,
    tree_halt,
    tree_resume,
)
from annotation.collection.tasks import task_nack, task_next
from tests.annotation.collection.collect import (
    collect_project,
    draw_lottery,
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


def refused(call) -> tuple[str, str]:
    with pytest.raises(ModerationRefused) as error:
        call()
    return error.value.code, error.value.message


def growing(team, **workflow):
    alice, bob, carol, *_ = team
    project = collect_project(team, **workflow)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    assert state(root) == "growing"
    return project, root


def test_a_halted_tree_hands_out_nothing_until_resumed(team):
    _alice, bob, *_ = team
    project, root = growing(team)

    assert tree_halt(project=project, tree_id=root.tree_id) == "halted_by_moderator"
    with pytest.raises(NoTaskAvailable):
        task_next(project=project, user=bob, task_type="assistant_reply")
    assert refused(lambda: tree_halt(project=project, tree_id=root.tree_id)) == (
        "already_halted",
        "this tree is already halted",
    )

    assert tree_resume(project=project, tree_id=root.tree_id) == "growing"  # it had won the lottery
    assert task_next(project=project, user=bob, task_type="assistant_reply").message_id == root.pk


def test_a_tree_halted_before_the_lottery_resumes_in_review(team):
    alice, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)
    tree_halt(project=project, tree_id=root.tree_id)

    assert tree_resume(project=project, tree_id=root.tree_id) == "initial_prompt_review"


def test_a_resumed_tree_moves_on_as_its_messages_imply(team):
    _alice, bob, carol, dave, erin = team
    project, root = growing(team, goal_tree_size=3)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    tree_halt(project=project, tree_id=root.tree_id)
    review_task = task_next  # nothing may be handed out on a halted tree
    with pytest.raises(NoTaskAvailable):
        review_task(project=project, user=dave, task_type="label_assistant_reply")
    tree_resume(project=project, tree_id=root.tree_id)
    review(project, [dave, erin], second)

    assert state(root) == "ranking"


def test_only_a_halted_tree_resumes(team):
    project, root = growing(team)

    assert refused(lambda: tree_resume(project=project, tree_id=root.tree_id)) == (
        "not_halted",
        "only a halted tree can be resumed; this one is growing",
    )


def test_deleting_a_message_deletes_its_replies_and_undo_restores_exactly_those(team):
    alice, bob, carol, dave, erin = team
    project, root = growing(team, goal_tree_size=5, max_tree_depth=3)
    first = reply(project, bob, root)
    review(project, [dave, erin], first)
    follow_up = reply(project, alice, first)
    review(project, [dave, erin], follow_up)
    answer = reply(project, carol, follow_up)
    message_delete(project=project, message=answer, by=dave, reason="rude")

    deletion = message_delete(project=project, message=first, by=dave, reason="off topic")

    assert sorted(deletion.message_ids) == sorted([first.pk, follow_up.pk])  # the answer was already gone
    assert [fresh(m).deleted for m in (root, first, follow_up, answer)] == [False, True, True, True]
    assert refused(lambda: message_delete(project=project, message=follow_up)) == (
        "already_deleted",
        "this message is already deleted",
    )

    deletion_undo(project=project, deletion=deletion, by=erin)

    assert [fresh(m).deleted for m in (root, first, follow_up, answer)] == [False, False, False, True]
    assert Deletion.objects.get(pk=deletion.pk).undone_by == erin
    assert refused(lambda: deletion_undo(project=project, deletion=deletion)) == (
        "already_undone",
        "this deletion was already undone",
    )


def test_deleted_replies_free_their_places(team):
    _alice, bob, carol, _dave, _erin = team
    project, root = growing(team, max_children_count=1, goal_tree_size=3)
    first = reply(project, bob, root)
    with pytest.raises(NoTaskAvailable):
        task_next(project=project, user=carol, task_type="assistant_reply")

    message_delete(project=project, message=first)

    assert reply(project, carol, root).position == 1


def test_deleting_the_prompt_halts_the_tree(team):
    project, root = growing(team)

    message_delete(project=project, message=root)

    assert state(root) == "halted_by_moderator"


def test_deleting_a_reply_that_held_up_the_ranking_lets_the_tree_be_scored(team):
    _alice, bob, carol, dave, erin = team
    project, root = growing(team, goal_tree_size=3, max_children_count=3)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    assert state(root) == "ranking"
    rank(project, dave, root, [first, second])

    message_delete(project=project, message=second)

    # One accepted reply is left: nothing to rank any more.
    assert state(root) == "ready_for_export"


def test_enough_red_flags_on_a_prompt_abort_its_tree(team):
    alice, bob, carol, _dave, _erin = team
    project = collect_project(team, auto_mod_red_flags=2)
    root = prompt(project, alice)

    report_create(project=project, message=root, user=bob, reason="spam")
    assert state(root) == "initial_prompt_review"
    assert refused(lambda: report_create(project=project, message=root, user=bob)) == (
        "already_reported",
        "you already reported this message",
    )
    report_create(project=project, message=root, user=carol)

    assert state(root) == "aborted_low_grade"
    assert Report.objects.filter(message=root).count() == 2


def test_enough_red_flags_on_a_reply_delete_it_with_its_replies(team):
    alice, bob, carol, dave, erin = team
    project, root = growing(team, auto_mod_red_flags=2, goal_tree_size=5)
    first = reply(project, bob, root)
    review(project, [dave, erin], first)
    follow_up = reply(project, alice, first)

    report_create(project=project, message=first, user=carol)
    report_create(project=project, message=first, user=dave)

    assert (fresh(first).deleted, fresh(follow_up).deleted, state(root)) == (True, True, "growing")
    assert Deletion.objects.get().reason == "auto-moderation: 2 red flags"


def test_auto_moderation_can_be_switched_off(team):
    alice, bob, _carol, *_ = team
    project = collect_project(team, auto_mod_red_flags=1, auto_mod_enabled=False)
    root = prompt(project, alice)

    report_create(project=project, message=root, user=bob)

    assert state(root) == "initial_prompt_review"


def test_too_many_people_skipping_a_reply_halt_the_tree(team):
    _alice, bob, carol, _dave, _erin = team
    project, root = growing(team, auto_mod_max_skip_reply=2)

    for person_ in (bob, carol):
        task = task_next(project=project, user=person_, task_type="assistant_reply")
        task_nack(project=project, task_id=task.pk, user=person_, reason="I do not know")

    assert state(root) == "halted_by_moderator"


def test_moderating_a_tree_of_another_project_is_refused(team):
    _project, root = growing(team)
    other = collect_project([])

    assert refused(lambda: tree_halt(project=other, tree_id=root.tree_id)) == (
        "not_found",
        "no such tree in this project",
    )
