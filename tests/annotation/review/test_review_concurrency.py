"""Reviews under real concurrency, on PostgreSQL: reviewers race each other on the same
work while its annotators take rejected items back and resubmit them. No work is sent back
twice for the same version, the items' counters agree with the rows, and each piece of
work's review status is its latest decision — or empty once it was resubmitted after it.
"""

import random
import threading
from collections import Counter

import pytest
from django.db import connection
from django.db.models import Count, Q

from annotation.models import Assignment, Membership, ProjectItem, Review
from annotation.projects.services import membership_add
from annotation.review.services import ReviewRefused, review_decide
from annotation.work.assignment import NoItemAvailable, item_next
from annotation.work.submissions import NotAssigned, StaleVersion, item_submit
from tests.factories import ConversationTreeFactory, DatasetFactory, PersonaFactory, ProjectFactory

TREES, ANNOTATORS, REVIEWERS, ROUNDS = 8, 2, 3, 2
CONFIG = f"""
annotation_schemes:
  - {{annotation_type: likert, name: quality, description: Quality, size: 5}}
assignment: {{annotations_per_item: {ANNOTATORS}}}
"""


def resubmit_returned(project, user, rng) -> None:
    """Take back whatever was sent back to ``user`` and submit it again."""
    while True:
        try:
            held = item_next(project=project, user=user)
        except NoItemAvailable:
            return
        if held.review_status != "rejected":
            return  # nothing returned (a new item is impossible: every item is theirs already)
        try:
            item_submit(
                project=project,
                tree=held.tree,
                user=user,
                answers={"quality": {"rating": rng.randint(1, 5)}},
                version=held.version,
            )
        except (StaleVersion, NotAssigned):
            return


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_reviewers_and_resubmissions_keep_decisions_and_counts_consistent():
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(TREES, dataset=dataset)
    project = ProjectFactory(dataset=dataset, config_yaml=CONFIG)
    annotators = [PersonaFactory(username=f"annotator{index}") for index in range(ANNOTATORS)]
    reviewers = [PersonaFactory(username=f"reviewer{index}") for index in range(REVIEWERS)]
    for user in annotators:
        membership_add(project=project, user=user, role=Membership.Role.ANNOTATOR)
        for _ in range(TREES):
            held = item_next(project=project, user=user)
            item_submit(
                project=project,
                tree=held.tree,
                user=user,
                answers={"quality": {"rating": 3}},
                version=held.version,
            )
    for user in reviewers:
        membership_add(project=project, user=user, role=Membership.Role.REVIEWER)
    work_ids = list(Assignment.objects.filter(project=project).values_list("pk", flat=True))

    outcomes: Counter[str] = Counter()
    failures: list[BaseException] = []
    guard = threading.Lock()
    threads_count = 2 * REVIEWERS + ANNOTATORS
    start = threading.Barrier(threads_count)

    def review(index: int) -> None:
        reviewer, rng = reviewers[index % REVIEWERS], random.Random(index)
        try:
            start.wait()
            for _ in range(ROUNDS):
                for pk in rng.sample(work_ids, len(work_ids)):
                    work = Assignment.objects.select_related("project").get(pk=pk)
                    decision = rng.choice(["accepted", "rejected"])
                    try:
                        review_decide(
                            reviewer=reviewer,
                            assignment=work,
                            decision=decision,
                            comment="Fix it.",
                            version=work.version,
                        )
                        outcome = decision
                    except StaleVersion:
                        outcome = "stale"
                    except ReviewRefused as refused:
                        outcome = refused.code
                    with guard:
                        outcomes[outcome] += 1
        except BaseException as error:  # reported below, in the test's thread
            failures.append(error)
        finally:
            connection.close()

    def annotate(index: int) -> None:
        user, rng = annotators[index], random.Random(100 + index)
        try:
            start.wait()
            for _ in range(ROUNDS * 3):
                resubmit_returned(project, user, rng)
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=review, args=(index,)) for index in range(2 * REVIEWERS)]
    threads += [threading.Thread(target=annotate, args=(index,)) for index in range(ANNOTATORS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert outcomes["rejected"] > 0 and outcomes["accepted"] > 0
    # Never two rejections of one version: each would have taken a submission off the count.
    twice = (
        Review.objects.filter(decision="rejected")
        .values("assignment_id", "version")
        .annotate(count=Count("pk"))
        .filter(count__gt=1)
    )
    assert list(twice) == []
    for work in Assignment.objects.filter(project=project).prefetch_related("reviews"):
        latest = max(work.reviews.all(), key=lambda review: (review.created_at, review.pk), default=None)
        if latest is not None and latest.version == work.version - (latest.decision == "rejected"):
            assert work.review_status == latest.decision, work
        else:
            assert work.review_status == "", work  # resubmitted since its latest decision
        assert (work.status == "submitted") == (work.review_status != "rejected"), work
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
        assert (item.active_count, item.submitted_count) == recount[item.tree_id], item
