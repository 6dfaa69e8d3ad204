"""The judges' prompts and the strict reading of their answers (no database, no requests).

An answer is read only if it is exactly the JSON asked for: every criterion and no other,
booleans for ``holds``, a reason for each, a label from the list. One Markdown code fence
around it is taken off; nothing else is repaired.
"""

from __future__ import annotations

import json

import pytest

from evaluation.llm.prompts import (
    Malformed,
    TemplateError,
    comparison_answer_read,
    label_mirror,
    label_tie,
    messages_render,
    rubric_answer_read,
    rubric_values,
    template_check,
)

KEYS = ["helpful", "polite"]
LABELS = ["Better", "Same", "Worse"]


def answer(**criteria):
    return json.dumps({"criteria": criteria})


def test_a_complete_answer_is_read_with_its_reasons_on_one_line():
    text = answer(
        helpful={"holds": True, "reason": "It answers\n  the question."},
        polite={"holds": False, "reason": "Curt."},
    )

    read = rubric_answer_read(f"```json\n{text}\n```", KEYS)

    assert (read["helpful"].holds, read["helpful"].reason) == (True, "It answers the question.")
    assert (read["polite"].holds, read["polite"].reason) == (False, "Curt.")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("The reply is helpful.", "not JSON"),
        ("", "the answer is empty"),
        ("[1, 2]", "not a JSON object but list"),
        ('{"criteria": {}, "score": 1}', "the answer: unknown key score"),
        (answer(helpful={"holds": True, "reason": "ok"}), "criteria: missing polite"),
        (
            answer(
                helpful={"holds": True, "reason": "ok"},
                polite={"holds": True, "reason": "ok"},
                funny={"holds": True, "reason": "ok"},
            ),
            "criteria: unknown key funny",
        ),
        (
            answer(helpful={"holds": 1, "reason": "ok"}, polite={"holds": True, "reason": "ok"}),
            "criteria.helpful.holds must be true or false, got 1",
        ),
        (
            answer(helpful={"holds": True, "reason": " "}, polite={"holds": True, "reason": "ok"}),
            "criteria.helpful: reason must be a non-empty string",
        ),
        (answer(helpful=True, polite=True), "criteria.helpful must be an object"),
        ('Here it is: {"criteria": {}}', "not JSON"),
    ],
)
def test_anything_else_is_malformed_and_says_why(text, why):
    with pytest.raises(Malformed, match=why.replace(".", r"\.")):
        rubric_answer_read(text, KEYS)


def test_a_label_must_be_one_of_the_schemes():
    assert comparison_answer_read('{"label": "Same", "reason": "Alike."}', LABELS).label == "Same"
    for text, why in (
        ('{"label": "same", "reason": "Alike."}', 'label "same" is not one of Better, Same, Worse'),
        ('{"label": "Same"}', "the answer: missing reason"),
        ('{"label": 2, "reason": "x"}', "label 2 is not one of"),
    ):
        with pytest.raises(Malformed, match=why):
            comparison_answer_read(text, LABELS)


def test_labels_mirror_around_the_middle_which_is_the_tie():
    assert label_mirror(LABELS) == {"Better": "Worse", "Same": "Same", "Worse": "Better"}
    assert label_tie(LABELS) == "Same"
    assert label_tie(["A", "B"]) is None


def test_templates_name_only_the_placeholders_of_their_kind():
    template_check("rubric", "Judge $conversation against $criteria; $$5 and ${answer_shape}")
    with pytest.raises(TemplateError, match=r"unknown placeholder \$response_a \(a rubric judge fills"):
        template_check("rubric", "Compare $response_a")
    with pytest.raises(TemplateError, match="a lone \\$ at character 5"):
        template_check("comparison", "Cost $ 5")


def test_the_built_in_rubric_prompt_asks_for_every_key():
    values = rubric_values(
        rubric="Helpful replies",
        description="",
        subject="the conversation below",
        conversation="[user]\nHi",
        questions=[("helpful", "Is it helpful?"), ("polite", "Is it polite?")],
    )

    system, user = messages_render("rubric", "", "", values)

    assert system["role"] == "system" and "JSON" in system["content"]
    assert "- helpful: Is it helpful?\n- polite: Is it polite?" in user["content"]
    assert '"polite": {\n      "holds": true' in user["content"]
    assert "$" not in user["content"]
