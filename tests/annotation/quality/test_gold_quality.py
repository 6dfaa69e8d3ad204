"""Annotators' accuracy on gold items, shown to managers: who is flagged, where each one is
in the training, which gold items are hardest — on the project's quality page and in the
admin, where gold items are also marked and given their expected answers.

Alice answers gold checks right, Bob wrong; Maggie manages the project, Rita reviews it;
Sam is a superuser in the admin.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Membership, Project, ProjectItem
from annotation.projects.services import membership_add
from annotation.quality.report import project_quality
from annotation.work.assignment import item_next
from tests.annotation.annotator_items import person
from tests.annotation.quality.test_gold import T0, answer, gold_project
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db

CHECKED = "quality: {gold_rate: 0.5, min_accuracy: 0.7, min_gold_answers: 2}\n"


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("alice", "bob", "maggie", "rita")}


@pytest.fixture
def checked(people: dict[str, Any]) -> Project:
    """Alice and Bob each did two items and two gold checks: Alice right, Bob wrong."""
    project = gold_project(work=2, gold=3, quality=CHECKED, overlap=10)
    membership_add(project=project, user=people["maggie"], role=Membership.Role.MANAGER)
    membership_add(project=project, user=people["rita"], role=Membership.Role.REVIEWER)
    for name, label in (("alice", "positive"), ("bob", "negative")):
        membership_add(project=project, user=people[name], role=Membership.Role.ANNOTATOR)
        for _ in range(4):
            answer(item_next(project=project, user=people[name], now=T0), label)
    return project


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def quality_url(project: Project) -> str:
    return reverse("annotation:quality", kwargs={"name": project.name})


# The report


def test_each_annotators_accuracy_is_their_mean_score_on_gold_checks(checked):
    report = project_quality(project=checked)

    rows = {
        row.username: (row.submitted, row.gold_answered, row.accuracy, row.flagged)
        for row in report.annotators
    }
    assert rows == {"alice": (2, 2, 1.0, False), "bob": (2, 2, 0.0, True)}
    assert [row.username for row in report.flagged] == ["bob"]


def test_nobody_is_flagged_before_enough_gold_answers(people):
    project = gold_project(work=2, gold=2, quality="quality: {gold_rate: 0.5, min_gold_answers: 2}\n")
    membership_add(project=project, user=people["bob"], role=Membership.Role.ANNOTATOR)
    for _ in range(2):
        answer(item_next(project=project, user=people["bob"], now=T0), "negative")

    (bob,) = project_quality(project=project).annotators

    assert (bob.gold_answered, bob.accuracy, bob.flagged) == (1, 0.0, False)


def test_gold_items_are_listed_hardest_first(checked):
    items = project_quality(project=checked).gold_items

    # Each checked item was answered once by Alice (right) and once by Bob (wrong), or not at all.
    assert [(item.answered, item.mean_score) for item in items if item.answered] == [(2, 0.5), (2, 0.5)]
    assert items[-1].answered == 0 and items[-1].mean_score is None
    assert all(item.explanation == "It thanks the agent." for item in items)


def test_the_training_status_of_each_annotator_is_reported(people):
    project = gold_project(work=2, gold=2, quality="quality: {training: {items: 2}}\n")
    for name in ("alice", "bob"):
        membership_add(project=project, user=people[name], role=Membership.Role.ANNOTATOR)
    answer(item_next(project=project, user=people["alice"], now=T0))
    answer(item_next(project=project, user=people["alice"], now=T0))

    report = project_quality(project=project)

    assert {row.username: str(row.training) for row in report.annotators} == {
        "alice": "passed (100%)",
        "bob": "not started",
    }


def test_a_training_with_too_few_gold_items_is_a_warning_to_managers():
    project = gold_project(work=1, gold=1, quality="quality: {training: {items: 3}, gold_rate: 0.1}\n")

    assert project_quality(project=project).warnings == [
        "The training takes 3 gold items a round but the project has 1: annotators cannot start work "
        "until more items are marked gold."
    ]


# The page


def test_managers_and_reviewers_see_the_quality_page_with_flagged_annotators_marked(checked, people):
    for name in ("maggie", "rita"):
        response = client_for(people[name]).get(quality_url(checked))
        assert response.status_code == 200
    html = response.content.decode()
    assert 'data-annotator="bob" class="flagged" data-flagged' in html
    assert 'data-annotator="alice">' in html
    assert response.context["report"].flagged[0].username == "bob"


def test_annotators_may_not_see_the_quality_page(checked, people):
    assert client_for(people["alice"]).get(quality_url(checked)).status_code == 403


def test_the_project_page_links_managers_to_the_quality_page_and_not_annotators(checked, people):
    project_url = reverse("annotation:project", kwargs={"name": checked.name})

    assert quality_url(checked) in client_for(people["maggie"]).get(project_url).content.decode()
    assert quality_url(checked) not in client_for(people["alice"]).get(project_url).content.decode()


def test_the_quality_page_costs_the_same_queries_for_few_annotators_or_many(checked, people):
    client = client_for(people["maggie"])
    client.get(quality_url(checked))
    with CaptureQueriesContext(connection) as few:
        client.get(quality_url(checked))
    for index in range(6):
        extra = person(f"annotator{index}")
        membership_add(project=checked, user=extra, role=Membership.Role.ANNOTATOR)
        for _ in range(2):
            answer(item_next(project=checked, user=extra, now=T0))

    with CaptureQueriesContext(connection) as many:
        client.get(quality_url(checked))

    assert len(many) == len(few)


# The admin


@pytest.fixture
def as_sam() -> Client:
    sam = StaffFactory(username="sam")
    sam.save(update_fields=["password"])
    return client_for(sam)


def item_change_url(item: ProjectItem) -> str:
    return reverse("admin:annotation_projectitem_change", args=[item.pk])


def test_an_items_expected_answers_are_checked_on_the_admin_form(as_sam):
    project = gold_project(work=1, gold=0)
    item = ProjectItem.objects.get(project=project)

    refused = as_sam.post(
        item_change_url(item),
        {"is_gold": "on", "gold_answers": '{"sentiment": "positve"}', "gold_explanation": ""},
    )
    assert refused.status_code == 200
    assert refused.context["adminform"].form.errors["gold_answers"] == [
        'sentiment.label: "positve" is not one of the labels (positive, negative, neutral)'
    ]

    saved = as_sam.post(
        item_change_url(item),
        {"is_gold": "on", "gold_answers": '{"sentiment": "negative"}', "gold_explanation": "Rude."},
    )
    assert saved.status_code == 302
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers, item.gold_explanation) == (
        True,
        {"sentiment": {"label": "negative"}},
        "Rude.",
    )


def test_items_are_marked_and_unmarked_gold_with_actions(as_sam):
    project = gold_project(work=2, gold=1)
    changelist = reverse("admin:annotation_projectitem_changelist")
    every = [str(pk) for pk in ProjectItem.objects.filter(project=project).values_list("pk", flat=True)]

    response = as_sam.post(changelist, {"action": "unmark_gold", "_selected_action": every}, follow=True)
    assert [str(message) for message in response.context["messages"]] == ["1 item no longer gold."]
    response = as_sam.post(changelist, {"action": "mark_gold", "_selected_action": every}, follow=True)
    assert [str(message) for message in response.context["messages"]] == [
        "1 item marked gold.",
        "2 items have no expected answers yet: open each to give them, or import them with manage.py import_gold.",
    ]
    assert ProjectItem.objects.filter(project=project, is_gold=True).count() == 1


def test_the_project_admin_shows_each_annotators_accuracy(as_sam, checked):
    response = as_sam.get(reverse("admin:annotation_project_change", args=[checked.pk]))

    html = response.content.decode()
    assert "bob (flagged): 0% on 2 gold answer(s)" in html
    assert "alice: 100% on 2 gold answer(s)" in html
    assert quality_url(checked) in html


def test_the_assignments_admin_tells_gold_checks_and_their_scores(as_sam, checked):
    response = as_sam.get(reverse("admin:annotation_assignment_changelist"), {"kind__exact": "gold"})

    assert response.status_code == 200
    assert response.context["cl"].result_count == 4
