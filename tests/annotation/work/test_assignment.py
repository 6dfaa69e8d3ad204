"""Handing out items: the overlap is honoured, nobody gets an item twice,
quotas stop hand-outs, leases expire and their places come back, and the
three orders (sequential, random, fewest annotations first) hold.

Time is passed in as ``now`` so that expiry is exact, not slept for.
"""

import io
import json
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from django.db import connection
from django.db.models import Count, Q

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.projects.services import project_config_update, project_items_sync
from annotation.work.assignment import NoItemAvailable, item_next, leases_reclaim
from annotation.work.submissions import item_skip, item_submit
from tests.factories import (
    ConversationTreeFactory,
    DatasetFactory,
    PersonaFactory,
    PotatoTreeFactory,
    ProjectFactory,
)
from tests.queries import closing_writes, taken_tree_read

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
LIKERT = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"
LEASED, SUBMITTED, SKIPPED, EXPIRED = "leased", "submitted", "skipped", "expired"


@pytest.fixture
def alice():
    return PersonaFactory(username="alice")


@pytest.fixture
def bob():
    return PersonaFactory(username="bob")


@pytest.fixture
def carol():
    return PersonaFactory(username="carol")


def project_of(trees: int, **assignment) -> Project:
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(trees, dataset=dataset)
    keys = ", ".join(f"{key}: {value}" for key, value in assignment.items())
    return ProjectFactory(dataset=dataset, config_yaml=LIKERT + f"assignment: {{{keys}}}\n")


def trees_in(project: Project) -> list[int]:
    return list(project.dataset.trees.order_by("pk").values_list("pk", flat=True))


def next_tree(project: Project, user, now: datetime = T0) -> int:
    return item_next(project=project, user=user, now=now).tree_id


def submit(assignment: Assignment) -> Assignment:
    return item_submit(
        project=assignment.project,
        tree=assignment.tree,
        user=assignment.user,
        answers={"quality": {"rating": 3}},
        version=assignment.version,
    )


def take_and_submit(project: Project, user, now: datetime = T0) -> int:
    return submit(item_next(project=project, user=user, now=now)).tree_id


def nothing_for(project: Project, user, now: datetime = T0) -> NoItemAvailable:
    with pytest.raises(NoItemAvailable) as error:
        item_next(project=project, user=user, now=now)
    return error.value


def assert_counts_match_assignments(project: Project) -> None:
    """The counters hand-out relies on equal a recount of the assignment rows, and an item is
    marked full exactly when its taken places reach the overlap."""
    recount = {
        row["tree_id"]: (row["active"], row["submitted"])
        for row in Assignment.objects.filter(project=project)
        .values("tree_id")
        .annotate(
            active=Count("pk", filter=Q(status__in=[LEASED, SUBMITTED])),
            submitted=Count("pk", filter=Q(status=SUBMITTED)),
        )
    }
    overlap = project_config(project).assignment.annotations_per_item
    for item in ProjectItem.objects.filter(project=project):
        assert (item.active_count, item.submitted_count) == recount.get(item.tree_id, (0, 0)), item
        assert item.is_full == (item.active_count >= overlap), item


# -- overlap, never twice, quota --------------------------------------------------------


def test_items_are_handed_out_in_sequence_by_default(alice):
    project = project_of(3)

    assert [take_and_submit(project, alice) for _ in range(3)] == trees_in(project)


def test_an_item_goes_to_at_most_annotations_per_item_people(alice, bob, carol):
    project = project_of(1, annotations_per_item=2)
    (tree,) = trees_in(project)

    assert next_tree(project, alice) == tree
    assert next_tree(project, bob) == tree
    error = nothing_for(project, carol)

    assert (error.reason, error.message) == ("done", "no items are waiting for you in this project right now")
    assert_counts_match_assignments(project)


def test_an_open_item_goes_to_the_next_annotator_before_a_new_one_is_started(alice, bob):
    project = project_of(2, annotations_per_item=2)
    first, _ = trees_in(project)

    assert take_and_submit(project, alice) == first
    assert next_tree(project, bob) == first


def test_nobody_gets_the_same_item_twice(alice):
    project = project_of(2, annotations_per_item=3)

    assert sorted(take_and_submit(project, alice) for _ in range(2)) == trees_in(project)
    assert nothing_for(project, alice).reason == "done"
    assert Assignment.objects.filter(user=alice).count() == 2


def test_an_item_that_was_skipped_never_comes_back_to_who_skipped_it(alice):
    project = project_of(1, annotations_per_item=3)
    assignment = item_next(project=project, user=alice, now=T0)

    item_skip(project=project, tree=assignment.tree, user=alice)

    assert nothing_for(project, alice).reason == "done"


def test_max_items_per_user_stops_handing_out(alice, bob):
    project = project_of(5, max_items_per_user=2)

    take_and_submit(project, alice)
    take_and_submit(project, alice)
    error = nothing_for(project, alice)

    assert (error.reason, error.message) == (
        "quota",
        "you have done your 2 items in this project — thank you",
    )
    assert next_tree(project, bob) == trees_in(project)[2]


def test_skipped_items_do_not_count_towards_the_quota(alice):
    project = project_of(3, max_items_per_user=1)
    assignment = item_next(project=project, user=alice, now=T0)
    item_skip(project=project, tree=assignment.tree, user=alice)

    assert take_and_submit(project, alice) == trees_in(project)[1]
    assert nothing_for(project, alice).reason == "quota"


def test_the_quota_does_not_take_back_an_item_already_in_hand(alice):
    project = project_of(3, max_items_per_user=1)
    leased = next_tree(project, alice)

    assert next_tree(project, alice) == leased


# -- leases -------------------------------------------------------------------------------


def test_asking_again_before_answering_gives_back_the_same_item_with_a_fresh_lease(alice):
    project = project_of(3, lease_minutes=60)
    first = item_next(project=project, user=alice, now=T0)

    again = item_next(project=project, user=alice, now=T0 + timedelta(minutes=30))

    assert again.pk == first.pk
    assert again.lease_expires_at == T0 + timedelta(minutes=90)
    assert Assignment.objects.filter(user=alice).count() == 1


def test_raising_the_overlap_opens_full_items_again_and_lowering_it_closes_them(alice, bob, carol):
    project = project_of(2, annotations_per_item=1)
    first, second = trees_in(project)
    take_and_submit(project, alice)
    assert ProjectItem.objects.get(tree_id=first).is_full

    project_config_update(project=project, config_yaml=LIKERT + "assignment: {annotations_per_item: 2}\n")

    assert_counts_match_assignments(project)
    assert next_tree(project, bob) == first
    project_config_update(project=project, config_yaml=LIKERT + "assignment: {annotations_per_item: 1}\n")
    assert_counts_match_assignments(project)
    assert next_tree(project, carol) == second


def test_a_lease_holds_its_place_until_it_expires(alice, bob):
    project = project_of(1, lease_minutes=60)
    (tree,) = trees_in(project)
    item_next(project=project, user=alice, now=T0)

    assert nothing_for(project, bob, now=T0 + timedelta(minutes=59)).reason == "done"
    assert next_tree(project, bob, now=T0 + timedelta(minutes=61)) == tree
    assert Assignment.objects.get(user=alice).status == EXPIRED
    assert_counts_match_assignments(project)


def test_leases_reclaim_marks_expired_leases_and_frees_their_places_once(alice, bob):
    project = project_of(2, lease_minutes=10)
    item_next(project=project, user=alice, now=T0)
    item_next(project=project, user=bob, now=T0 + timedelta(minutes=5))

    assert leases_reclaim(project, T0 + timedelta(minutes=11)) == 1
    assert leases_reclaim(project, T0 + timedelta(minutes=11)) == 0

    assert dict(Assignment.objects.values_list("user__username", "status")) == {
        "alice": EXPIRED,
        "bob": LEASED,
    }
    assert sorted(ProjectItem.objects.filter(project=project).values_list("active_count", flat=True)) == [
        0,
        1,
    ]


def test_an_expired_lease_comes_back_to_its_annotator_first_if_there_is_still_room(alice):
    project = project_of(2, lease_minutes=60)
    first = item_next(project=project, user=alice, now=T0)

    resumed = item_next(project=project, user=alice, now=T0 + timedelta(hours=3))

    assert resumed.pk == first.pk
    assert (resumed.status, resumed.leased_at) == (LEASED, T0 + timedelta(hours=3))
    assert resumed.lease_expires_at == T0 + timedelta(hours=4)
    assert_counts_match_assignments(project)


def test_an_expired_lease_whose_place_was_taken_is_not_resumed(alice, bob):
    project = project_of(2, lease_minutes=60)
    first, second = trees_in(project)
    item_next(project=project, user=alice, now=T0)
    assert next_tree(project, bob, now=T0 + timedelta(minutes=61)) == first

    assert next_tree(project, alice, now=T0 + timedelta(minutes=62)) == second
    assert Assignment.objects.get(user=alice, tree_id=first).status == EXPIRED
    assert_counts_match_assignments(project)


def test_a_submitted_item_keeps_its_place_however_long_ago_it_was_leased(alice, bob):
    project = project_of(1, lease_minutes=1)
    take_and_submit(project, alice)

    assert nothing_for(project, bob, now=T0 + timedelta(days=30)).reason == "done"


# -- skip -------------------------------------------------------------------------------------


def test_skipping_frees_the_place_for_someone_else(alice, bob):
    project = project_of(1)
    (tree,) = trees_in(project)
    assignment = item_next(project=project, user=alice, now=T0)

    item_skip(project=project, tree=assignment.tree, user=alice)

    assert next_tree(project, bob) == tree
    assert_counts_match_assignments(project)


def test_skipping_an_expired_lease_does_not_free_its_place_twice(alice, bob):
    project = project_of(1, lease_minutes=10, annotations_per_item=2)
    assignment = item_next(project=project, user=alice, now=T0)
    item_next(project=project, user=bob, now=T0 + timedelta(minutes=5))
    leases_reclaim(project, T0 + timedelta(minutes=11))

    item_skip(project=project, tree=assignment.tree, user=alice)

    assert_counts_match_assignments(project)
    assert ProjectItem.objects.get(project=project).active_count == 1


# -- orders -------------------------------------------------------------------------------


def test_random_order_walks_the_fixed_shuffle_from_a_random_point_round_the_end(alice):
    """Each annotator starts at a random point of the shuffle (spreading annotators over the
    project) and goes on from their latest item, so the hand-out never walks past their history."""
    project = project_of(4, order="random")
    trees = trees_in(project)
    shuffled = [trees[2], trees[0], trees[3], trees[1]]
    for key, tree in enumerate(shuffled):
        ProjectItem.objects.filter(project=project, tree_id=tree).update(shuffle_key=(key + 1) / 10)

    with mock.patch("annotation.work.assignment.random.random", return_value=0.25):
        taken = [take_and_submit(project, alice) for _ in range(4)]

    assert taken == shuffled[2:] + shuffled[:2]


def test_sequential_order_goes_on_after_the_annotators_latest_item(alice, bob):
    """An item that opens again behind an annotator (a lease expired) waits until they pass the end."""
    project = project_of(4)
    first, second, third, fourth = trees_in(project)
    assert next_tree(project, bob) == first
    assert take_and_submit(project, alice) == second

    leases_reclaim(project, T0 + timedelta(days=1))  # bob's lease of the first expires

    assert [take_and_submit(project, alice) for _ in range(3)] == [third, fourth, first]


def test_a_random_seed_fixes_the_shuffle_of_a_project():
    project = project_of(6, order="random", random_seed=42)
    keys = dict(ProjectItem.objects.filter(project=project).values_list("tree_id", "shuffle_key"))

    ProjectItem.objects.filter(project=project).delete()
    project_items_sync(project)

    assert dict(ProjectItem.objects.filter(project=project).values_list("tree_id", "shuffle_key")) == keys
    assert sorted(keys, key=keys.get) != sorted(keys)  # 1 chance in 720 of keeping the sequence


def test_fewest_annotations_first_hands_out_the_least_submitted_item(alice, bob, carol):
    project = project_of(3, order="fewest_annotations_first", annotations_per_item=3)
    first, second, third = trees_in(project)
    take_and_submit(project, alice)
    take_and_submit(project, bob)

    # alice took the first item, bob then the second (it had fewer than the first).
    assert sorted(Assignment.objects.values_list("user__username", "tree_id")) == [
        ("alice", first),
        ("bob", second),
    ]
    assert next_tree(project, carol) == third


def test_fewest_annotations_first_prefers_an_item_nobody_holds_among_equals(alice, bob):
    project = project_of(2, order="fewest_annotations_first", annotations_per_item=2)
    first, second = trees_in(project)

    assert next_tree(project, alice) == first
    assert next_tree(project, bob) == second


def test_sequential_order_fills_an_item_before_starting_the_next(alice, bob):
    project = project_of(2, annotations_per_item=2)
    first, _ = trees_in(project)

    assert next_tree(project, alice) == first
    assert next_tree(project, bob) == first


# -- what a hand-out writes ----------------------------------------------------------------


def test_a_project_without_comparisons_starts_no_draft(alice):
    project = project_of(1)

    item_next(project=project, user=alice, now=T0)

    assert not Annotation.objects.exists()


def test_a_new_lease_starts_at_version_1_with_its_lease_length(alice):
    project = project_of(1, lease_minutes=15)

    assignment = item_next(project=project, user=alice, now=T0)

    assert (assignment.status, assignment.version) == (LEASED, 1)
    assert (assignment.leased_at, assignment.lease_expires_at) == (T0, T0 + timedelta(minutes=15))


def test_trees_added_to_the_dataset_later_are_handed_out_once_synced(alice):
    project = project_of(1)
    take_and_submit(project, alice)
    late = ConversationTreeFactory(dataset=project.dataset)

    assert project_items_sync(project) == 1
    assert next_tree(project, alice) == late.pk


# -- query counts -----------------------------------------------------------------------------

COMPARE = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
"""


def branching_item(nodes: int) -> dict:
    """A Potato item of ``nodes`` messages where each node has two replies, breadth first."""
    messages = [
        {"id": f"n{index}", "role": "user" if index % 2 else "assistant", "content": f"m{index}"}
        for index in range(nodes)
    ]
    for index in range(1, nodes):
        messages[(index - 1) // 2].setdefault("children", []).append(messages[index])
    return {"id": f"tree_{nodes}", "tree": messages[0]}


# A savepoint around: expired leases (on PostgreSQL in the statement that takes the person's lock
# first), a free item taken (if the user holds or lost none, in the same statement), the tree's
# shape and the shuffled comparison draft, the tree (on PostgreSQL in the statement that takes the
# item), then the assignment and the audit entry.
HAND_OUT_QUERIES = 6 + taken_tree_read() + closing_writes(2)


@pytest.mark.parametrize("nodes", [4, 1000])
def test_a_hand_out_runs_the_same_queries_whatever_the_tree_size(alice, django_assert_num_queries, nodes):
    dataset = DatasetFactory()
    tree = PotatoTreeFactory(dataset=dataset, item=branching_item(nodes))
    project = ProjectFactory(dataset=dataset, config_yaml=COMPARE)
    assert tree.messages.count() == nodes

    with django_assert_num_queries(HAND_OUT_QUERIES):
        assignment = item_next(project=project, user=alice, now=T0)

    comparisons = Annotation.objects.get(user=alice).payload["branch_comparisons"]
    assert len(comparisons) == (nodes - 1) // 2  # every node with two replies is a decision point
    assert assignment.tree_id == tree.pk


@pytest.mark.parametrize("nodes", [4, 1000])
def test_asking_again_runs_the_same_queries_whatever_the_tree_size(alice, django_assert_num_queries, nodes):
    dataset = DatasetFactory()
    PotatoTreeFactory(dataset=dataset, item=branching_item(nodes))
    project = ProjectFactory(dataset=dataset, config_yaml=COMPARE)
    item_next(project=project, user=alice, now=T0)

    # A savepoint around: expired leases (with the person's lock on PostgreSQL), the taking that
    # finds a lease held, the leases held, the renewal, the tree; a renewed lease is not a new one,
    # so no audit entry.
    with django_assert_num_queries(7):
        item_next(project=project, user=alice, now=T0 + timedelta(minutes=1))


def test_sweeping_expired_leases_costs_no_statement_per_lease(alice, bob, carol, django_assert_num_queries):
    """On PostgreSQL one statement finds, marks and frees them all; SQLite frees the places in
    one more (bench/annotate_page.py saw the count grow when a lease had expired)."""
    project = project_of(4, annotations_per_item=1, lease_minutes=10)
    for user in (alice, bob):
        item_next(project=project, user=user, now=T0)

    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        assert leases_reclaim(project, T0 + timedelta(minutes=11)) == 2
    with django_assert_num_queries(1):
        assert leases_reclaim(project, T0 + timedelta(minutes=11)) == 0

    assert_counts_match_assignments(project)
    assert next_tree(project, carol, now=T0 + timedelta(minutes=12)) in trees_in(project)


def test_trees_imported_after_the_project_was_made_become_its_items():
    from trees.services import tree_import

    project = ProjectFactory()
    before = project.items.count()
    item = {"id": "late", "tree": {"id": "r", "role": "user", "content": "hello"}}

    report = tree_import(
        dataset=project.dataset, source=io.BytesIO(json.dumps(item).encode()), format_name="potato"
    )

    assert report.committed
    assert project.items.count() == before + 1
    assert project.items.filter(tree__external_id="late").exists()


def test_expired_leases_are_looked_for_at_most_once_a_moment_per_process(settings, alice, bob):
    """On PostgreSQL; SQLite looks on every hand-out, whose statements must not come and go."""
    from annotation.work import assignment as hand_out

    settings.LEASE_RECLAIM_SECONDS = 60
    hand_out._reclaim_due_at.clear()
    project = project_of(1, annotations_per_item=1, lease_minutes=30)
    (only,) = trees_in(project)
    assert next_tree(project, alice) == only  # looked, found none expired, leased the one item

    if connection.vendor != "postgresql":
        assert next_tree(project, bob, now=T0 + timedelta(hours=1)) == only
        return
    with pytest.raises(NoItemAvailable):  # alice's lease lapsed, but it is not looked for yet
        next_tree(project, bob, now=T0 + timedelta(hours=1))

    hand_out._reclaim_due_at.clear()  # the moment passed
    assert next_tree(project, bob, now=T0 + timedelta(hours=1)) == only
