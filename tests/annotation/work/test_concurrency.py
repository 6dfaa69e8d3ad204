"""Hand-outs under real concurrency, on PostgreSQL: 16 threads make 25
next-item requests each for 5 annotators (so several threads act for the
same person at once), submitting, skipping or keeping what they get. No item
may exceed its overlap, nobody may exceed their quota, get an item twice or
get back an item they had already finished, and the counters must agree with
the rows.

One person asking for work from several tabs at once, holding nothing, gets
one lease: the others wait for it and are handed the same item (issue 16,
"two tabs can each get a lease")."""

import random
import threading
from collections import Counter, defaultdict

import pytest
from django.db import connection
from django.db.models import Count, Q

from annotation.models import Assignment, ProjectItem
from annotation.work.assignment import NoItemAvailable, item_next
from annotation.work.submissions import NotAssigned, StaleVersion, item_skip, item_submit
from tests.factories import ConversationTreeFactory, DatasetFactory, PersonaFactory, ProjectFactory

THREADS, REQUESTS, ANNOTATORS, TREES, OVERLAP, QUOTA = 16, 25, 5, 30, 2, 14
# 60 places for 5 people allowed 14 items each: both limits come into play.
CONFIG = f"""
annotation_schemes:
  - {{annotation_type: likert, name: quality, description: Quality, size: 5}}
assignment:
  {{annotations_per_item: {OVERLAP}, max_items_per_user: {QUOTA}, order: fewest_annotations_first, lease_minutes: 60}}
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_hand_outs_never_exceed_the_overlap_nor_repeat_an_item():
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(TREES, dataset=dataset)
    project = ProjectFactory(dataset=dataset, config_yaml=CONFIG)
    annotators = [PersonaFactory(username=f"annotator{index}") for index in range(ANNOTATORS)]

    guard = threading.Lock()
    finished: dict[int, set[int]] = defaultdict(set)  # user id -> trees submitted or skipped (committed)
    repeats: list[tuple[int, int, str]] = []
    outcomes: Counter[str] = Counter()
    failures: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def annotate(index: int) -> None:
        user = annotators[index % ANNOTATORS]
        rng = random.Random(index)
        try:
            start.wait()
            for _ in range(REQUESTS):
                with guard:
                    done_before = set(finished[user.pk])
                try:
                    assignment = item_next(project=project, user=user)
                except NoItemAvailable as error:
                    with guard:
                        outcomes[error.reason] += 1
                    continue
                if assignment.tree_id in done_before or assignment.status != "leased":
                    with guard:
                        repeats.append((user.pk, assignment.tree_id, assignment.status))
                action = rng.choices(["submit", "skip", "keep"], weights=[7, 2, 1])[0]
                try:
                    if action == "submit":
                        item_submit(
                            project=project,
                            tree=assignment.tree,
                            user=user,
                            answers={"quality": {"rating": rng.randint(1, 5)}},
                            version=assignment.version,
                        )
                    elif action == "skip":
                        item_skip(
                            project=project, tree=assignment.tree, user=user, version=assignment.version
                        )
                except (StaleVersion, NotAssigned):
                    # Another thread acting for the same person got there first.
                    action = "conflict"
                with guard:
                    outcomes[action] += 1
                    if action in ("submit", "skip"):
                        finished[user.pk].add(assignment.tree_id)
        except BaseException as error:
            with guard:
                failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=annotate, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert repeats == []

    held = Counter(
        Assignment.objects.filter(project=project, status__in=["submitted", "leased"]).values_list(
            "tree_id", flat=True
        )
    )
    assert max(held.values()) == OVERLAP  # the overlap was reached ...
    assert all(count <= OVERLAP for count in held.values())  # ... and never exceeded

    per_person = Counter(
        Assignment.objects.filter(project=project, status__in=["submitted", "leased"]).values_list(
            "user_id", flat=True
        )
    )
    assert all(count <= QUOTA for count in per_person.values())

    pairs = Counter(Assignment.objects.filter(project=project).values_list("user_id", "tree_id"))
    assert [pair for pair, count in pairs.items() if count > 1] == []

    recount = {
        row["tree_id"]: (row["active"], row["submitted"])
        for row in Assignment.objects.filter(project=project)
        .values("tree_id")
        .annotate(
            active=Count("pk", filter=Q(status__in=["leased", "submitted"])),
            submitted=Count("pk", filter=Q(status="submitted")),
        )
    }
    counters = {
        item.tree_id: (item.active_count, item.submitted_count)
        for item in ProjectItem.objects.filter(project=project)
    }
    assert counters == {tree_id: recount.get(tree_id, (0, 0)) for tree_id in counters}
    marked = dict(ProjectItem.objects.filter(project=project).values_list("tree_id", "is_full"))
    assert marked == {tree_id: active >= OVERLAP for tree_id, (active, _) in counters.items()}

    assert sum(outcomes.values()) == THREADS * REQUESTS
    assert outcomes["submit"] > 0 and outcomes["done"] + outcomes["quota"] > 0


TABS, ROUNDS = 4, 8
OPEN_CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
assignment: {annotations_per_item: 1, order: sequential}
"""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_annotator_asking_from_several_tabs_at_once_holds_one_lease():
    """No quota and no gold: the hand-out's fastest path, where the race was."""
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(TABS * ROUNDS, dataset=dataset)
    project = ProjectFactory(dataset=dataset, config_yaml=OPEN_CONFIG)
    failures: list[BaseException] = []
    handed: list[tuple[int, int]] = []  # (user id, tree id) per request
    guard = threading.Lock()

    def ask(user, start: threading.Barrier) -> None:
        try:
            start.wait()
            assignment = item_next(project=project, user=user)
            with guard:
                handed.append((user.pk, assignment.tree_id))
        except BaseException as error:
            with guard:
                failures.append(error)
        finally:
            connection.close()

    people = [PersonaFactory(username=f"tabs{round_}") for round_ in range(ROUNDS)]
    for person in people:  # a fresh person each round, holding nothing
        start = threading.Barrier(TABS)
        tabs = [threading.Thread(target=ask, args=(person, start)) for _ in range(TABS)]
        for tab in tabs:
            tab.start()
        for tab in tabs:
            tab.join(timeout=30)
        assert not any(tab.is_alive() for tab in tabs)

    assert failures == []
    leases = Counter(
        Assignment.objects.filter(project=project, status="leased").values_list("user_id", flat=True)
    )
    assert leases == {person.pk: 1 for person in people}
    trees_per_person = {user_id: {tree for who, tree in handed if who == user_id} for user_id, _ in handed}
    assert all(len(trees) == 1 for trees in trees_per_person.values())
    items = ProjectItem.objects.filter(project=project)
    assert sum(item.active_count for item in items) == ROUNDS  # no place taken by a lease that was not kept
