"""Handing out, acknowledging, skipping and submitting tasks: leases that hold a
place and expire, the per-person limit, and every refusal with a message
that says what to do.

Alice, Bob, Carol, Dave and Erin work in ``SMALL`` projects.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.collection.errors import NoTaskAvailable, NotCollectProject, TaskRefused, TooManyPending
from annotation.collection.models import Task
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_ack, task_nack, task_next
from annotation.problems import ProblemsError
from tests.annotation.collection.collect import (
    NOT_SPAM,
    collect_project,
    draw_lottery,
    fresh,
    person,
    prompt,
    reply,
    review,
    state,
)
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db
LEASE = timedelta(seconds=300)


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


def problems_of(call) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        call()
    return [str(problem) for problem in error.value.problems]


def refusal(call) -> tuple[str, str]:
    with pytest.raises(TaskRefused) as error:
        call()
    return error.value.code, error.value.message


def test_a_task_is_leased_for_recent_tasks_span_sec(team):
    alice = team[0]
    project = collect_project(team, recent_tasks_span_sec=120)
    now = timezone.now()

    task = task_next(project=project, user=alice, task_type="initial_prompt", now=now)

    assert (task.type, task.status, task.user, task.expires_at) == (
        "initial_prompt",
        "leased",
        alice,
        now + timedelta(seconds=120),
    )


def test_acknowledging_renews_the_lease(team):
    alice = team[0]
    project = collect_project(team)
    start = timezone.now()
    task = task_next(project=project, user=alice, task_type="initial_prompt", now=start)

    acked = task_ack(project=project, task_id=task.pk, user=alice, now=start + timedelta(seconds=100))

    assert (acked.acked_at, acked.expires_at) == (
        start + timedelta(seconds=100),
        start + timedelta(seconds=400),
    )


def test_an_expired_lease_is_renewed_on_acknowledgement_only_while_its_place_is_free(team):
    alice, bob, carol, dave, _ = team
    project = collect_project(team)
    prompt(project, alice)
    start = timezone.now()
    held = task_next(project=project, user=bob, task_type="label_initial_prompt", now=start)
    later = start + LEASE + timedelta(seconds=1)

    assert task_ack(project=project, task_id=held.pk, user=bob, now=later).expires_at == later + LEASE

    lapsed = task_next(project=project, user=carol, task_type="label_initial_prompt", now=start)
    task_next(project=project, user=dave, task_type="label_initial_prompt", now=later)  # takes carol's place
    assert refusal(lambda: task_ack(project=project, task_id=lapsed.pk, user=carol, now=later)) == (
        "lease_expired",
        "your time on this task ran out and others have done the work it held a place for; ask for a new task",
    )


def test_a_late_submission_is_kept_if_its_place_is_still_free(team):
    alice, bob, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)
    task = task_next(project=project, user=bob, task_type="label_initial_prompt")

    late = timezone.now() + LEASE * 3
    task_submit(project=project, task_id=task.pk, user=bob, data={"labels": NOT_SPAM}, now=late)

    assert (fresh(root).review_count, Task.objects.get(pk=task.pk).status) == (1, "done")


def test_a_late_submission_is_refused_once_others_took_its_place(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team, max_children_count=1, goal_tree_size=3)
    root = prompt(project, alice)
    review(project, [dave, erin], root)
    draw_lottery(project)
    lapsed = task_next(project=project, user=bob, task_type="assistant_reply", now=timezone.now() - LEASE * 2)
    reply(project, carol, root)  # the one reply the prompt may have

    assert refusal(
        lambda: task_submit(project=project, task_id=lapsed.pk, user=bob, data={"text": "Water it."})
    ) == (
        "lease_expired",
        "your time on this task ran out and others have done the work it held a place for; ask for a new task",
    )


def test_a_late_review_of_a_prompt_decided_meanwhile_is_refused(team):
    alice, bob, carol, dave, _ = team
    project = collect_project(team)
    root = prompt(project, alice)
    lapsed = task_next(
        project=project, user=bob, task_type="label_initial_prompt", now=timezone.now() - LEASE * 2
    )
    review(project, [carol, dave], root)  # the two reviews it needed

    assert refusal(
        lambda: task_submit(project=project, task_id=lapsed.pk, user=bob, data={"labels": NOT_SPAM})
    ) == ("tree_closed", "this conversation no longer takes reviews (it is prompt lottery waiting)")


def test_a_lapsed_task_closes_when_its_holder_asks_for_another(team):
    alice, _bob, *_ = team
    project = collect_project(team)
    start = timezone.now()
    lapsed = task_next(project=project, user=alice, task_type="initial_prompt", now=start)

    task_next(project=project, user=alice, task_type="initial_prompt", now=start + LEASE * 2)

    assert Task.objects.get(pk=lapsed.pk).status == "expired"
    assert refusal(
        lambda: task_submit(project=project, task_id=lapsed.pk, user=alice, data={"text": "Hi"})
    ) == ("task_expired", "your time on this task ran out and you have moved on; ask for a new task")


def test_a_person_holds_at_most_max_pending_tasks_per_user(team):
    alice = team[0]
    project = collect_project(team, max_pending_tasks_per_user=2)
    start = timezone.now()
    task_next(project=project, user=alice, task_type="initial_prompt", now=start)
    task_next(project=project, user=alice, task_type="initial_prompt", now=start)

    with pytest.raises(TooManyPending) as error:
        task_next(project=project, user=alice, task_type="initial_prompt", now=start)

    assert (error.value.code, error.value.message) == (
        "too_many_pending",
        "you have 2 open tasks in this project (at most 2); finish or skip one first",
    )
    # Expired tasks do not count.
    assert task_next(project=project, user=alice, task_type="initial_prompt", now=start + LEASE * 2)


def test_nothing_to_do_is_said_plainly(team):
    alice, _bob, *_ = team
    project = collect_project(team)

    with pytest.raises(NoTaskAvailable) as error:
        task_next(project=project, user=alice, task_type="rank_assistant_replies")
    assert (error.value.code, error.value.message) == (
        "no_task",
        'no "rank_assistant_replies" tasks are waiting for you right now; please try again later',
    )
    root = prompt(project, alice)
    with pytest.raises(NoTaskAvailable, match="no task on this message is waiting for you right now"):
        task_next(project=project, user=alice, message=root)  # her own prompt


def test_an_unknown_task_type_and_a_project_that_does_not_collect_are_refused(team):
    alice = team[0]
    project = collect_project(team)

    assert problems_of(lambda: task_next(project=project, user=alice, task_type="write_poem")) == [
        'type: unknown task type "write_poem" (expected one of random, initial_prompt, label_initial_prompt, '
        "assistant_reply, label_assistant_reply, prompter_reply, label_prompter_reply, rank_assistant_replies, "
        "rank_prompter_replies)"
    ]
    with pytest.raises(NotCollectProject, match='"annotated" does not collect trees'):
        task_next(project=ProjectFactory(name="annotated"), user=alice)


def test_someone_elses_task_is_not_found(team):
    alice, bob, *_ = team
    project = collect_project(team)
    task = task_next(project=project, user=alice, task_type="initial_prompt")

    assert refusal(lambda: task_ack(project=project, task_id=task.pk, user=bob)) == (
        "not_found",
        "no such task of yours in this project",
    )


def test_a_skipped_task_gives_its_place_back_and_cannot_be_submitted(team):
    alice, bob, carol, dave, _ = team
    project = collect_project(team)
    prompt(project, alice)
    skipped = task_next(project=project, user=bob, task_type="label_initial_prompt")
    task_next(project=project, user=carol, task_type="label_initial_prompt")

    task_nack(project=project, task_id=skipped.pk, user=bob, reason="cannot judge this")

    assert Task.objects.filter(pk=skipped.pk).values_list("status", "reason", "dont_show_again").get() == (
        "skipped",
        "cannot judge this",
        True,
    )
    assert task_next(project=project, user=dave, task_type="label_initial_prompt")
    assert refusal(
        lambda: task_submit(project=project, task_id=skipped.pk, user=bob, data={"labels": NOT_SPAM})
    ) == ("task_skipped", "you skipped this task")


def test_a_submitted_task_cannot_be_submitted_or_skipped_again(team):
    alice = team[0]
    project = collect_project(team)
    task = task_next(project=project, user=alice, task_type="initial_prompt")
    task_submit(project=project, task_id=task.pk, user=alice, data={"text": "Hi"})

    for call in (
        lambda: task_submit(project=project, task_id=task.pk, user=alice, data={"text": "Hi"}),
        lambda: task_nack(project=project, task_id=task.pk, user=alice),
    ):
        assert refusal(call) == ("task_done", "you already submitted this task")


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ({"text": "   "}, ["text: must not be empty"]),
        ({}, ["text: must not be empty"]),
        ({"text": "x" * 41}, ["text: must be at most 40 characters, got 41"]),
        (
            {"text": "Hi", "lang": "English"},
            ["lang: must be a language tag such as en or pt-BR, got a string"],
        ),
        ({"text": "Hi", "mood": "happy"}, ["mood: unknown key"]),
        ("Hi", ["must be an object, got a string"]),
    ],
)
def test_a_prompt_must_be_text_within_max_message_chars(team, data, problems):
    alice = team[0]
    project = collect_project(team, max_message_chars=40)
    task = task_next(project=project, user=alice, task_type="initial_prompt")

    assert (
        problems_of(lambda: task_submit(project=project, task_id=task.pk, user=alice, data=data)) == problems
    )


def test_a_prompt_starts_a_tree_in_its_language(team):
    alice = team[0]
    project = collect_project(team)
    task = task_next(project=project, user=alice, task_type="initial_prompt")

    done = task_submit(
        project=project, task_id=task.pk, user=alice, data={"text": "  Olá!  ", "lang": "pt-BR"}
    )

    root = done.created_message
    assert (root.text, root.lang, root.author, root.tree.external_id) == (
        "Olá!",
        "pt-BR",
        alice,
        root.external_id,
    )
    assert (done.tree_id, state(root), root.tree.collected.lang) == (
        root.tree_id,
        "initial_prompt_review",
        "pt-BR",
    )


@pytest.mark.parametrize(
    ("labels", "problems"),
    [
        ({"lang_mismatch": 0}, ["labels.spam: is required"]),
        ({"spam": 0.5}, ["labels.spam: is a flag: 0 or 1, got 0.5"]),
        ({"spam": 0, "quality": 2}, ["labels.quality: must be from 0 to 1, got 2"]),
        ({"spam": 0, "quality": "good"}, ["labels.quality: must be a number from 0 to 1, got a string"]),
        (
            {"spam": 0, "helpfulness": 1},
            [
                "labels.helpfulness: is not a label of this task; expected one of spam, lang_mismatch, quality, "
                "creativity, humor, toxicity, violence, not_appropriate, pii, hate_speech, sexual_content"
            ],
        ),
    ],
)
def test_labels_are_checked_against_the_task(team, labels, problems):
    alice, bob, *_ = team
    project = collect_project(team)
    prompt(project, alice)
    task = task_next(project=project, user=bob, task_type="label_initial_prompt")

    assert (
        problems_of(lambda: task_submit(project=project, task_id=task.pk, user=bob, data={"labels": labels}))
        == problems
    )


def test_label_tasks_are_simple_or_full_with_the_configured_probability(team):
    alice, bob, _carol, _dave, _erin = team
    project = collect_project(team, p_full_labeling_review_prompt=0.0)
    prompt(project, alice)

    task = task_next(project=project, user=bob, task_type="label_initial_prompt")

    # Simple mode: the mandatory labels and lang_mismatch (replies also get quality).
    assert task.payload == {"mode": "simple", "labels": ["spam", "lang_mismatch"], "mandatory": ["spam"]}


def test_a_reply_to_a_message_deleted_meanwhile_is_refused(team):
    alice, bob, carol, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    task = task_next(project=project, user=bob, task_type="assistant_reply")
    from annotation.collection.moderation import message_delete, tree_resume

    message_delete(project=project, message=root)  # the prompt: its tree halts
    assert refusal(
        lambda: task_submit(project=project, task_id=task.pk, user=bob, data={"text": "Water it."})
    ) == ("tree_closed", "this conversation no longer takes replies (it is halted by moderator)")
    from annotation.collection.models import Deletion
    from annotation.collection.moderation import deletion_undo

    deletion_undo(project=project, deletion=Deletion.objects.get())
    tree_resume(project=project, tree_id=root.tree_id)
    assert reply(project, carol, root).role == "assistant"


def test_random_draws_only_among_the_kinds_of_work_there_is(team):
    alice, bob, carol, dave, _erin = team
    project = collect_project(team)
    root = prompt(project, alice)

    drawn = Counter()
    for seed in range(40):
        task = task_next(project=project, user=bob, rng=random.Random(seed))
        drawn[task.type] += 1
        task_nack(project=project, task_id=task.pk, user=bob, dont_show_again=False)

    # Label prompt (weight 5) against prompt (weight 0.01): almost always the review.
    assert drawn["label_initial_prompt"] >= 38 and set(drawn) <= {"label_initial_prompt", "initial_prompt"}
    review(project, [bob, carol], root)
    draw_lottery(project)
    assert {task_next(project=project, user=dave, rng=random.Random(seed)).type for seed in range(3)} <= {
        "assistant_reply",
        "initial_prompt",
    }


def test_reply_tasks_prefer_lonely_children(team):
    alice, bob, carol, dave, erin = team
    # Two prompts growing; one has a reply already: with p_lonely_child_extension 1 it comes first.
    project = collect_project(team, p_lonely_child_extension=1.0, max_children_count=2)
    lonely, bare = prompt(project, alice, "One?"), prompt(project, dave, "Two?")
    review(project, [bob, carol], lonely)
    review(project, [bob, carol], bare)
    draw_lottery(project)
    first = reply(project, bob, lonely)
    review(project, [dave, erin], first)

    picked = {
        task_next(
            project=project, user=carol, task_type="assistant_reply", rng=random.Random(seed)
        ).message_id
        for seed in range(1)
    }

    assert picked == {lonely.pk}
