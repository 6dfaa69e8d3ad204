"""Adjudication's arithmetic, without a database.

Answers come apart into fields — a scheme, a tree answer's node ratings, its
path and each comparison, a span answer's spans — and go back together the
same. Agreement is per field; an unanswered field is a value (None) like any
other; disagreements come first. The automatic rule takes a field when at
least ``min_agreement`` of the annotators gave the same value.
"""

from __future__ import annotations

from annotation.review.merging import (
    AUTO_MAJORITY,
    SPAN,
    TREE,
    WHOLE,
    answer_fields,
    auto_majority,
    field_votes,
    fields_answers,
    prefilled,
)

KINDS = {"overall": WHOLE, "response": TREE, "entities": SPAN}
SPAN_A = {"node": "root", "start": 0, "end": 5, "text": "Hello", "label": "GREETING", "attributes": {}}
ALICE = {
    "overall": {"label": "Helpful"},
    "response": {
        "node_annotations": {"resp_a": {"rating": 4}, "resp_b": {"rating": 2}},
        "selected_path": ["root", "resp_a"],
        "branch_comparisons": {
            "root": {
                "shown_order": ["resp_b", "resp_a"],
                "pairs": [{"a": "resp_a", "b": "resp_b", "label": "Better"}],
            }
        },
    },
    "entities": {"spans": [SPAN_A]},
}


def test_an_answer_comes_apart_into_fields_and_goes_back_together_unchanged():
    fields = answer_fields(KINDS, ALICE)

    assert sorted(fields) == [
        "entities/span/root:0-5:GREETING",
        "overall",
        "response/comparison/root",
        "response/node/resp_a",
        "response/node/resp_b",
        "response/path",
    ]
    assert fields_answers(KINDS, fields) == ALICE


def test_fields_everyone_agrees_on_are_prefilled_and_disagreements_come_first():
    bob = {"overall": {"label": "Helpful"}, "response": {"node_annotations": {"resp_a": {"rating": 5}}}}
    votes = field_votes({"alice": answer_fields(KINDS, ALICE), "bob": answer_fields(KINDS, bob)})

    assert [vote.name for vote in votes if vote.agreed] == ["overall"]
    assert votes[-1].name == "overall"  # agreements last
    assert votes[0].name == "response/node/resp_a"
    assert votes[0].values == {"alice": {"rating": 4}, "bob": {"rating": 5}}
    merged = prefilled(votes)
    assert merged.fields == {"overall": {"label": "Helpful"}}
    assert merged.provenance == {"overall": "alice"}
    assert "response/node/resp_b" in merged.undecided  # Bob left it unrated: a disagreement


def test_comparisons_agree_whatever_order_their_replies_were_shown_in():
    bob = {"response": {"branch_comparisons": {"root": {**ALICE["response"]["branch_comparisons"]["root"]}}}}
    bob["response"]["branch_comparisons"]["root"]["shown_order"] = ["resp_a", "resp_b"]
    votes = field_votes(
        {"alice": answer_fields(KINDS, {"response": ALICE["response"]}), "bob": answer_fields(KINDS, bob)}
    )

    assert next(vote for vote in votes if vote.name == "response/comparison/root").agreed


def test_the_automatic_rule_takes_fields_reaching_min_agreement_and_leaves_the_rest():
    columns = {
        "alice": {"overall": {"label": "Helpful"}, "response/path": ["root", "resp_a"]},
        "bob": {"overall": {"label": "Helpful"}, "response/path": ["root", "resp_b"]},
        "carol": {"overall": {"label": "Unhelpful"}},
    }
    votes = field_votes(columns)

    merged = auto_majority(votes, 0.67)
    assert merged.fields == {"overall": {"label": "Helpful"}}  # two of three: 0.67 to two decimals
    assert merged.provenance == {"overall": AUTO_MAJORITY}
    assert merged.undecided == ["response/path"]


def test_two_of_three_fall_short_of_a_higher_bar():
    votes = field_votes({"a": {"x": 1}, "b": {"x": 1}, "c": {"x": 2}})

    assert auto_majority(votes, 0.75).undecided == ["x"]


def test_a_single_annotator_is_no_majority():
    votes = field_votes({"alice": {"overall": {"label": "Helpful"}}})

    assert auto_majority(votes, 0.5).undecided == ["overall"]
