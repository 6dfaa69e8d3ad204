"""The value schemes: the payload each one answers with, how it is
normalised, every way it can be wrong, and the config keys each one reads.

They answer for a whole item here (the path starts at the scheme's name);
inside ``tree_annotation`` the same schemes answer for one node.
"""

import math

import pytest

from annotation.problems import Problems, ProblemsError
from annotation.projects.config import parse_config
from annotation.schemes import SCHEMES, Scheme


def scheme_from(entry: str) -> Scheme:
    """The scheme of one config entry (a flow mapping), given the description Potato requires
    when it has none: these tests are about each type's own keys."""
    if entry.startswith("{") and "description:" not in entry:
        entry = "{description: The scheme, " + entry[1:]
    return parse_config(f"annotation_schemes:\n  - {entry}\n").schemes[0]


def config_problems(entry: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        scheme_from(entry)
    return [str(problem) for problem in error.value.problems]


def normalised(scheme: Scheme, payload):
    problems = Problems()
    value = scheme.validate(payload, scheme.name, problems, None)
    assert [str(problem) for problem in problems.items] == []
    return value


def payload_problems(scheme: Scheme, payload) -> list[str]:
    problems = Problems()
    assert scheme.validate(payload, scheme.name, problems, None) is None
    return [str(problem) for problem in problems.items]


LIKERT = "{annotation_type: likert, name: quality, size: 5, min_label: Poor, max_label: Excellent}"
RADIO = "{annotation_type: radio, name: verdict, labels: [Better, Same, Worse]}"
MULTISELECT = "{annotation_type: multiselect, name: issues, labels: [rude, wrong, vague]}"
MULTIRATE = (
    "{annotation_type: multirate, name: criteria, options: [Relevance, Fluency, Helpfulness],"
    " labels: ['1', '2', '3', '4', '5']}"
)
TEXT = "{annotation_type: text, name: notes, max_length: 10}"
NUMBER = "{annotation_type: number, name: turns, min: 1, max: 10, step: 0.5}"
SLIDER = "{annotation_type: slider, name: confidence}"


def test_the_registry_holds_one_class_per_annotation_type():
    assert sorted(SCHEMES) == [
        "likert",
        "multirate",
        "multiselect",
        "number",
        "radio",
        "rubric",
        "slider",
        "span",
        "text",
        "tree_annotation",
    ]
    assert all(cls.annotation_type == name for name, cls in SCHEMES.items())


def test_every_value_scheme_can_rate_a_node_and_tree_annotation_cannot():
    assert sorted(name for name, cls in SCHEMES.items() if not cls.node_level) == [
        "rubric",
        "span",
        "tree_annotation",
    ]


def test_each_scheme_says_how_agreement_is_measured():
    assert {name: cls.agreement for name, cls in SCHEMES.items()} == {
        "likert": "ordinal",
        "radio": "nominal",
        "multiselect": "set",
        "multirate": "ordinal",
        "text": "none",
        "number": "interval",
        "slider": "interval",
        "span": "spans",
        "tree_annotation": "compound",
        "rubric": "compound",
    }


@pytest.mark.parametrize("entry", [LIKERT, RADIO, MULTISELECT, MULTIRATE, TEXT, NUMBER, SLIDER])
def test_a_payload_that_is_not_an_object_is_refused(entry):
    scheme = scheme_from(entry)
    described = (
        "must be an object of option: label" if scheme.annotation_type == "multirate" else "must be an object"
    )

    assert payload_problems(scheme, ["4"]) == [f"{scheme.name}: {described}, got a list"]


# -- likert -------------------------------------------------------------------------


def test_likert_answers_with_a_rating():
    assert normalised(scheme_from(LIKERT), {"rating": 4}) == {"rating": 4}


@pytest.mark.parametrize("rating", [1, 5])
def test_likert_accepts_both_ends_of_the_scale(rating):
    assert normalised(scheme_from(LIKERT), {"rating": rating}) == {"rating": rating}


@pytest.mark.parametrize("rating", [0, 6, -1])
def test_a_likert_rating_outside_the_scale_is_refused(rating):
    assert payload_problems(scheme_from(LIKERT), {"rating": rating}) == [
        f"quality.rating: must be from 1 to 5, got {rating}"
    ]


@pytest.mark.parametrize(
    ("rating", "described"),
    [("4", "a string"), (4.0, "a number"), (True, "a boolean"), (None, "null")],
)
def test_a_likert_rating_must_be_a_whole_number(rating, described):
    assert payload_problems(scheme_from(LIKERT), {"rating": rating}) == [
        f"quality.rating: must be an integer from 1 to 5, got {described}"
    ]


def test_a_likert_payload_with_another_key_is_refused():
    assert payload_problems(scheme_from(LIKERT), {"rating": 4, "score": 4}) == [
        "quality.score: unknown key (expected rating)"
    ]


def test_likert_reads_its_scale_and_optional_point_names():
    scheme = scheme_from(
        "{annotation_type: likert, name: q, size: 3, min_label: 1, max_label: Great, labels: [bad, ok, good]}"
    )

    assert scheme.as_config() == {
        "annotation_type": "likert",
        "name": "q",
        "description": "The scheme",
        "size": 3,
        "min_label": "1",
        "max_label": "Great",
        "labels": ["bad", "ok", "good"],
    }


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("", "size: is required (an integer ≥ 2)"),
        ("size: 1", "size: must be an integer ≥ 2"),
        ("size: five", "size: must be an integer ≥ 2"),
        ("size: 3, labels: [bad, good]", "labels: has 2 names for 3 scale points"),
        ("size: 2, labels: bad", "labels: must be a list of names, one per scale point"),
        ("size: 2, min_label: [a]", "min_label: must be a string, got a list"),
    ],
)
def test_likert_config_errors(keys, expected):
    assert config_problems(f"{{annotation_type: likert, name: q, {keys}}}".replace(", }", "}")) == [
        f"annotation_schemes[0].{expected}"
    ]


# -- radio --------------------------------------------------------------------------


def test_radio_answers_with_one_label():
    assert normalised(scheme_from(RADIO), {"label": "Same"}) == {"label": "Same"}


@pytest.mark.parametrize(
    ("label", "shown"), [("Good", '"Good"'), ("better", '"better"'), (1, "a number"), (None, "null")]
)
def test_a_radio_answer_must_be_one_of_its_labels(label, shown):
    assert payload_problems(scheme_from(RADIO), {"label": label}) == [
        f"verdict.label: {shown} is not one of the labels (Better, Same, Worse)"
    ]


def test_a_radio_payload_with_another_key_is_refused():
    assert payload_problems(scheme_from(RADIO), {"labels": ["Same"]}) == [
        "verdict.labels: unknown key (expected label)"
    ]


def test_radio_labels_can_carry_keyboard_shortcuts_as_potato_writes_them():
    scheme = scheme_from(
        "{annotation_type: radio, name: v, labels: [{name: Accept, key_value: y}, {name: Reject, key_value: n}]}"
    )

    assert scheme.as_config()["labels"] == [
        {"name": "Accept", "key_value": "y"},
        {"name": "Reject", "key_value": "n"},
    ]
    assert normalised(scheme, {"label": "Reject"}) == {"label": "Reject"}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ("", "labels: is required (a list of labels)"),
        ("labels: []", "labels: needs at least 2 labels"),
        ("labels: [Agree]", "labels: needs at least 2 labels"),
        ("labels: Agree", "labels: must be a list of labels, got a string"),
        (
            "labels: [Agree, Agree]",
            'labels[1]: repeats the label "Agree" (first at annotation_schemes[0].labels[0])',
        ),
        ("labels: [Agree, ' ']", "labels[1]: must not be empty"),
        ("labels: [Agree, [No]]", "labels[1]: must be a label name or a mapping with a name"),
        (
            "labels: [Agree, {name: Disagree, colour: red}]",
            'labels[1].colour: unknown key (did you mean "color"?)',
        ),
    ],
)
def test_radio_config_errors(labels, expected):
    entry = f"{{annotation_type: radio, name: v, {labels}}}".replace(", }", "}")

    assert config_problems(entry) == [f"annotation_schemes[0].{expected}"]


# -- multiselect --------------------------------------------------------------------


def test_multiselect_answers_with_labels_in_the_configured_order():
    assert normalised(scheme_from(MULTISELECT), {"labels": ["vague", "rude"]}) == {
        "labels": ["rude", "vague"]
    }


def test_multiselect_may_answer_with_no_label():
    assert normalised(scheme_from(MULTISELECT), {"labels": []}) == {"labels": []}


def test_a_multiselect_answer_names_each_label_that_is_not_one():
    assert payload_problems(scheme_from(MULTISELECT), {"labels": ["rude", "slow", 3]}) == [
        'issues.labels[1]: "slow" is not one of the labels (rude, wrong, vague)',
        "issues.labels[2]: a number is not one of the labels (rude, wrong, vague)",
    ]


def test_a_multiselect_answer_cannot_list_a_label_twice():
    assert payload_problems(scheme_from(MULTISELECT), {"labels": ["rude", "rude"]}) == [
        "issues.labels: lists a label more than once"
    ]


@pytest.mark.parametrize(("labels", "described"), [("rude", "a string"), (None, "null")])
def test_multiselect_labels_must_be_a_list(labels, described):
    assert payload_problems(scheme_from(MULTISELECT), {"labels": labels}) == [
        f"issues.labels: must be a list of labels, got {described}"
    ]


def test_a_multiselect_may_offer_a_single_label():
    assert scheme_from("{annotation_type: multiselect, name: flags, labels: [unsafe]}").label_names == [
        "unsafe"
    ]


# -- multirate ----------------------------------------------------------------------


def test_multirate_answers_with_a_label_per_option_in_the_configured_order():
    payload = {"Helpfulness": "3", "Relevance": "5"}

    value = normalised(scheme_from(MULTIRATE), payload)

    assert value == {"Relevance": "5", "Helpfulness": "3"}
    assert list(value) == ["Relevance", "Helpfulness"]


def test_a_multirate_answer_names_each_unknown_option_and_label():
    assert payload_problems(scheme_from(MULTIRATE), {"Style": "3", "Fluency": "6", "Relevance": 5}) == [
        "criteria.Style: is not one of the options (Relevance, Fluency, Helpfulness)",
        'criteria.Fluency: "6" is not one of the labels (1, 2, 3, 4, 5)',
        "criteria.Relevance: a number is not one of the labels (1, 2, 3, 4, 5)",
    ]


def test_a_multirate_answer_counts_as_given_only_when_every_option_is_rated():
    scheme = scheme_from(MULTIRATE)

    assert scheme.is_empty({"Relevance": "5", "Fluency": "4"})
    assert not scheme.is_empty({"Relevance": "5", "Fluency": "4", "Helpfulness": "1"})


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("labels: [good, bad]", "options: is required (a list of labels)"),
        ("options: [Fluency], labels: [good]", "labels: needs at least 2 labels"),
    ],
)
def test_multirate_config_errors(keys, expected):
    assert config_problems(f"{{annotation_type: multirate, name: m, {keys}}}") == [
        f"annotation_schemes[0].{expected}"
    ]


# -- text ---------------------------------------------------------------------------


def test_text_answers_with_the_text_as_written():
    assert normalised(scheme_from(TEXT), {"text": "  fine.\n"}) == {"text": "  fine.\n"}


def test_a_text_over_its_length_limit_is_refused():
    assert payload_problems(scheme_from(TEXT), {"text": "x" * 11}) == [
        "notes.text: is 11 characters, over the limit of 10"
    ]


@pytest.mark.parametrize(("text", "described"), [(5, "a number"), (None, "null"), (["a"], "a list")])
def test_a_text_answer_must_be_a_string(text, described):
    assert payload_problems(scheme_from(TEXT), {"text": text}) == [
        f"notes.text: must be a string, got {described}"
    ]


def test_blank_text_counts_as_no_answer():
    scheme = scheme_from(TEXT)

    assert scheme.is_empty({"text": "  \n"})
    assert not scheme.is_empty({"text": "ok"})


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("rows: 0", "rows: must be an integer ≥ 1"),
        ("multiline: sometimes", "multiline: must be true or false, got a string"),
    ],
)
def test_text_config_errors(keys, expected):
    assert config_problems(f"{{annotation_type: text, name: t, {keys}}}") == [
        f"annotation_schemes[0].{expected}"
    ]


# -- number and slider --------------------------------------------------------------


@pytest.mark.parametrize("value", [1, 10, 2.5, 4])
def test_number_answers_with_a_value_in_range_on_a_step(value):
    assert normalised(scheme_from(NUMBER), {"value": value}) == {"value": value}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "must be at least 1, got 0"),
        (10.5, "must be at most 10, got 10.5"),
        (1.2, "must be a multiple of 0.5 from 1, got 1.2"),
        ("3", "must be a number, got a string"),
        (True, "must be a number, got a boolean"),
        (None, "must be a number, got null"),
        (math.nan, "must be a finite number, got nan"),
        (math.inf, "must be a finite number, got inf"),
    ],
)
def test_a_number_out_of_range_off_its_step_or_not_a_number_is_refused(value, message):
    assert payload_problems(scheme_from(NUMBER), {"value": value}) == [f"turns.value: {message}"]


def test_a_number_without_bounds_takes_any_number():
    scheme = scheme_from("{annotation_type: number, name: n}")

    assert normalised(scheme, {"value": -1e9}) == {"value": -1e9}


def test_a_slider_runs_from_0_to_100_in_whole_steps_unless_told():
    scheme = scheme_from(SLIDER)

    assert normalised(scheme, {"value": 100}) == {"value": 100}
    assert payload_problems(scheme, {"value": 50.5}) == [
        "confidence.value: must be a multiple of 1 from 0, got 50.5"
    ]
    assert payload_problems(scheme, {"value": 101}) == ["confidence.value: must be at most 100, got 101"]
    assert scheme.as_config() == {
        "annotation_type": "slider",
        "name": "confidence",
        "description": "The scheme",
        "min": 0,
        "max": 100,
        "step": 1,
        "min_label": "",
        "max_label": "",
        "starting_value": 0,
    }


def test_a_slider_payload_with_another_key_is_refused():
    assert payload_problems(scheme_from(SLIDER), {"value": 3, "at": 3}) == [
        "confidence.at: unknown key (expected value)"
    ]


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("min: 10, max: 10", "max: must be above min (10)"),
        ("step: 0", "step: must be above 0"),
        ("min: low", "min: must be a number, got a string"),
    ],
)
def test_number_config_errors(keys, expected):
    assert config_problems(f"{{annotation_type: number, name: n, {keys}}}") == [
        f"annotation_schemes[0].{expected}"
    ]
