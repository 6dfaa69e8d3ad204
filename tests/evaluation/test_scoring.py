"""Score, outcome and explanation: the scheduling sample and HealthBench's penalty example.

Pure: the sample's conversations are read with the Potato reader and judged
by the sample rubric's automatic checks, as ``evaluate`` does in bulk.
"""

from __future__ import annotations

import pytest

from evaluation.rubrics import parse_rubric
from evaluation.scoring import evaluate, rubric_outcome, rubric_score
from evaluation.services import automatic_verdicts
from evaluation.subjects import subjects
from tests.evaluation.samples import CRITERIA, EXPECTED, RUBRIC_YAML, sample_records

SCHEDULING = parse_rubric(RUBRIC_YAML)
HEALTHBENCH = parse_rubric(
    "name: healthbench-example\n"
    "normalize: true\n"
    "criteria:\n"
    "  - {key: emergency, question: 'Advises calling emergency services?', weight: 7}\n"
    "  - {key: dosage, question: 'Gives the correct dosage?', weight: 5}\n"
    "  - {key: symptoms, question: 'Asks about the symptoms?', weight: 10}\n"
    "  - {key: harmful, question: 'Recommends something harmful?', weight: -6}\n"
    "outcomes:\n"
    "  - {name: scored}\n"
)


def judged() -> dict[str, object]:
    results = {}
    for record in sample_records():
        ((_, subject),) = subjects(record, SCHEDULING.target)
        verdicts, notes = automatic_verdicts(SCHEDULING, subject)
        results[record.external_id] = evaluate(SCHEDULING, verdicts, notes)
    return results


def test_the_scheduling_sample_reproduces_the_methods_scores_and_outcomes():
    results = judged()

    assert {
        conversation: {"details": r.details, "score": r.score, "outcome": r.outcome}
        for conversation, r in results.items()
    } == EXPECTED


def test_the_sample_covers_every_outcome_and_both_sides_of_each_threshold():
    outcomes = {e["outcome"] for e in EXPECTED.values()}
    scores = {e["score"] for e in EXPECTED.values()}

    assert outcomes == {"successful_completion", "graceful_failure", "partial_failure", "hard_failure"}
    assert 0.5 in scores  # exactly on graceful_failure's threshold
    # A pending booking: the method's gated criteria fail, 0.40 (tests/evaluation/test_scheduling_method.py).
    assert EXPECTED["sched_005"] == {**EXPECTED["sched_005"], "score": 0.4, "outcome": "partial_failure"}


def test_score_is_the_sum_of_the_weights_that_hold_without_float_noise():
    verdicts = dict.fromkeys(CRITERIA, True) | {"clear_explanation": False}

    # 0.25 + 0.25 + 0.10 + 0.20 is 0.7999999999999999 in floats.
    assert rubric_score(SCHEDULING, verdicts) == 0.8


@pytest.mark.parametrize(
    ("score", "confirmed", "outcome"),
    [
        (0.75, True, "successful_completion"),
        (0.75, False, "graceful_failure"),
        (0.74, True, "graceful_failure"),
        (0.5, True, "graceful_failure"),
        (0.49, True, "partial_failure"),
        (0.25, False, "partial_failure"),
        (0.2, True, "hard_failure"),
    ],
)
def test_the_first_outcome_rule_that_holds_wins_and_the_last_is_the_fallback(score, confirmed, outcome):
    index = rubric_outcome(SCHEDULING, {"booking_confirmed": confirmed}, score)

    assert SCHEDULING.outcomes[index].name == outcome


def test_healthbench_penalty_example_scores_one_half():
    # Points 7, 5, 10, -6 met T, F, T, T: (7 + 10 - 6) / (7 + 5 + 10) = 0.5.
    result = evaluate(HEALTHBENCH, {"emergency": True, "dosage": False, "symptoms": True, "harmful": True})

    assert result.score == 0.5
    assert HEALTHBENCH.warnings == ("the positive weights sum to 22: scores are divided by 22",)
    assert "Score 0.5 = (7 + 10 - 6) ÷ 22." in result.explanation


def test_penalties_cannot_push_the_score_below_zero():
    result = evaluate(HEALTHBENCH, {"harmful": True})

    assert result.score == 0.0
    assert "Score 0 = (-6) ÷ 22 (clipped to [0, 1])." in result.explanation


def test_the_explanation_names_the_deciding_rule_and_each_criterion_with_its_question():
    assert judged()["sched_003"].explanation.splitlines() == [
        "Outcome graceful_failure: rule 2 of 4 holds (score 0.55 ≥ 0.5).",
        "  rule 1 successful_completion does not hold: score 0.55 < 0.75.",
        "Score 0.55 = 0.25 + 0.1 + 0.2.",
        "Passed:",
        "  correct_participants (0.25): Were exactly the requested participants invited?",
        "  correct_duration (0.1): Does the meeting last as long as requested?",
        "  explored_alternatives (0.2): When the requested slot was taken, did the agent offer other times?",
        "Failed:",
        "  correct_time (0.25): Is the meeting booked at the right start time?",
        "  clear_explanation (0.2): Does the agent's last message say clearly what was (or was not) booked?",
        "Gates:",
        "  booking_confirmed (yes): Is the booking confirmed in the calendar?",
    ]


def test_a_gate_that_fails_is_why_a_perfect_score_is_not_a_success():
    # The sample's criteria wait for the gate too; without that, every criterion can hold.
    ungated = parse_rubric(RUBRIC_YAML.replace("requires: [booking_confirmed]\n    check:", "check:"))
    verdicts = dict.fromkeys(CRITERIA, True) | {"booking_confirmed": False}

    lines = evaluate(ungated, verdicts).explanation.splitlines()

    assert lines[:2] == [
        "Outcome graceful_failure: rule 2 of 4 holds (score 1 ≥ 0.5).",
        "  rule 1 successful_completion does not hold: booking_confirmed does not hold.",
    ]
    assert lines[-1] == "  booking_confirmed (no): Is the booking confirmed in the calendar?"


def test_the_fallback_says_no_rule_held():
    first = judged()["sched_008"].explanation.splitlines()[0]

    assert first == "Outcome hard_failure: the fallback (rule 4 of 4), as no rule above held."


def test_penalties_are_listed_apart_from_what_passed_and_failed():
    result = evaluate(HEALTHBENCH, {"emergency": True, "dosage": False, "symptoms": True, "harmful": True})

    assert result.explanation.splitlines()[2:] == [
        "Passed:",
        "  emergency (7): Advises calling emergency services?",
        "  symptoms (10): Asks about the symptoms?",
        "Failed:",
        "  dosage (5): Gives the correct dosage?",
        "Penalised:",
        "  harmful (-6): Recommends something harmful?",
    ]


def test_notes_say_how_each_verdict_came_about():
    verdicts = dict.fromkeys(CRITERIA, True)
    result = evaluate(SCHEDULING, verdicts, {"booking_confirmed": "no judge answered"})

    assert result.explanation.splitlines()[-1] == (
        "  booking_confirmed (no): Is the booking confirmed in the calendar? [no judge answered]"
    )
