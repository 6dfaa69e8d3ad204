"""Reviewing submitted work: accept it, or send it back with a comment.

Alice and Bob annotate, Carol joins later as an annotator; Rita reviews and
Maggie manages. A decision is taken on the version the reviewer saw;
rejected work goes back to its annotator first, keeps its place in the
item's overlap, and is pending review again once resubmitted.

Time is passed in as ``now`` so that leases are exact, not slept for.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db.models import Count, Q

from annotation.models import Annotation, Assignment, Membership, Project, ProjectItem, Review
from annotation.projects.services import membership_add
from annotation.review.services import ReviewRefused, review_decide
from annotation.work.assignment import NoItemAvailable, item_next
from annotation.work.submissions import StaleVersion, draft_save, item_skip, item_submit
from tests.factories import ConversationTreeFactory, DatasetFactory, PersonaFactory, ProjectFactory

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
LIKERT = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: PersonaFactory(username=name) for name in ("alice", "bob", "carol", "rita", "maggie")}


def project_of(people: dict[str, Any], trees: int = 2, **assignment: Any) -> Project:
    """``trees`` items; Alice, Bob and Carol annotate, Rita reviews, Maggie manages."""
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(trees, dataset=dataset)
    keys = ", ".join(f"{key}: {value}" for key, value in assignment.items())
    project = ProjectFactory(dataset=dataset, config_yaml=LIKERT + f"assignment: {{{keys}}}\n")
    for name in ("alice", "bob", "carol"):
        membership_add(project=project, user=people[name], role=Membership.Role.ANNOTATOR)
    membership_add(project=project, user=people["rita"], role=Membership.Role.REVIEWER)
    membership_add(project=project, user=people["maggie"], role=Membership.Role.MANAGER)
    return project


def take_and_submit(project: Project, user: Any, rating: int = 3, now: datetime = T0) -> Assignment:
    held = item_next(project=project, user=user, now=now)
    return item_submit(
        project=project,
        tree=held.tree,
        user=user,
        answers={"quality": {"rating": rating}},
        version=held.version,
    )


def reject(assignment: Assignment, reviewer: Any, comment: str = "Rate the tone, not the length.") -> Review:
    return review_decide(
        reviewer=reviewer,
        assignment=assignment,
        decision="rejected",
        comment=comment,
        version=assignment.version,
    )


def accept(assignment: Assignment, reviewer: Any) -> Review:
    return review_decide(
        reviewer=reviewer, assignment=assignment, decision="accepted", version=assignment.version
    )


def refusal(**kwargs: Any) -> ReviewRefused:
    with pytest.raises(ReviewRefused) as refused:
        review_decide(**kwargs)
    return refused.value


def counts(project: Project, tree_id: int) -> tuple[int, int]:
    item = ProjectItem.objects.get(project=project, tree_id=tree_id)
    return item.active_count, item.submitted_count


def assert_counts_match_assignments(project: Project) -> None:
    """The counters hand-out relies on equal a recount of the assignment rows."""
    recount = {
        row["tree_id"]: (row["active"], row["submitted"])
        for row in Assignment.objects.filter(project=project)
        .values("tree_id")
        .annotate(
            active=Count("pk", filter=Q(status__in=["leased", "submitted"])),
            submitted=Count("pk", filter=Q(status="submitted")),
        )
    }
    for item in ProjectItem.objects.filter(project=project):
        assert (item.active_count, item.submitted_count) == recount.get(item.tree_id, (0, 0)), item


# -- accepting ----------------------------------------------------------------------------------


def test_a_reviewer_accepts_submitted_work_and_the_decision_is_recorded(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])

    review = accept(work, people["rita"])

    work.refresh_from_db()
    assert work.review_status == "accepted"
    assert work.status == "submitted"
    assert (review.decision, review.reviewer, review.version, review.comment) == (
        "accepted",
        people["rita"],
        work.version,
        "",
    )


def test_a_manager_may_review_too_and_may_say_something_when_accepting(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])

    review = review_decide(
        reviewer=people["maggie"],
        assignment=work,
        decision="accepted",
        comment="  Nice.  ",
        version=work.version,
    )

    assert (review.reviewer, review.comment) == (people["maggie"], "Nice.")


def test_accepting_changes_neither_the_work_nor_its_version(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    before = work.version

    accept(work, people["rita"])

    work.refresh_from_db()
    assert work.version == before
    assert Annotation.objects.get(user=people["alice"]).status == "submitted"


def test_the_same_decision_sent_twice_is_recorded_once(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])

    first = accept(work, people["rita"])
    second = accept(work, people["rita"])

    assert second.pk == first.pk
    assert Review.objects.count() == 1


def test_a_reviewer_may_change_their_mind_about_accepted_work(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    accept(work, people["rita"])

    reject(work, people["rita"], "On second thought: item 3 is off.")

    work.refresh_from_db()
    assert work.review_status == "rejected"
    assert list(work.reviews.values_list("decision", flat=True)) == ["rejected", "accepted"]


# -- who may decide on what ---------------------------------------------------------------------


def test_annotators_and_strangers_may_not_review(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    stranger = PersonaFactory(username="mallory")

    for who in (people["bob"], stranger):
        refused = refusal(reviewer=who, assignment=work, decision="accepted", version=work.version)
        assert refused.code == "forbidden"
    assert not Review.objects.exists()


def test_nobody_reviews_their_own_work(people):
    project = project_of(people)
    membership_add(project=project, user=people["rita"], role=Membership.Role.ANNOTATOR)
    work = take_and_submit(project, people["rita"])

    refused = refusal(reviewer=people["rita"], assignment=work, decision="accepted", version=work.version)

    assert (refused.code, refused.message) == (
        "own_work",
        "you cannot review your own work: another reviewer has to",
    )


def test_only_submitted_work_is_reviewed(people):
    project = project_of(people)
    held = item_next(project=project, user=people["alice"], now=T0)

    refused = refusal(reviewer=people["rita"], assignment=held, decision="accepted", version=held.version)

    assert (refused.code, refused.message) == (
        "not_submitted",
        "only submitted work can be reviewed: it is leased",
    )


def test_work_sent_back_is_not_decided_on_again_until_it_is_resubmitted(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    reject(work, people["rita"])

    refused = refusal(reviewer=people["maggie"], assignment=work, decision="accepted", version=work.version)

    assert refused.code == "not_submitted"
    assert "sent back to its annotator" in refused.message


def test_a_decision_on_work_that_changed_since_the_reviewer_saw_it_is_refused(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    seen = work.version
    draft_save(
        project=project,
        tree=work.tree,
        user=people["alice"],
        answers={"quality": {"rating": 5}},
        version=seen,
    )

    with pytest.raises(StaleVersion) as stale:
        review_decide(reviewer=people["rita"], assignment=work, decision="accepted", version=seen)

    assert stale.value.current == seen + 1
    assert not Review.objects.exists()


def test_a_rejection_says_what_to_fix(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])

    refused = refusal(
        reviewer=people["rita"], assignment=work, decision="rejected", comment="   ", version=work.version
    )

    assert refused.code == "comment_required"
    work.refresh_from_db()
    assert (work.status, work.review_status) == ("submitted", "")


def test_a_decision_is_accepted_or_rejected_and_nothing_else(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])

    refused = refusal(reviewer=people["rita"], assignment=work, decision="maybe", version=work.version)

    assert (refused.code, refused.message) == (
        "invalid",
        'the decision must be "accepted" or "rejected", not "maybe"',
    )


def test_gold_checks_are_scored_not_reviewed(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    Assignment.objects.filter(pk=work.pk).update(kind="gold")
    work.refresh_from_db()

    assert refusal(
        reviewer=people["rita"], assignment=work, decision="accepted", version=work.version
    ).code == ("not_work")


# -- rejecting: back to the annotator, first in line ----------------------------------------------


def test_rejecting_reopens_the_item_to_its_annotator_as_a_draft(people):
    project = project_of(people, annotations_per_item=2)
    work = take_and_submit(project, people["alice"])
    before = work.version

    reject(work, people["rita"])

    work.refresh_from_db()
    assert (work.status, work.review_status, work.version) == ("leased", "rejected", before + 1)
    assert work.lease_expires_at is None  # held for Alice, whenever she comes back
    answer = Annotation.objects.get(user=people["alice"])
    assert (answer.status, answer.payload) == ("draft", {"rating": 3})


def test_rejected_work_keeps_its_place_but_no_longer_counts_as_submitted(people):
    project = project_of(people, trees=1, annotations_per_item=1)
    work = take_and_submit(project, people["alice"])
    assert counts(project, work.tree_id) == (1, 1)

    reject(work, people["rita"])

    assert counts(project, work.tree_id) == (1, 0)
    assert_counts_match_assignments(project)
    with pytest.raises(NoItemAvailable):
        item_next(project=project, user=people["carol"], now=T0 + timedelta(days=30))


def test_the_annotator_gets_rejected_work_back_first_with_a_fresh_lease(people):
    project = project_of(people, trees=3, lease_minutes=60)
    # Alice's first item comes back; the two after it wait.
    work = take_and_submit(project, people["alice"])
    reject(work, people["rita"])

    later = T0 + timedelta(days=2)
    again = item_next(project=project, user=people["alice"], now=later)

    assert again.pk == work.pk
    assert again.lease_expires_at == later + timedelta(minutes=60)
    assert Assignment.objects.filter(user=people["alice"]).count() == 1


def test_rejected_work_comes_back_before_an_item_already_in_hand(people):
    project = project_of(people, trees=3)
    work = take_and_submit(project, people["alice"])
    in_hand = item_next(project=project, user=people["alice"], now=T0)
    reject(work, people["rita"])

    assert item_next(project=project, user=people["alice"], now=T0).pk == work.pk
    in_hand.refresh_from_db()
    assert in_hand.status == "leased"


def test_resubmitting_makes_the_work_pending_review_again_and_keeps_the_history(people):
    project = project_of(people, trees=1)
    work = take_and_submit(project, people["alice"])
    reject(work, people["rita"], "Item 2 is a 4 at most.")

    again = item_next(project=project, user=people["alice"], now=T0)
    resubmitted = item_submit(
        project=project,
        tree=again.tree,
        user=people["alice"],
        answers={"quality": {"rating": 4}},
        version=again.version,
    )

    assert (resubmitted.status, resubmitted.review_status) == ("submitted", "")
    assert counts(project, work.tree_id) == (1, 1)
    assert Annotation.objects.get(user=people["alice"]).status == "submitted"
    review = accept(resubmitted, people["rita"])
    assert review.version == resubmitted.version
    assert [(r.decision, r.comment) for r in resubmitted.reviews.order_by("created_at", "id")] == [
        ("rejected", "Item 2 is a 4 at most."),
        ("accepted", ""),
    ]
    assert_counts_match_assignments(project)


def test_saving_a_draft_of_rejected_work_keeps_it_rejected_until_it_is_submitted(people):
    project = project_of(people, trees=1)
    work = take_and_submit(project, people["alice"])
    reject(work, people["rita"])
    work.refresh_from_db()

    saved = draft_save(
        project=project,
        tree=work.tree,
        user=people["alice"],
        answers={"quality": {"rating": 4}},
        version=work.version,
    )

    assert (saved.status, saved.review_status) == ("leased", "rejected")


def test_changing_accepted_work_sends_it_back_to_review(people):
    project = project_of(people)
    work = take_and_submit(project, people["alice"])
    accept(work, people["rita"])
    work.refresh_from_db()

    changed = draft_save(
        project=project,
        tree=work.tree,
        user=people["alice"],
        answers={"quality": {"rating": 1}},
        version=work.version,
    )

    assert (changed.status, changed.review_status) == ("submitted", "")


def test_skipping_rejected_work_gives_its_place_to_someone_else(people):
    project = project_of(people, trees=1, annotations_per_item=1)
    work = take_and_submit(project, people["alice"])
    reject(work, people["rita"])

    item_skip(project=project, tree=work.tree, user=people["alice"])

    assert counts(project, work.tree_id) == (0, 0)
    assert item_next(project=project, user=people["carol"], now=T0).tree_id == work.tree_id
    assert_counts_match_assignments(project)
