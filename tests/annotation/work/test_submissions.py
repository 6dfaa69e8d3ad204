"""Saving answers: drafts, submissions and skips; every write names the
version it was based on; required schemes must be answered before
submitting; a refused write saves nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.problems import ProblemsError
from annotation.work.assignment import item_next, leases_reclaim
from annotation.work.submissions import (
    NotAssigned,
    StaleVersion,
    draft_save,
    item_answers,
    item_skip,
    item_submit,
)
from tests.factories import (
    ConversationTreeFactory,
    DatasetFactory,
    PersonaFactory,
    PotatoTreeFactory,
    ProjectFactory,
)
from tests.queries import closing_writes

pytestmark = pytest.mark.django_db

SURVEY = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, label_requirement: {required: true}}
  - {annotation_type: radio, name: verdict, description: Verdict, labels: [Better, Same, Worse]}
  - {annotation_type: multiselect, name: issues, description: Issues, labels: [rude, wrong, vague]}
  - {annotation_type: multirate, name: criteria, description: Criteria, options: [Relevance, Fluency], labels: [low, high]}
  - {annotation_type: text, name: notes, description: Notes}
  - {annotation_type: number, name: turns, description: Turns, min: 0}
  - {annotation_type: slider, name: confidence, description: Confidence}
"""
ALL_ANSWERS = {
    "quality": {"rating": 4},
    "verdict": {"label": "Same"},
    "issues": {"labels": ["vague", "rude"]},
    "criteria": {"Fluency": "high", "Relevance": "low"},
    "notes": {"text": "Polite but vague."},
    "turns": {"value": 3},
    "confidence": {"value": 80},
}


@pytest.fixture
def alice():
    return PersonaFactory(username="alice")


@pytest.fixture
def bob():
    return PersonaFactory(username="bob")


def survey(trees: int = 1, config_yaml: str = SURVEY) -> Project:
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(trees, dataset=dataset)
    return ProjectFactory(dataset=dataset, config_yaml=config_yaml)


def save(
    assignment: Assignment, answers, *, submit: bool = False, version: int | None = None, **extra
) -> Assignment:
    write = item_submit if submit else draft_save
    return write(
        project=assignment.project,
        tree=assignment.tree,
        user=assignment.user,
        answers=answers,
        version=assignment.version if version is None else version,
        **extra,
    )


def payloads(assignment: Assignment) -> dict:
    return item_answers(project=assignment.project, tree=assignment.tree, user=assignment.user).payloads


def statuses(assignment: Assignment) -> dict:
    return dict(
        Annotation.objects.filter(tree=assignment.tree, user=assignment.user).values_list("scheme", "status")
    )


def db_state() -> tuple:
    return (
        list(Annotation.objects.order_by("pk").values()),
        list(Assignment.objects.order_by("pk").values()),
        list(ProjectItem.objects.order_by("pk").values()),
    )


def refused(assignment: Assignment, answers, *, submit: bool = True) -> list[tuple[str, str, str]]:
    before = db_state()
    with pytest.raises(ProblemsError) as error:
        save(assignment, answers, submit=submit)
    assert db_state() == before
    return [(problem.path, problem.message, problem.code) for problem in error.value.problems]


# -- the simple types at item level ----------------------------------------------------------


def test_every_simple_type_answers_for_the_whole_conversation(alice):
    assignment = item_next(project=survey(), user=alice)

    save(assignment, ALL_ANSWERS, submit=True)

    assert payloads(assignment) == {
        "quality": {"rating": 4},
        "verdict": {"label": "Same"},
        "issues": {"labels": ["rude", "vague"]},
        "criteria": {"Relevance": "low", "Fluency": "high"},
        "notes": {"text": "Polite but vague."},
        "turns": {"value": 3},
        "confidence": {"value": 80},
    }
    assert set(statuses(assignment).values()) == {Annotation.Status.SUBMITTED}


# -- drafts -----------------------------------------------------------------------------


def test_a_draft_keeps_the_answers_bumps_the_version_and_extends_the_lease(alice):
    assignment = item_next(project=survey(), user=alice, now=timezone.now() - timedelta(minutes=50))
    before = timezone.now()

    saved = save(assignment, {"quality": {"rating": 2}})

    assert (saved.status, saved.version) == ("leased", 2)
    assert saved.lease_expires_at >= before + timedelta(minutes=60)
    assert payloads(assignment) == {"quality": {"rating": 2}}
    assert statuses(assignment) == {"quality": Annotation.Status.DRAFT}
    assert ProjectItem.objects.get(tree=assignment.tree).submitted_count == 0


def test_a_draft_need_not_answer_required_schemes(alice):
    assignment = item_next(project=survey(), user=alice)

    assert save(assignment, {"notes": {"text": "later"}}).version == 2


def test_each_write_bumps_the_item_version_and_each_answers_version(alice):
    assignment = item_next(project=survey(), user=alice)

    assignment = save(assignment, {"quality": {"rating": 2}})
    assignment = save(assignment, {"quality": {"rating": 3}, "notes": {"text": "ok"}})
    assignment = save(assignment, {"quality": {"rating": 4}}, submit=True)

    assert assignment.version == 4
    assert dict(Annotation.objects.values_list("scheme", "version")) == {"quality": 3, "notes": 2}


def test_time_spent_is_summed_over_visits(alice):
    assignment = item_next(project=survey(), user=alice)

    assignment = save(assignment, {"quality": {"rating": 2}}, time_spent_ms=1500)
    save(assignment, {"quality": {"rating": 3}}, submit=True, time_spent_ms=2500)

    assert Assignment.objects.get(pk=assignment.pk).time_spent_ms == 4000


# -- submissions --------------------------------------------------------------------------


def test_a_submission_marks_the_item_and_its_answers_submitted_and_counts_once(alice):
    assignment = item_next(project=survey(), user=alice)

    submitted = save(assignment, {"quality": {"rating": 5}}, submit=True)

    assert (submitted.status, submitted.lease_expires_at) == ("submitted", None)
    assert submitted.submitted_at is not None
    assert statuses(assignment) == {"quality": Annotation.Status.SUBMITTED}
    item = ProjectItem.objects.get(tree=assignment.tree)
    assert (item.active_count, item.submitted_count) == (1, 1)


def test_answers_not_sent_again_are_submitted_with_the_item(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"notes": {"text": "draft note"}})

    save(assignment, {"quality": {"rating": 3}}, submit=True)

    assert payloads(assignment) == {"notes": {"text": "draft note"}, "quality": {"rating": 3}}
    assert statuses(assignment) == {"notes": "submitted", "quality": "submitted"}


def test_a_submitted_item_can_be_corrected_and_still_counts_once(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 5}}, submit=True)

    corrected = save(assignment, {"quality": {"rating": 4}}, submit=True)

    assert corrected.status == "submitted"
    assert payloads(assignment) == {"quality": {"rating": 4}}
    assert ProjectItem.objects.get(tree=assignment.tree).submitted_count == 1


def test_a_draft_saved_after_submitting_keeps_every_answer_submitted(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 5}}, submit=True)

    saved = save(assignment, {"quality": {"rating": 4}, "notes": {"text": "second thoughts"}})

    assert saved.status == "submitted"
    assert statuses(assignment) == {"quality": "submitted", "notes": "submitted"}
    assert ProjectItem.objects.get(tree=assignment.tree).submitted_count == 1


# -- required schemes (label_requirement) ----------------------------------------------------


def test_a_required_scheme_must_be_answered_before_submitting(alice):
    assignment = item_next(project=survey(), user=alice)

    assert refused(assignment, {"verdict": {"label": "Better"}}) == [
        ("quality", "is required before submitting", "required")
    ]


def test_a_required_answer_saved_in_an_earlier_draft_counts(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 1}})

    assert save(assignment, {"verdict": {"label": "Worse"}}, submit=True).status == "submitted"


def test_a_required_answer_that_is_wrong_is_reported_for_what_is_wrong(alice):
    assignment = item_next(project=survey(), user=alice)

    assert refused(assignment, {"quality": {"rating": 7}}) == [
        ("quality.rating", "must be from 1 to 5, got 7", "invalid")
    ]


REQUIRED = "label_requirement: {required: true}"


@pytest.mark.parametrize(
    ("scheme", "empty", "answered"),
    [
        (
            f"{{annotation_type: text, name: why, description: Why, {REQUIRED}}}",
            {"text": "  "},
            {"text": "because"},
        ),
        (
            f"{{annotation_type: multiselect, name: why, description: Why, labels: [a, b], {REQUIRED}}}",
            {"labels": []},
            {"labels": ["b"]},
        ),
        (
            f"{{annotation_type: multirate, name: why, description: Why, options: [x, y], labels: [lo, hi], {REQUIRED}}}",
            {"x": "lo"},
            {"x": "lo", "y": "hi"},
        ),
    ],
)
def test_an_empty_answer_does_not_satisfy_a_requirement(alice, scheme, empty, answered):
    assignment = item_next(project=survey(config_yaml=f"annotation_schemes:\n  - {scheme}\n"), user=alice)

    assert refused(assignment, {"why": empty}) == [("why", "is required before submitting", "required")]
    assert save(assignment, {"why": answered}, submit=True).status == "submitted"


def test_a_required_tree_annotation_is_not_answered_by_its_first_draft(alice):
    config = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    label_requirement: {required: true}
    branch_comparison: {enabled: true}
"""
    dataset = DatasetFactory()
    PotatoTreeFactory(
        dataset=dataset,
        item={
            "id": "t",
            "tree": {
                "id": "root",
                "role": "user",
                "content": "q",
                "children": [
                    {"id": "a", "role": "assistant", "content": "1"},
                    {"id": "b", "role": "assistant", "content": "2"},
                ],
            },
        },
    )
    assignment = item_next(project=ProjectFactory(dataset=dataset, config_yaml=config), user=alice)

    assert refused(assignment, {}) == [("compare", "is required before submitting", "required")]


# -- refused writes save nothing -----------------------------------------------------------


def test_one_bad_answer_refuses_the_whole_write(alice):
    assignment = item_next(project=survey(), user=alice)

    assert refused(assignment, {"quality": {"rating": 3}, "verdict": {"label": "Best"}}) == [
        ("verdict.label", '"Best" is not one of the labels (Better, Same, Worse)', "invalid")
    ]


def test_an_answer_to_a_scheme_the_project_does_not_have_is_refused(alice):
    assignment = item_next(project=survey(), user=alice)

    assert refused(assignment, {"quality": {"rating": 3}, "summary": {"text": "x"}}) == [
        (
            "summary",
            "no scheme of that name (expected confidence, criteria, issues, notes, quality, turns, verdict)",
            "unknown_scheme",
        )
    ]


def test_answers_must_be_an_object_of_scheme_answers(alice):
    assignment = item_next(project=survey(), user=alice)

    assert refused(assignment, [{"rating": 3}]) == [
        ("annotations", "must be an object of scheme name: answer", "invalid")
    ]


def test_a_write_from_a_stale_version_is_refused_and_overwrites_nothing(alice):
    assignment = item_next(project=survey(), user=alice)
    save(assignment, {"quality": {"rating": 2}})  # from another tab: now version 2
    before = db_state()

    for submit in (False, True):
        with pytest.raises(StaleVersion) as error:
            save(assignment, {"quality": {"rating": 5}}, submit=submit, version=1)
        assert error.value.current == 2

    assert db_state() == before
    assert payloads(assignment) == {"quality": {"rating": 2}}


def test_someone_without_the_item_cannot_write_to_it(alice, bob):
    assignment = item_next(project=survey(), user=alice)

    with pytest.raises(NotAssigned) as error:
        draft_save(project=assignment.project, tree=assignment.tree, user=bob, answers={}, version=1)

    assert (str(error.value), error.value.code) == (
        "this item is not assigned to you; ask for the next item",
        "not_assigned",
    )


# -- skip -------------------------------------------------------------------------------------


def test_skipping_gives_the_item_up_and_marks_its_answers_skipped(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 2}})

    skipped = item_skip(
        project=assignment.project, tree=assignment.tree, user=alice, version=assignment.version
    )

    assert (skipped.status, skipped.version, skipped.lease_expires_at) == ("skipped", 3, None)
    assert statuses(assignment) == {"quality": "skipped"}
    assert ProjectItem.objects.get(tree=assignment.tree).active_count == 0


def test_skipping_twice_changes_nothing_the_second_time(alice):
    assignment = item_next(project=survey(), user=alice)
    item_skip(project=assignment.project, tree=assignment.tree, user=alice)

    again = item_skip(project=assignment.project, tree=assignment.tree, user=alice)

    assert (again.status, again.version) == ("skipped", 2)
    assert ProjectItem.objects.get(tree=assignment.tree).active_count == 0


def test_a_skipped_item_cannot_be_answered(alice):
    assignment = item_next(project=survey(), user=alice)
    skipped = item_skip(project=assignment.project, tree=assignment.tree, user=alice)

    with pytest.raises(NotAssigned) as error:
        save(skipped, {"quality": {"rating": 3}}, submit=True)

    assert (str(error.value), error.value.code) == ("you skipped this item", "skipped")


def test_a_submitted_item_cannot_be_skipped(alice):
    assignment = save(item_next(project=survey(), user=alice), {"quality": {"rating": 3}}, submit=True)

    with pytest.raises(NotAssigned) as error:
        item_skip(project=assignment.project, tree=assignment.tree, user=alice)

    assert (str(error.value), error.value.code) == ("you already submitted this item", "already_submitted")


def test_a_skip_from_a_stale_version_is_refused(alice):
    assignment = item_next(project=survey(), user=alice)
    save(assignment, {"quality": {"rating": 2}})

    with pytest.raises(StaleVersion):
        item_skip(project=assignment.project, tree=assignment.tree, user=alice, version=1)

    assert Assignment.objects.get(pk=assignment.pk).status == "leased"


# -- expired leases -----------------------------------------------------------------------------


def test_a_write_after_the_lease_expired_takes_the_item_back_if_its_place_is_free(alice):
    project = survey()
    assignment = item_next(project=project, user=alice, now=timezone.now() - timedelta(hours=2))
    leases_reclaim(project, timezone.now())
    assert ProjectItem.objects.get(tree=assignment.tree).active_count == 0

    saved = save(Assignment.objects.get(pk=assignment.pk), {"quality": {"rating": 3}})

    assert saved.status == "leased"
    assert saved.lease_expires_at > timezone.now()
    assert ProjectItem.objects.get(tree=assignment.tree).active_count == 1


def test_a_write_after_the_lease_expired_and_someone_else_took_the_place_is_refused(alice, bob):
    project = survey()
    assignment = item_next(project=project, user=alice, now=timezone.now() - timedelta(hours=2))
    item_next(project=project, user=bob)  # reclaims alice's lease and takes the place
    before = db_state()

    with pytest.raises(NotAssigned) as error:
        save(Assignment.objects.get(pk=assignment.pk), {"quality": {"rating": 3}}, submit=True)

    assert (str(error.value), error.value.code) == (
        "your time on this item ran out and others have taken it; ask for the next item",
        "lease_expired",
    )
    assert db_state() == before


# -- query counts --------------------------------------------------------------------------------

COMPARE = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
  - {annotation_type: text, name: notes, description: Notes}
"""
# A savepoint around: the locked assignment with its tree and answers, the tree's shape, then the
# closing writes: the new and changed answers, the assignment, the annotator's and the item's
# submitted counts, the audit entry.
SUBMIT_QUERIES = 4 + closing_writes(6)


def branching_item(nodes: int) -> dict:
    """A Potato item of ``nodes`` messages where each node has two replies, breadth first."""
    messages = [{"id": f"n{index}", "role": "user", "content": f"m{index}"} for index in range(nodes)]
    for index in range(1, nodes):
        messages[(index - 1) // 2].setdefault("children", []).append(messages[index])
    return {"id": f"tree_{nodes}", "tree": messages[0]}


@pytest.mark.parametrize("nodes", [4, 1000])
def test_a_submission_runs_the_same_queries_whatever_the_tree_size(alice, django_assert_num_queries, nodes):
    dataset = DatasetFactory()
    PotatoTreeFactory(dataset=dataset, item=branching_item(nodes))
    assignment = item_next(project=ProjectFactory(dataset=dataset, config_yaml=COMPARE), user=alice)
    shown = Annotation.objects.get(scheme="compare").payload["branch_comparisons"]["n0"]["shown_order"]
    answers = {
        "compare": {
            "node_annotations": {"n1": {"rating": 4}, "n2": {"rating": 2}},
            "selected_path": ["n0", "n1", "n3"],
            "branch_comparisons": {
                "n0": {"shown_order": shown, "pairs": [{"a": "n1", "b": "n2", "label": "Better"}]}
            },
        },
        "notes": {"text": "fine"},
    }

    tree, project = assignment.tree, assignment.project

    with django_assert_num_queries(SUBMIT_QUERIES):
        item_submit(project=project, tree=tree, user=alice, answers=answers, version=assignment.version)

    assert Annotation.objects.get(scheme="compare").payload["selected_path"] == ["n0", "n1", "n3"]


def test_null_takes_an_answer_back(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 2}, "notes": {"text": "first thoughts"}})

    save(assignment, {"notes": None})

    assert dict(Annotation.objects.values_list("scheme", "payload")) == {"quality": {"rating": 2}}


def test_a_required_answer_taken_back_is_missing_at_submission(alice):
    assignment = item_next(project=survey(), user=alice)
    assignment = save(assignment, {"quality": {"rating": 2}})

    assert refused(assignment, {"quality": None}) == [
        ("quality", "is required before submitting", "required")
    ]
