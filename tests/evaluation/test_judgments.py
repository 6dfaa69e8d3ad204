"""People judging with a rubric: the ``rubric`` scheme's answers, checked like any
other scheme's, then combined per criterion by majority into ``human`` results
(a tie fails) and with the automatic checks into ``combined`` ones, with the
votes kept for agreement.

Personas: Alice, Bob and Charlie judge; Dana manages the project.
"""

from __future__ import annotations

from typing import Any

import pytest

from annotation.models import Annotation
from annotation.problems import ProblemsError
from annotation.projects.config import parse_config
from annotation.schemes import SCHEMES
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_submit
from evaluation.judgments import criterion_agreement, majority, vote_note, votes_collect
from evaluation.models import EvaluationResult
from evaluation.services import judgments_combine, project_evaluate, rubric_save
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CONVERSATIONS, CRITERIA, RUBRIC_YAML, scheduling_project
from tests.factories import AnnotationFactory, RubricFactory
from trees.models import ConversationTree

ALL_YES = dict.fromkeys([*CRITERIA, "booking_confirmed"], True)


# -- majority and agreement (pure) -----------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "verdict", "note"),
    [
        ({"alice": True}, True, "the judge said yes"),
        ({"alice": True, "bob": True, "charlie": False}, True, "2 of 3 judges said yes"),
        ({"alice": True, "bob": False, "charlie": False}, False, "1 of 3 judges said yes"),
        ({"alice": True, "bob": False}, False, "1 of 2 judges said yes (a tie fails)"),
        ({}, None, "no judge answered"),
    ],
)
def test_judges_are_combined_per_criterion_by_majority_and_a_tie_fails(votes, verdict, note):
    assert majority(votes) is verdict
    assert vote_note(votes) == note


def test_agreement_is_the_share_of_judge_pairs_that_agree():
    assert criterion_agreement({"a": True, "b": True, "c": False}) == pytest.approx(1 / 3)
    assert criterion_agreement({"a": False, "b": False}) == 1.0
    assert criterion_agreement({"a": True}) is None


def test_votes_are_gathered_by_unit_criterion_and_judge_for_each_target():
    conversation = votes_collect(
        [("1", {"criteria": {"a": True, "b": False}}), ("2", {"criteria": {"a": False}})], "conversation"
    )
    paths = votes_collect([("1", {"path": ["r", "x"], "criteria": {"a": True}})], "path")
    nodes = votes_collect(
        [("1", {"nodes": {"x": {"criteria": {"a": True}}, "y": {"criteria": {"a": False}}}})], "node"
    )

    assert conversation == {"": {"a": {"1": True, "2": False}, "b": {"1": False}}}
    assert paths == {"x": {"a": {"1": True}}}
    assert nodes == {"x": {"a": {"1": True}}, "y": {"a": {"1": False}}}


# -- the rubric scheme --------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_rubric_type_is_registered_by_the_evaluation_app():
    assert SCHEMES["rubric"].widget_script == "evaluation/rubric_widget.js"
    assert SCHEMES["rubric"].node_level is False


@pytest.mark.django_db
def test_a_rubric_scheme_must_name_an_existing_rubric():
    RubricFactory(yaml=RUBRIC_YAML)

    with pytest.raises(ProblemsError) as caught:
        parse_config(
            "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review, rubric: schedule}\n"
        )

    assert [str(p) for p in caught.value.problems] == [
        'annotation_schemes[0].rubric: no rubric named "schedule" (rubrics are: scheduling)'
    ]


@pytest.mark.django_db
def test_the_scheme_shows_the_current_version_of_its_rubric_to_the_page():
    project = scheduling_project(items=CONVERSATIONS[:1])
    rubric_save(
        yaml_text=RUBRIC_YAML.replace("Is the booking confirmed in the calendar?", "Is it confirmed?")
    )

    config = parse_config(project.config_yaml).scheme("review").as_config()

    assert config["rubric"] == "scheduling"
    assert config["target"] == "conversation"
    assert [c["key"] for c in config["criteria"]] == CRITERIA
    assert config["criteria"][2] == {
        "key": "correct_duration",
        "question": "Does the meeting last as long as requested?",
        "weight": 0.1,
    }
    assert config["gates"] == [{"key": "booking_confirmed", "question": "Is it confirmed?"}]


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.mark.django_db
def test_answers_are_checked_against_the_rubric(alice):
    project = scheduling_project(items=CONVERSATIONS[:1], annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = ConversationTree.objects.get(pk=held.tree_id)

    with pytest.raises(ProblemsError) as caught:
        draft_save(
            project=project,
            tree=tree,
            user=alice,
            answers={"review": {"criteria": {"correct_time": "yes", "booked": True}, "note": 3}},
            version=held.version,
        )

    assert [str(p) for p in caught.value.problems] == [
        "review.criteria.correct_time: must be true or false, got a string",
        "review.criteria.booked: not a criterion or gate of rubric scheduling "
        "(correct_participants, correct_time, correct_duration, explored_alternatives, clear_explanation, booking_confirmed)",
        "review.note: must be a string, got a number",
    ]


@pytest.mark.django_db
def test_a_judge_answers_every_question_yes_or_no_with_a_note(alice):
    project = scheduling_project(items=CONVERSATIONS[:1], annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = ConversationTree.objects.get(pk=held.tree_id)

    item_submit(
        project=project,
        tree=tree,
        user=alice,
        answers={
            "review": {"criteria": {"correct_time": True, "booking_confirmed": False}, "note": " checked "}
        },
        version=held.version,
    )

    stored = Annotation.objects.get(project=project, user=alice)
    assert stored.payload == {
        "criteria": {"correct_time": True, "booking_confirmed": False},
        "note": " checked ",
    }


@pytest.mark.django_db
def test_a_required_rubric_needs_every_question_answered_before_submitting(alice):
    config = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review, rubric: scheduling, label_requirement: {required: true}}\n"
    project = scheduling_project(config_yaml=config, items=CONVERSATIONS[:1], annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = ConversationTree.objects.get(pk=held.tree_id)
    partial = {"review": {"criteria": {"correct_time": True}}}

    with pytest.raises(ProblemsError) as caught:
        item_submit(project=project, tree=tree, user=alice, answers=partial, version=held.version)

    assert [str(p) for p in caught.value.problems] == ["review: is required before submitting"]
    done = item_submit(
        project=project,
        tree=tree,
        user=alice,
        answers={"review": {"criteria": ALL_YES}},
        version=held.version,
    )
    assert done.status == "submitted"


BRANCHING = {
    "id": "branching",
    "final_state": {},
    "tree": {
        "id": "root",
        "role": "user",
        "content": "Book Ana at 14:00.",
        "children": [
            {
                "id": "a1",
                "role": "assistant",
                "content": "Booked for 14:00.",
                "children": [{"id": "u2", "role": "user", "content": "Thanks."}],
            },
            {"id": "a2", "role": "assistant", "content": "Which day?"},
        ],
    },
}


def target_rubric(target: str) -> str:
    return (
        f"name: replies\ntarget: {target}\n"
        "criteria:\n  - {key: helpful, question: 'Helpful?', weight: 1}\n"
        "outcomes:\n  - {name: good, min_score: 1}\n  - {name: bad}\n"
    )


@pytest.mark.django_db
def test_a_path_is_judged_from_the_first_message_each_one_a_reply_to_the_one_before(alice):
    RubricFactory(yaml=target_rubric("path"))
    config = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review, rubric: replies}\n"
    project = scheduling_project("paths", config, [BRANCHING], annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = ConversationTree.objects.get(pk=held.tree_id)

    def save(path: list[str]) -> Any:
        answers = {"review": {"path": path, "criteria": {"helpful": True}}}
        return draft_save(project=project, tree=tree, user=alice, answers=answers, version=held.version)

    for path, problem in (
        (["a1"], 'review.path[0]: a path starts at the first message, "root"'),
        (["root", "u2"], 'review.path[1]: "u2" is not a reply to "root"'),
        (["root", "zz"], 'review.path[1]: no node "zz" in this tree'),
        ([], "review.path: choose the path you judge (from the first message on)"),
    ):
        with pytest.raises(ProblemsError) as caught:
            save(path)
        assert [str(p) for p in caught.value.problems] == [problem]
    save(["root", "a1", "u2"])
    assert Annotation.objects.get(user=alice).payload == {
        "path": ["root", "a1", "u2"],
        "criteria": {"helpful": True},
    }


@pytest.mark.django_db
def test_nodes_are_judged_one_by_one_by_their_ids(alice):
    RubricFactory(yaml=target_rubric("node"))
    config = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review, rubric: replies}\n"
    project = scheduling_project("nodes", config, [BRANCHING], annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = ConversationTree.objects.get(pk=held.tree_id)
    answers = {
        "review": {
            "nodes": {
                "a2": {"criteria": {"helpful": False}},
                "a1": {"criteria": {"helpful": True}, "note": "good"},
                "zz": {"criteria": {}},
            }
        }
    }

    with pytest.raises(ProblemsError) as caught:
        draft_save(project=project, tree=tree, user=alice, answers=answers, version=held.version)
    assert [str(p) for p in caught.value.problems] == ['review.nodes.zz: no node "zz" in this tree']

    del answers["review"]["nodes"]["zz"]
    draft_save(project=project, tree=tree, user=alice, answers=answers, version=held.version)
    # Kept in tree order, whatever order they came in.
    assert list(Annotation.objects.get(user=alice).payload["nodes"]) == ["a1", "a2"]


# -- combining judges into results ------------------------------------------------------------


@pytest.fixture
def judges() -> list[Any]:
    return [person(name) for name in ("alice", "bob", "charlie")]


def judge(project: Any, tree: ConversationTree, user: Any, criteria: dict[str, bool], **payload: Any) -> None:
    AnnotationFactory(
        project=project, tree=tree, user=user, scheme="review", payload={"criteria": criteria, **payload}
    )


@pytest.mark.django_db
def test_three_judges_make_a_human_result_by_majority_and_keep_their_votes(judges):
    alice, bob, charlie = judges
    project = scheduling_project(items=CONVERSATIONS[:1])
    tree = ConversationTree.objects.get(external_id="sched_001")
    judge(project, tree, alice, ALL_YES, note="all good")
    judge(project, tree, bob, ALL_YES | {"correct_time": False, "booking_confirmed": False})
    judge(project, tree, charlie, ALL_YES | {"correct_time": False})

    summary = judgments_combine(project=project, rubric=project_rubric())

    human = EvaluationResult.objects.get(project=project, source="human")
    assert (summary.units, summary.written) == (1, 2)
    assert human.details == ALL_YES | {"correct_time": False}
    assert human.score == 0.75
    assert human.outcome == "successful_completion"
    assert human.votes["correct_time"] == {str(alice.pk): True, str(bob.pk): False, str(charlie.pk): False}
    assert (
        "  correct_time (0.25): Is the meeting booked at the right start time? [1 of 3 judges said yes]"
        in human.explanation
    )
    assert human.explanation.endswith("Judges' notes:\n  alice: all good")


def project_rubric():
    from evaluation.models import Rubric

    return Rubric.objects.get(name="scheduling")


@pytest.mark.django_db
def test_a_tie_between_two_judges_fails_the_criterion(judges):
    alice, bob, _ = judges
    project = scheduling_project(items=CONVERSATIONS[:1])
    tree = ConversationTree.objects.get(external_id="sched_001")
    judge(project, tree, alice, ALL_YES)
    judge(project, tree, bob, ALL_YES | {"clear_explanation": False})

    judgments_combine(project=project, rubric=project_rubric())

    human = EvaluationResult.objects.get(project=project, source="human")
    assert human.details["clear_explanation"] is False
    assert human.score == 0.8
    assert "[1 of 2 judges said yes (a tie fails)]" in human.explanation


@pytest.mark.django_db
def test_combined_results_take_the_judges_where_they_answered_and_the_checks_elsewhere(judges):
    alice, *_ = judges
    project = scheduling_project(items=CONVERSATIONS[:3])
    rubric = project_rubric()
    project_evaluate(project=project, rubric=rubric)
    tree = ConversationTree.objects.get(external_id="sched_003")  # the checks: 0.55, graceful_failure
    # Alice only says the terse "Booked." was a clear enough explanation.
    judge(project, tree, alice, {"clear_explanation": True})

    judgments_combine(project=project, rubric=rubric)

    combined = EvaluationResult.objects.get(project=project, tree=tree, source="combined")
    human = EvaluationResult.objects.get(project=project, tree=tree, source="human")
    assert combined.score == 0.75
    assert combined.outcome == "successful_completion"
    assert "[judges: the judge said yes]" in combined.explanation
    assert human.score == 0.2
    assert human.outcome == "hard_failure"
    assert "[no judge answered]" in human.explanation
    assert EvaluationResult.objects.filter(project=project, source="combined").count() == 1


@pytest.mark.django_db
def test_combining_again_writes_only_what_changed_and_drafts_do_not_count(judges):
    alice, bob, _ = judges
    project = scheduling_project(items=CONVERSATIONS[:2])
    rubric = project_rubric()
    tree = ConversationTree.objects.get(external_id="sched_001")
    judge(project, tree, alice, ALL_YES)
    AnnotationFactory(
        project=project,
        tree=tree,
        user=bob,
        scheme="review",
        payload={"criteria": {"correct_time": False}},
        status="draft",
    )

    first = judgments_combine(project=project, rubric=rubric)
    again = judgments_combine(project=project, rubric=rubric)
    Annotation.objects.filter(user=alice).delete()
    gone = judgments_combine(project=project, rubric=rubric)

    assert (first.written, again.written, again.deleted) == (2, 0, 0)
    assert gone.deleted == 2
    assert not EvaluationResult.objects.filter(project=project).exists()
