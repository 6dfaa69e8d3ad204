"""Gold items: marked with expected answers checked by the schemes, kept out of the regular
pool, the overlap and the exports, mixed into each annotator's work at the configured rate
(the same way on every run), and scored when submitted.

Alice and Bob annotate; the gold items' expected sentiment is "positive".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.exports import annotations_export
from annotation.models import Assignment, Project, ProjectItem
from annotation.problems import ProblemsError
from annotation.projects.selectors import project_progress
from annotation.quality.gold import gold_item_set, gold_items_mark
from annotation.work.assignment import NoItemAvailable, item_next, leases_reclaim
from annotation.work.submissions import draft_save, item_skip, item_submit
from tests.factories import (
    ConversationTreeFactory,
    DatasetFactory,
    PersonaFactory,
    PotatoTreeFactory,
    ProjectFactory,
)
from tests.queries import taken_tree_read

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
SENTIMENT = (
    "annotation_schemes:\n"
    "  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative, neutral]}\n"
    "  - {annotation_type: text, name: notes, description: Notes}\n"
)
WORK, GOLD, TRAINING = "work", "gold", "training"


@pytest.fixture
def alice():
    return PersonaFactory(username="alice")


@pytest.fixture
def bob():
    return PersonaFactory(username="bob")


def gold_project(
    *, work: int = 6, gold: int = 2, quality: str = "", overlap: int = 1, **assignment: Any
) -> Project:
    """A sentiment project of ``gold`` gold items (g1, g2, ..., expected "positive", added
    first) and ``work`` regular ones (w1, w2, ...)."""
    dataset = DatasetFactory()
    for index in range(1, gold + 1):
        ConversationTreeFactory(dataset=dataset, external_id=f"g{index}")
    for index in range(1, work + 1):
        ConversationTreeFactory(dataset=dataset, external_id=f"w{index}")
    keys = ", ".join(
        f"{key}: {value}" for key, value in {"annotations_per_item": overlap, **assignment}.items()
    )
    project = ProjectFactory(dataset=dataset, config_yaml=SENTIMENT + f"assignment: {{{keys}}}\n" + quality)
    for item in ProjectItem.objects.filter(project=project, tree__external_id__startswith="g"):
        gold_item_set(item=item, answers={"sentiment": "positive"}, explanation="It thanks the agent.")
    return project


def external(assignment: Assignment) -> str:
    return assignment.tree.external_id


def answer(assignment: Assignment, label: str = "positive") -> Assignment:
    return item_submit(
        project=assignment.project,
        tree=assignment.tree,
        user=assignment.user,
        answers={"sentiment": {"label": label}},
        version=assignment.version,
    )


def work_through(project: Project, user: Any, count: int, label: str = "positive") -> list[Assignment]:
    handed = []
    for _ in range(count):
        handed.append(answer(item_next(project=project, user=user, now=T0), label))
    return handed


# Marking items gold


def test_marking_an_item_gold_keeps_its_answers_as_the_scheme_normalises_them():
    project = gold_project(work=1, gold=0)
    item = ProjectItem.objects.get(project=project)

    gold_item_set(
        item=item, answers={"sentiment": {"label": "negative"}, "notes": None}, explanation="Angry."
    )

    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers, item.gold_explanation) == (
        True,
        {"sentiment": {"label": "negative"}},
        "Angry.",
    )


def test_potatos_bare_values_are_read_as_the_schemes_payloads():
    project = gold_project(work=1, gold=0)
    item = ProjectItem.objects.get(project=project)

    gold_item_set(item=item, answers={"sentiment": "neutral", "notes": "calm"})

    assert item.gold_answers == {"sentiment": {"label": "neutral"}, "notes": {"text": "calm"}}


def test_expected_answers_are_checked_by_their_schemes_and_refused_whole():
    project = gold_project(work=1, gold=0)
    item = ProjectItem.objects.get(project=project)

    with pytest.raises(ProblemsError) as error:
        gold_item_set(item=item, answers={"sentiment": "positve", "tone": "calm"})

    assert [str(problem) for problem in error.value.problems] == [
        'sentiment.label: "positve" is not one of the labels (positive, negative, neutral)',
        "tone: no scheme of that name (expected notes, sentiment)",
    ]
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (False, {})


def test_a_gold_item_needs_at_least_one_expected_answer():
    project = gold_project(work=1, gold=0)
    item = ProjectItem.objects.get(project=project)

    with pytest.raises(ProblemsError, match="a gold item needs the expected answer of at least one scheme"):
        gold_item_set(item=item, answers={})


def test_a_tree_items_expected_comparison_need_not_give_the_order_it_is_shown_in():
    dataset = DatasetFactory()
    tree = PotatoTreeFactory(
        dataset=dataset,
        item={
            "id": "t1",
            "tree": {
                "id": "root",
                "role": "user",
                "content": "Hi",
                "children": [
                    {"id": "a", "role": "assistant", "content": "Hello"},
                    {"id": "b", "role": "assistant", "content": "Go away"},
                ],
            },
        },
    )
    project = ProjectFactory(
        dataset=dataset,
        config_yaml=(
            "annotation_schemes:\n"
            "  - {annotation_type: tree_annotation, name: tree, description: Tree, path_selection: {enabled: true},"
            " branch_comparison: {enabled: true}}\n"
        ),
    )
    item = ProjectItem.objects.get(project=project, tree=tree)

    gold_item_set(
        item=item,
        answers={
            "tree": {
                "selected_path": ["root", "a"],
                "branch_comparisons": {"root": {"pairs": [{"a": "a", "b": "b", "label": "Better"}]}},
            }
        },
    )

    assert item.gold_answers["tree"]["branch_comparisons"]["root"]["pairs"] == [
        {"a": "a", "b": "b", "label": "Better"}
    ]
    with pytest.raises(ProblemsError, match=r'tree.selected_path\[1\]: "c" is not a node of this tree'):
        gold_item_set(item=item, answers={"tree": {"selected_path": ["root", "c"]}})


def test_only_items_with_expected_answers_can_be_marked_gold_in_bulk():
    project = gold_project(work=2, gold=1)
    gold_items_mark(items=ProjectItem.objects.filter(project=project), is_gold=False)

    changed, unanswered = gold_items_mark(items=ProjectItem.objects.filter(project=project), is_gold=True)

    assert (changed, unanswered) == (1, 2)
    assert list(
        ProjectItem.objects.filter(project=project, is_gold=True).values_list("tree__external_id", flat=True)
    ) == ["g1"]


# Hand-out


def test_gold_items_are_never_handed_out_as_regular_work(alice):
    project = gold_project(work=3, gold=2)

    handed = [external(assignment) for assignment in work_through(project, alice, 3)]

    assert handed == ["w1", "w2", "w3"]
    with pytest.raises(NoItemAvailable) as nothing:
        item_next(project=project, user=alice, now=T0)
    assert nothing.value.reason == "done"


def test_at_a_rate_of_one_in_four_every_fourth_item_is_a_gold_check_the_same_way_every_run(alice):
    project = gold_project(work=8, gold=3, quality="quality: {gold_rate: 0.25}\n")

    handed = work_through(project, alice, 8)

    assert [assignment.kind for assignment in handed] == [WORK, WORK, WORK, GOLD, WORK, WORK, WORK, GOLD]
    # Gold items come in a fixed shuffled order, each once.
    gold = [external(assignment) for assignment in handed if assignment.kind == GOLD]
    assert len(set(gold)) == 2 and set(gold) <= {"g1", "g2", "g3"}


def test_each_annotator_gets_each_gold_item_once_then_only_work(alice):
    project = gold_project(work=5, gold=1, quality="quality: {gold_rate: 0.5}\n")

    handed = work_through(project, alice, 6)

    assert [assignment.kind for assignment in handed] == [WORK, GOLD, WORK, WORK, WORK, WORK]


def test_gold_checks_take_no_place_in_the_overlap_and_count_no_submission(alice, bob):
    project = gold_project(work=2, gold=1, quality="quality: {gold_rate: 0.5}\n")

    for person in (alice, bob):
        kinds = [assignment.kind for assignment in work_through(project, person, 2)]
        assert kinds == [WORK, GOLD]

    gold = ProjectItem.objects.get(project=project, tree__external_id="g1")
    assert (gold.active_count, gold.submitted_count) == (0, 0)
    assert Assignment.objects.filter(project=project, tree=gold.tree, kind=GOLD).count() == 2


def test_a_gold_check_whose_lease_runs_out_comes_back_without_touching_the_counts(alice):
    project = gold_project(work=2, gold=1, quality="quality: {gold_rate: 0.5}\n", lease_minutes=5)
    answer(item_next(project=project, user=alice, now=T0))
    check = item_next(project=project, user=alice, now=T0)
    assert check.kind == GOLD

    later = T0 + timedelta(minutes=10)
    assert leases_reclaim(project, later) == 1
    again = item_next(project=project, user=alice, now=later)

    assert (again.pk, again.status) == (check.pk, "leased")
    assert ProjectItem.objects.get(project=project, tree=check.tree).active_count == 0
    # Its lease gone again, an answer sent anyway still counts and is scored.
    leases_reclaim(project, later + timedelta(minutes=10))
    assert answer(again).gold_score == 1.0


def test_a_skipped_gold_check_changes_no_counts_and_is_not_scored(alice):
    project = gold_project(work=2, gold=1, quality="quality: {gold_rate: 0.5}\n")
    answer(item_next(project=project, user=alice, now=T0))
    check = item_next(project=project, user=alice, now=T0)

    skipped = item_skip(project=project, tree=check.tree, user=alice)

    assert (skipped.status, skipped.gold_score) == ("skipped", None)
    assert ProjectItem.objects.get(project=project, tree=check.tree).active_count == 0


@pytest.mark.parametrize("gold", [3, 100])
def test_handing_out_a_gold_check_costs_the_queries_regular_work_does_whatever_the_gold_items(
    alice, bob, gold
):
    plain = gold_project(work=3, gold=gold)
    checked = gold_project(work=3, gold=gold, quality="quality: {gold_rate: 0.5}\n")
    answer(item_next(project=plain, user=alice, now=T0))
    answer(item_next(project=checked, user=bob, now=T0))

    with CaptureQueriesContext(connection) as regular:
        item_next(project=plain, user=alice, now=T0)
    with CaptureQueriesContext(connection) as checking:
        assert item_next(project=checked, user=bob, now=T0).kind == GOLD

    # The count of the annotator's items and the pick of an unseen gold item, in place of the
    # regular pick, which takes its place in the item's overlap in the same statement; and the
    # read of the leases held, which regular work checks in that statement too; and on
    # PostgreSQL the read of the gold item's tree, which regular work's taking statement returns.
    assert len(checking) == len(regular) + 2 + (1 - taken_tree_read())


# Scoring


def test_a_gold_check_is_scored_when_submitted_and_rescored_when_corrected(alice):
    project = gold_project(work=1, gold=1, quality="quality: {gold_rate: 0.5}\n")
    answer(item_next(project=project, user=alice, now=T0))
    check = item_next(project=project, user=alice, now=T0)

    submitted = answer(check, "negative")
    assert submitted.gold_score == 0.0

    corrected = draft_save(
        project=project,
        tree=check.tree,
        user=alice,
        answers={"sentiment": {"label": "positive"}},
        version=submitted.version,
    )
    assert corrected.gold_score == 1.0


def test_a_draft_of_a_gold_check_is_not_scored(alice):
    project = gold_project(work=1, gold=1, quality="quality: {gold_rate: 0.5}\n")
    answer(item_next(project=project, user=alice, now=T0))
    check = item_next(project=project, user=alice, now=T0)

    drafted = draft_save(
        project=project,
        tree=check.tree,
        user=alice,
        answers={"sentiment": {"label": "positive"}},
        version=check.version,
    )

    assert drafted.gold_score is None


def test_regular_work_is_never_scored(alice):
    project = gold_project(work=1, gold=1)

    assert answer(item_next(project=project, user=alice, now=T0)).gold_score is None


# What annotators and exports see


def test_an_annotators_progress_counts_gold_checks_as_their_items_but_the_project_counts_only_work(alice):
    project = gold_project(work=2, gold=2, quality="quality: {gold_rate: 0.5}\n")
    work_through(project, alice, 4)

    progress = project_progress(project=project, user=alice)

    assert (progress.submitted, progress.items, progress.complete) == (4, 2, 2)


def test_exports_leave_out_gold_items_and_gold_answers_unless_asked(alice):
    project = gold_project(work=2, gold=1, quality="quality: {gold_rate: 0.5}\n")
    work_through(project, alice, 3)

    def exported(**options: Any) -> list[str]:
        return [
            json.loads(line)["id"]
            for line in annotations_export(project=project, format_name="potato", **options)
        ]

    assert exported() == ["w1", "w2"]
    assert sorted(exported(include_gold=True)) == ["g1", "w1", "w2"]
    # Work done on an item before it was marked gold leaves the exports with it.
    item = ProjectItem.objects.get(project=project, tree__external_id="w1")
    gold_item_set(item=item, answers={"sentiment": "negative"})
    assert exported() == ["w2"]
