"""Reviews in the admin: read, never written there (decisions go through the review pages),
listed with their item and annotator in constant queries, and inline on the work they judge.

Root is a superuser; Alice and Bob annotate; Rita reviews.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Review
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over

pytestmark = pytest.mark.django_db

CONFIG = """\
annotation_schemes:
  - {annotation_type: radio, name: overall, description: Overall, labels: [Helpful, Unhelpful]}
assignment: {annotations_per_item: 2}
"""
REVIEW_CHANGELIST = reverse("admin:annotation_review_changelist")


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(person("root", is_staff=True, is_superuser=True))
    return client


def reviewed(items: int) -> list[Assignment]:
    """``items`` items, each submitted by Alice and Bob; Rita sent Alice's back and accepted Bob's."""
    alice, bob, rita = person("alice"), person("bob"), person("rita")
    project = project_over(
        "support",
        CONFIG,
        [{**SEED_ITEM, "id": f"conv_{n}"} for n in range(items)],
        [alice, bob],
        reviewers=[rita],
    )
    work = []
    for user in (alice, bob):
        for _ in range(items):
            held = item_next(project=project, user=user)
            answers = {"overall": {"label": "Helpful"}}
            work.append(
                item_submit(project=project, tree=held.tree, user=user, answers=answers, version=held.version)
            )
    for done in work:
        decision = "rejected" if done.user == alice else "accepted"
        review_decide(reviewer=rita, assignment=done, decision=decision, comment="Why?", version=done.version)
    return work


# The session and the user, the page's reviews with their work's project, item and annotator
# and the reviewer (one join), the count, and the project and reviewer filters' choices.
CHANGELIST_QUERIES = 6


@pytest.mark.parametrize("items", [1, 6])
def test_reviews_are_listed_with_their_item_and_annotator_in_constant_queries(
    admin_client, django_assert_num_queries, items
):
    reviewed(items=items)

    with django_assert_num_queries(CHANGELIST_QUERIES):
        response = admin_client.get(REVIEW_CHANGELIST)

    rows = {
        (r.assignment.tree.external_id, r.assignment.user.username, r.decision)
        for r in response.context["cl"].result_list
    }
    assert len(rows) == 2 * items
    assert ("conv_0", "alice", "rejected") in rows and (f"conv_{items - 1}", "bob", "accepted") in rows


def test_reviews_cannot_be_added_changed_or_deleted_in_the_admin(admin_client):
    [first, *_] = reviewed(items=1)
    review = Review.objects.get(assignment=first)

    assert admin_client.get(reverse("admin:annotation_review_add")).status_code == 403
    assert admin_client.post(reverse("admin:annotation_review_delete", args=[review.pk])).status_code == 403
    page = admin_client.get(reverse("admin:annotation_review_change", args=[review.pk]))
    assert page.status_code == 200
    assert page.context["has_change_permission"] is False


def test_an_assignment_shows_its_review_status_and_the_decisions_on_it(admin_client):
    [alices, *_] = reviewed(items=1)

    response = admin_client.get(reverse("admin:annotation_assignment_change", args=[alices.pk]))

    [inline] = response.context["inline_admin_formsets"]
    assert [(form.original.decision, form.original.comment) for form in inline] == [("rejected", "Why?")]
    shown = re.search(
        r'field-review_status.*?<div class="readonly">(.*?)</div>', response.content.decode(), re.S
    )
    assert shown is not None and shown.group(1) == "Rejected"
