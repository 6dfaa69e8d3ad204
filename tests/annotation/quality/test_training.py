"""The training phase: rounds of gold items answered with feedback before real work, passed
at the configured accuracy, retaken with fresh items while attempts remain, failed for good
after that. Training items cannot be skipped, nor changed once their answers are shown.

Alice and Bob are new annotators; Maggie manages the project.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Membership
from annotation.projects.quality_config import TrainingConfig
from annotation.projects.services import membership_add
from annotation.quality.training import (
    FAILED,
    IN_PROGRESS,
    NOT_STARTED,
    OFF,
    PASSED,
    training_state,
    training_status,
)
from annotation.work.assignment import NoItemAvailable, item_next
from annotation.work.submissions import NotAssigned, draft_save, item_skip
from tests.annotation.annotator_items import person
from tests.annotation.quality.test_gold import T0, answer, external, gold_project

pytestmark = pytest.mark.django_db

TRAINING = "quality: {training: {items: 2, pass_accuracy: 0.75, attempts: 2}}\n"
S = "submitted"


@pytest.fixture
def alice():
    return person("alice")


@pytest.fixture
def bob():
    return person("bob")


# The state, from the training assignments in the order they were handed out

ROUNDS_OF_TWO = TrainingConfig(items=2, pass_accuracy=0.75, attempts=2)


@pytest.mark.parametrize(
    ("answers", "state", "answered", "attempt", "score"),
    [
        ([], NOT_STARTED, 0, 0, None),
        ([("leased", None)], IN_PROGRESS, 0, 1, None),
        ([(S, 1.0)], IN_PROGRESS, 1, 1, 1.0),
        ([(S, 1.0), (S, 0.5)], PASSED, 2, 1, 0.75),
        ([(S, 1.0), (S, 0.0)], IN_PROGRESS, 0, 2, None),
        ([(S, 1.0), (S, 0.0), (S, 1.0), (S, 1.0)], PASSED, 2, 2, 1.0),
        ([(S, 0.0), (S, 0.0), (S, 1.0), (S, 0.0)], FAILED, 2, 2, 0.5),
        # An item with nothing scored in it counts for neither side.
        ([(S, None), (S, 1.0)], PASSED, 2, 1, 1.0),
    ],
)
def test_the_training_state_follows_the_rounds_answered(answers, state, answered, attempt, score):
    status = training_state(ROUNDS_OF_TWO, answers)
    assert (status.state, status.answered, status.attempt, status.score) == (state, answered, attempt, score)


def test_without_a_limit_on_attempts_a_failed_round_is_never_the_last():
    status = training_state(TrainingConfig(items=1, pass_accuracy=1.0, attempts=None), [(S, 0.0)] * 5)
    assert (status.state, status.attempt) == (IN_PROGRESS, 6)


def test_no_training_configured_is_off():
    assert training_state(TrainingConfig(items=0), [(S, 1.0)]).state == OFF


# The flow


def test_training_items_come_first_in_the_order_gold_items_were_added(alice):
    project = gold_project(work=3, gold=3, quality=TRAINING)

    first = answer(item_next(project=project, user=alice, now=T0))
    assert (first.kind, external(first), first.gold_score) == ("training", "g1", 1.0)
    assert training_status(project=project, user=alice).state == IN_PROGRESS
    second = answer(item_next(project=project, user=alice, now=T0), "negative")
    assert (second.kind, external(second), second.gold_score) == ("training", "g2", 0.0)

    # A mean of 0.5 is under 0.75: a second attempt starts, with the gold item left.
    status = training_status(project=project, user=alice)
    assert (status.state, status.attempt, status.answered) == (IN_PROGRESS, 2, 0)
    third = item_next(project=project, user=alice, now=T0)
    assert (third.kind, external(third)) == ("training", "g3")


def test_passing_the_training_opens_the_real_work(alice):
    project = gold_project(work=2, gold=2, quality=TRAINING)

    kinds = [answer(item_next(project=project, user=alice, now=T0)).kind for _ in range(4)]

    assert kinds == ["training", "training", "work", "work"]
    assert training_status(project=project, user=alice).state == PASSED


def test_failing_every_attempt_stops_the_annotators_work_with_the_reason(alice, bob):
    project = gold_project(work=2, gold=4, quality=TRAINING)
    for _ in range(4):
        answer(item_next(project=project, user=alice, now=T0), "negative")

    with pytest.raises(NoItemAvailable) as nothing:
        item_next(project=project, user=alice, now=T0)

    assert nothing.value.reason == "training_failed"
    assert training_status(project=project, user=alice).state == FAILED
    # Others are not held back.
    assert item_next(project=project, user=bob, now=T0).kind == "training"


def test_a_training_without_enough_gold_items_says_it_is_not_ready(alice):
    project = gold_project(work=2, gold=1, quality=TRAINING)
    answer(item_next(project=project, user=alice, now=T0))

    with pytest.raises(NoItemAvailable) as nothing:
        item_next(project=project, user=alice, now=T0)

    assert nothing.value.reason == "training"
    assert "not ready" in nothing.value.message


def test_training_items_count_toward_no_quota_and_no_overlap(alice):
    project = gold_project(work=2, gold=2, quality=TRAINING, max_items_per_user=2)

    handed = [answer(item_next(project=project, user=alice, now=T0)) for _ in range(4)]

    assert [assignment.kind for assignment in handed] == ["training", "training", "work", "work"]
    assert [(item.active_count, item.submitted_count) for item in project.items.filter(is_gold=True)] == [
        (0, 0)
    ] * 2
    with pytest.raises(NoItemAvailable, match="your 2 items"):
        item_next(project=project, user=alice, now=T0)


def test_a_training_item_cannot_be_skipped(alice):
    project = gold_project(work=1, gold=2, quality=TRAINING)
    held = item_next(project=project, user=alice, now=T0)

    with pytest.raises(NotAssigned) as refused:
        item_skip(project=project, tree=held.tree, user=alice)

    assert refused.value.code == "training"
    assert Assignment.objects.get(pk=held.pk).status == "leased"


def test_a_submitted_training_item_cannot_be_changed(alice):
    project = gold_project(work=1, gold=2, quality=TRAINING)
    submitted = answer(item_next(project=project, user=alice, now=T0), "negative")

    with pytest.raises(NotAssigned) as refused:
        draft_save(
            project=project,
            tree=submitted.tree,
            user=alice,
            answers={"sentiment": {"label": "positive"}},
            version=submitted.version,
        )

    assert refused.value.code == "already_submitted"
    assert Assignment.objects.get(pk=submitted.pk).gold_score == 0.0


# Feedback over the API and on the page


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def submit_url(project, tree_id: int) -> str:
    return reverse("api:item-submit", kwargs={"name": project.name, "tree_id": tree_id})


def test_submitting_a_training_item_answers_with_the_expected_answers_beside_the_annotators(alice):
    project = gold_project(work=1, gold=2, quality=TRAINING)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    client = client_for(alice)
    item = client.post(reverse("api:item-next", kwargs={"name": project.name})).json()

    response = client.post(
        submit_url(project, item["tree"]["id"]),
        data=json.dumps(
            {"annotations": {"sentiment": {"label": "negative"}, "notes": {"text": "hm"}}, "version": 1}
        ),
        content_type="application/json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["feedback"] == {
        "score": 0.0,
        "explanation": "It thanks the agent.",
        "explanation_html": "<p>It thanks the agent.</p>\n",
        "schemes": [
            {
                "scheme": "sentiment",
                "description": "Sentiment",
                "expected": {"label": "positive"},
                "given": {"label": "negative"},
                "expected_text": "positive",
                "given_text": "negative",
                "score": 0.0,
            }
        ],
        "training": {
            "state": "in_progress",
            "items": 2,
            "answered": 1,
            "attempt": 1,
            "attempts": 2,
            "score": 0.0,
            "pass_accuracy": 0.75,
            "summary": "1 of 2 answered",
        },
    }


def test_a_gold_check_in_the_real_work_answers_like_any_item(alice):
    project = gold_project(work=2, gold=1, quality="quality: {gold_rate: 0.5}\n")
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    client = client_for(alice)
    next_url = reverse("api:item-next", kwargs={"name": project.name})
    bodies = []
    for _ in range(2):
        item = client.post(next_url).json()
        response = client.post(
            submit_url(project, item["tree"]["id"]),
            data=json.dumps({"annotations": {"sentiment": {"label": "negative"}}, "version": 1}),
            content_type="application/json",
        )
        bodies.append((item, response.json()))

    (work_item, work_done), (gold_item, gold_done) = bodies
    assert Assignment.objects.get(user=alice, tree_id=gold_item["tree"]["id"]).kind == "gold"
    assert (
        gold_item.keys() == work_item.keys()
        and gold_item["assignment"].keys() == work_item["assignment"].keys()
    )
    assert gold_done["feedback"] is None and work_done["feedback"] is None


def test_the_annotate_page_of_a_training_item_says_so_and_offers_no_skip(alice):
    project = gold_project(work=1, gold=2, quality=TRAINING)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    held = item_next(project=project, user=alice, now=T0)

    page = client_for(alice).get(
        reverse("annotation:item", kwargs={"name": project.name, "tree_id": held.tree_id})
    )

    assert page.context["training"].state == IN_PROGRESS
    assert page.context["page_data"]["training"] is True
    html = page.content.decode()
    assert 'data-training="in_progress"' in html and "item 1 of 2" in html
    assert "data-skip" not in html


def test_a_submitted_training_item_shows_its_feedback_again_and_is_closed(alice):
    project = gold_project(work=1, gold=2, quality=TRAINING)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    done = answer(item_next(project=project, user=alice, now=T0))

    page = client_for(alice).get(
        reverse("annotation:item", kwargs={"name": project.name, "tree_id": done.tree_id})
    )

    data = page.context["page_data"]
    assert data["editable"] is False
    assert data["read_only"] is False  # closed for good: no Edit to offer
    assert "data-edit" not in page.content.decode()
    assert data["feedback"]["schemes"][0]["expected_text"] == "positive"
