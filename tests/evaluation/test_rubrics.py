"""Rubric YAML, validated: every problem is reported at once, each with its key path
and a reason a person can act on. Pure: no database."""

from __future__ import annotations

import pytest

from annotation.problems import ProblemsError
from evaluation.rubrics import parse_rubric
from tests.evaluation.samples import CRITERIA, OUTCOMES, RUBRIC_YAML

CHECKS = "all, any, contains, equals, exists, last_role, length, not, python, regex, set_equals, truthy"


def problems_of(text: str, **options) -> list[str]:
    with pytest.raises(ProblemsError) as caught:
        parse_rubric(text, **options)
    return [str(problem) for problem in caught.value.problems]


def rubric(
    criteria: str, outcomes: str = "  - {name: pass, min_score: 0.5}\n  - {name: fail}\n", **top: str
) -> str:
    head = "".join(f"{key}: {value}\n" for key, value in top.items())
    return f"name: example\n{head}criteria:\n{criteria}outcomes:\n{outcomes}"


TWO = "  - {key: a, question: 'A?', weight: 0.5}\n  - {key: b, question: 'B?', weight: 0.5}\n"


def test_the_scheduling_sample_reads_as_five_weighted_criteria_a_gate_and_four_ordered_outcomes():
    spec = parse_rubric(RUBRIC_YAML)

    assert spec.name == "scheduling"
    assert spec.target == "conversation"
    assert [(c.key, c.weight, c.automatic) for c in spec.criteria] == [
        ("correct_participants", 0.25, True),
        ("correct_time", 0.25, True),
        ("correct_duration", 0.10, True),
        ("explored_alternatives", 0.20, True),
        ("clear_explanation", 0.20, True),
    ]
    assert [(g.key, g.check_source) for g in spec.gates] == [
        ("booking_confirmed", {"python": "booking_confirmed"})
    ]
    assert [(o.name, o.min_score, o.requires) for o in spec.outcomes] == [
        ("successful_completion", 0.75, ("booking_confirmed",)),
        ("graceful_failure", 0.5, ()),
        ("partial_failure", 0.25, ()),
        ("hard_failure", 0.0, ()),
    ]
    assert spec.keys == [*CRITERIA, "booking_confirmed"]
    assert spec.outcome_names == OUTCOMES
    assert spec.warnings == ()


# -- the four bad rubrics of the issue -----------------------------------------------


def test_weights_that_do_not_sum_to_one_are_refused_unless_normalised():
    text = rubric("  - {key: a, question: 'A?', weight: 0.5}\n  - {key: b, question: 'B?', weight: 0.4}\n")

    assert problems_of(text) == [
        "criteria: the weights sum to 0.9, not 1.0: fix them, or set normalize: true to divide scores by their sum"
    ]
    normalised = parse_rubric(text.replace("criteria:", "normalize: true\ncriteria:"))
    assert normalised.warnings == ("the positive weights sum to 0.9: scores are divided by 0.9",)


def test_an_unknown_check_is_refused_naming_the_checks_there_are():
    text = rubric(
        "  - {key: a, question: 'A?', weight: 0.5, check: {equal: [metadata.x, metadata.y]}}\n"
        "  - {key: b, question: 'B?', weight: 0.5}\n"
    )

    assert problems_of(text) == [
        f'criteria[0].check: unknown check "equal" (did you mean "equals"? checks are: {CHECKS})'
    ]


def test_an_outcome_requiring_an_unknown_key_is_refused_naming_the_keys_there_are():
    text = rubric(
        TWO,
        "  - {name: pass, min_score: 0.5, requires: [a, booked]}\n  - {name: fail}\n",
    ).replace("outcomes:", "gates:\n  - {key: confirmed, question: 'Confirmed?'}\noutcomes:")

    assert problems_of(text) == [
        'outcomes[0].requires[1]: unknown key "booked" (criteria and gates are: a, b, confirmed)'
    ]


def test_a_criterion_may_require_only_gates_named_in_the_rubric():
    text = rubric(
        "  - {key: a, question: 'A?', weight: 0.5, requires: [confirmed]}\n"
        "  - {key: b, question: 'B?', weight: 0.5, requires: [a, booked]}\n"
        "  - {key: c, question: 'C?', weight: 0.1, requires: confirmed}\n",
        normalize="true",
    ).replace("outcomes:", "gates:\n  - {key: confirmed, question: 'Confirmed?'}\noutcomes:")

    assert problems_of(text) == [
        'criteria[1].requires[0]: unknown gate "a" (gates are: confirmed)',
        'criteria[1].requires[1]: unknown gate "booked" (gates are: confirmed)',
        "criteria[2].requires: must be a list of gate keys, got a string",
    ]


def test_a_criterion_requiring_a_gate_that_does_not_hold_does_not_hold():
    from evaluation.scoring import evaluate

    spec = parse_rubric(
        rubric(
            "  - {key: a, question: 'A?', weight: 0.5, requires: [confirmed]}\n  - {key: b, question: 'B?', weight: 0.5}\n"
        ).replace("outcomes:", "gates:\n  - {key: confirmed, question: 'Confirmed?'}\noutcomes:")
    )

    unconfirmed = evaluate(spec, {"a": True, "b": True, "confirmed": False})
    confirmed = evaluate(spec, {"a": True, "b": True, "confirmed": True})

    assert (unconfirmed.details["a"], unconfirmed.score) == (False, 0.5)
    assert unconfirmed.notes["a"] == "requires confirmed, which does not hold"
    assert (confirmed.details["a"], confirmed.score) == (True, 1.0)
    assert [c.requires for c in spec.criteria] == [("confirmed",), ()]
    assert spec.as_json()["criteria"][0]["requires"] == ["confirmed"]


def test_a_python_check_must_be_registered_in_settings_never_imported_from_the_yaml():
    text = rubric(
        "  - {key: a, question: 'A?', weight: 0.5, check: {python: os.system}}\n"
        "  - {key: b, question: 'B?', weight: 0.5}\n"
    )

    assert problems_of(text) == [
        'criteria[0].check.python: no Python check "os.system" is registered '
        "(settings.BRANCHPOINT_RUBRIC_CHECKS has: booking_confirmed)"
    ]
    assert problems_of(text, python_checks=[]) == [
        'criteria[0].check.python: no Python check "os.system" is registered '
        "(settings.BRANCHPOINT_RUBRIC_CHECKS has: none)"
    ]


def test_a_python_check_registered_in_settings_can_be_named(settings):
    settings.BRANCHPOINT_RUBRIC_CHECKS = {"always": "tests.evaluation.test_rubrics.always"}
    text = rubric("  - {key: a, question: 'A?', weight: 1, check: {python: always}}\n")

    assert parse_rubric(text).criteria[0].automatic


def always(subject) -> bool:
    return True


# -- penalties, HealthBench style ---------------------------------------------------------


def test_negative_weights_are_penalties_and_only_positive_weights_must_sum_to_one():
    text = rubric(
        "  - {key: a, question: 'A?', weight: 0.6}\n"
        "  - {key: b, question: 'B?', weight: 0.4}\n"
        "  - {key: harm, question: 'Harmful?', weight: -0.5}\n"
    )

    spec = parse_rubric(text)

    assert spec.positive_total == 1.0
    assert problems_of(text.replace("0.4}", "0.5}")) == [
        "criteria: the positive weights sum to 1.1, not 1.0: fix them, "
        "or set normalize: true to divide scores by their sum"
    ]


def test_a_rubric_needs_a_positive_weight():
    assert problems_of(rubric("  - {key: harm, question: 'Harmful?', weight: -1}\n")) == [
        "criteria: needs at least one criterion with a positive weight"
    ]


# -- everything else is located too -----------------------------------------------------


def test_every_problem_is_reported_at_once_with_its_key_path():
    text = (
        "name: bad name\n"
        "target: tree\n"
        "normalise: true\n"
        "criteria:\n"
        "  - {key: a, question: 'A?', weight: yes}\n"
        "  - {key: a, question: '', weight: 0.5}\n"
        "  - {key: 2b, question: 'B?', weight: 0}\n"
        "  - {key: c, question: 'C?', weight: 0.5, check: {regex: {pattern: '(', message: first}}}\n"
        "  - {key: d, question: 'D?', weight: 0.5, check: {equals: [meta.x, metadata..y]}}\n"
        "gates:\n"
        "  - {key: c2, question: 'C2?', check: {last_role: robot}}\n"
        "outcomes:\n"
        "  - {name: pass, min_score: 1.5}\n"
        "  - {name: pass}\n"
        "  - {name: fail, requires: [c]}\n"
    )

    assert problems_of(text) == [
        'normalise: unknown key (did you mean "normalize"?)',
        "name: is required: letters, digits, _ and - (it names the rubric in URLs)",
        'target: "tree" is not a target (conversation, path, node)',
        "criteria[0].weight: must be a number, got a boolean",
        'criteria[1].key: "a" is already the key of criteria[0]',
        "criteria[1].question: must be a non-empty string, got a string",
        "criteria[2].key: is required: letters, digits and _, not starting with a digit",
        "criteria[2].weight: must not be 0 (a check without weight is a gate)",
        'criteria[3].check.regex.message: "first" is not a message '
        "(last_assistant, last_user, last, any, any_assistant, any_user, path)",
        "criteria[3].check.regex.pattern: is not a valid regular expression: missing ), unterminated subpattern at position 0",
        'criteria[4].check.equals[0]: "meta.x" starts with "meta": paths start with metadata, node, tree or $',
        'criteria[4].check.equals[1]: "metadata..y" is not a path: cannot read "..y" '
        '(a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps)',
        'gates[0].check.last_role: "robot" is not a role (user, assistant, system)',
        "outcomes[0].min_score: must be a number from 0 to 1, got 1.5",
        'outcomes[1].name: "pass" is already the name of outcomes[0]',
        "outcomes[2]: the last outcome is the fallback when no rule above holds: it takes no min_score or requires",
    ]


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ("{equals: [metadata.a]}", "criteria[0].check.equals: must list two paths, got 1"),
        (
            "{set_equals: {path: metadata.a, value: x}}",
            "criteria[0].check.set_equals.value: must be a list, got a string",
        ),
        (
            "{exists: 3}",
            'criteria[0].check.exists: must be a path: a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps',
        ),
        ("{contains: {message: last}}", "criteria[0].check.contains.text: is required"),
        (
            "{contains: {text: []}}",
            "criteria[0].check.contains.text: must be a non-empty string or a list of them (any may appear)",
        ),
        ("{length: {message: last}}", "criteria[0].check.length: needs min, max or both"),
        (
            "{length: {min: 1}}",
            "criteria[0].check.length: must measure one thing: a message (message:), a path (path:) or messages:",
        ),
        (
            "{length: {messages: robot, max: 3}}",
            "criteria[0].check.length.messages: must be any or a role (user, assistant, system)",
        ),
        ("{length: {message: last, min: 5, max: 2}}", "criteria[0].check.length.min: is above max (5 > 2)"),
        ("{all: []}", "criteria[0].check.all: must be a non-empty list of checks, got a list"),
        (
            "{any: [{truthy: metadata.a}, {nope: 1}]}",
            f'criteria[0].check.any[1]: unknown check "nope" (checks are: {CHECKS})',
        ),
        (
            "{not: {exists: metadata.a}, any: []}",
            f"criteria[0].check: must be a mapping with one key, the check's type ({CHECKS}), got a mapping with 2 keys",
        ),
    ],
)
def test_each_check_type_reports_what_is_wrong_with_it(check: str, problem: str):
    text = rubric(f"  - {{key: a, question: 'A?', weight: 1, check: {check}}}\n")

    assert problems_of(text) == [problem]


def test_yaml_that_does_not_parse_says_where():
    assert problems_of("name: x\ncriteria: [\n") == [
        "line 3 column 1: not valid YAML: expected the node content, but found '<stream end>'"
    ]


def test_dates_in_the_yaml_stay_strings_like_the_metadata_they_are_compared_with():
    text = rubric(
        "  - {key: a, question: 'A?', weight: 1, check: {equals: {path: metadata.day, value: 2025-03-11}}}\n"
    )

    assert parse_rubric(text).criteria[0].check_source == {
        "equals": {"path": "metadata.day", "value": "2025-03-11"}
    }


def test_the_rubric_as_data_round_trips():
    spec = parse_rubric(RUBRIC_YAML)
    import yaml

    assert parse_rubric(yaml.safe_dump(spec.as_json())).as_json() == spec.as_json()
