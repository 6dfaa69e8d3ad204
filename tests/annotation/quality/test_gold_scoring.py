"""Scoring answers against a gold item's expected ones: a pure function per scheme type,
on plain payloads and parsed configs, no database."""

from __future__ import annotations

import pytest

from annotation.projects.config import parse_config
from annotation.quality.gold_scoring import answers_score, scheme_score, scored_schemes, spans_f1

CONFIG = parse_config(
    """
annotation_schemes:
  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative, neutral]}
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - {annotation_type: multiselect, name: topics, description: Topics, labels: [billing, shipping, returns, other]}
  - {annotation_type: multirate, name: grid, description: Grid, options: [clarity, tone], labels: [low, high]}
  - {annotation_type: number, name: turns, description: Turns}
  - {annotation_type: slider, name: confidence, description: Confidence, min: 0, max: 100}
  - {annotation_type: text, name: notes, description: Notes}
  - {annotation_type: span, name: entities, description: Entities, labels: [PERSON, PLACE]}
  - annotation_type: tree_annotation
    name: tree
    description: Tree
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
  - annotation_type: tree_annotation
    name: ranked
    description: Ranked
    branch_comparison: {enabled: true, mode: ranking}
"""
)


def score(name: str, expected, given) -> float | None:
    return scheme_score(CONFIG.scheme(name), expected, given)


def span(start: int, end: int, label: str = "PERSON", node: str = "m0") -> dict:
    return {
        "node": node,
        "start": start,
        "end": end,
        "text": "x" * (end - start),
        "label": label,
        "attributes": {},
    }


@pytest.mark.parametrize(
    ("name", "expected", "right", "wrong"),
    [
        ("sentiment", {"label": "positive"}, {"label": "positive"}, {"label": "neutral"}),
        ("quality", {"rating": 4}, {"rating": 4}, {"rating": 5}),
        ("turns", {"value": 3}, {"value": 3.0}, {"value": 4}),
    ],
)
def test_choices_ratings_and_numbers_score_exactly(name, expected, right, wrong):
    assert score(name, expected, right) == 1.0
    assert score(name, expected, wrong) == 0.0


def test_an_unanswered_scheme_scores_nothing_where_an_answer_was_expected():
    assert score("sentiment", {"label": "positive"}, None) == 0.0
    assert score("topics", {"labels": ["billing"]}, None) == 0.0
    assert score("tree", {"selected_path": ["m0", "m1"]}, None) == 0.0


def test_multiselect_scores_the_overlap_of_the_label_sets():
    expected = {"labels": ["billing", "shipping"]}
    assert score("topics", expected, {"labels": ["billing", "shipping"]}) == 1.0
    assert score("topics", expected, {"labels": ["billing", "returns"]}) == pytest.approx(1 / 3)
    assert score("topics", expected, {"labels": ["other"]}) == 0.0
    assert score("topics", {"labels": []}, {"labels": []}) == 1.0


def test_multirate_scores_the_share_of_options_rated_the_same():
    assert score("grid", {"clarity": "high", "tone": "low"}, {"clarity": "high", "tone": "high"}) == 0.5


def test_a_slider_scores_closeness_on_its_scale():
    assert score("confidence", {"value": 80}, {"value": 80}) == 1.0
    assert score("confidence", {"value": 80}, {"value": 60}) == pytest.approx(0.8)
    assert score("confidence", {"value": 100}, {"value": 0}) == 0.0


def test_free_text_is_not_scored():
    assert score("notes", {"text": "polite"}, {"text": "rude"}) is None


def test_spans_score_overlap_f1_one_to_one_on_node_label_and_attributes():
    expected = [span(0, 5), span(10, 15, "PLACE")]
    # One overlapping PERSON, one PLACE on the wrong node, one extra span.
    given = [span(1, 6), span(10, 15, "PLACE", node="m1"), span(20, 25)]
    precision, recall = 1 / 3, 1 / 2
    assert spans_f1(expected, given) == pytest.approx(2 * precision * recall / (precision + recall))
    assert spans_f1(expected, expected) == 1.0
    assert spans_f1([], []) == 1.0
    assert spans_f1(expected, []) == 0.0
    # Two answers overlapping one expected span match it once.
    assert spans_f1([span(0, 10)], [span(0, 4), span(5, 10)]) == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_spans_of_another_label_do_not_match():
    assert score("entities", {"spans": [span(0, 5)]}, {"spans": [span(0, 5, "PLACE")]}) == 0.0


def test_a_tree_annotation_averages_its_parts_that_the_gold_item_answers():
    expected = {
        "node_annotations": {"m1": {"rating": 4}, "m2": {"rating": 2}},
        "selected_path": ["m0", "m1", "m3"],
        "branch_comparisons": {
            "m0": {"shown_order": ["m2", "m1"], "pairs": [{"a": "m1", "b": "m2", "label": "Better"}]}
        },
    }
    given = {
        "node_annotations": {"m1": {"rating": 4}, "m2": {"rating": 3}},  # one of two right: 0.5
        "selected_path": ["m0", "m1", "m4"],  # two of three steps shared: 2/3
        "branch_comparisons": {
            "m0": {"shown_order": ["m1", "m2"], "pairs": [{"a": "m1", "b": "m2", "label": "Better"}]}
        },
    }
    assert score("tree", expected, given) == pytest.approx((0.5 + 2 / 3 + 1.0) / 3)


def test_a_tree_part_the_gold_item_leaves_empty_is_not_scored():
    expected = {"node_annotations": {}, "selected_path": ["m0", "m1"], "branch_comparisons": {}}
    assert (
        score("tree", expected, {"selected_path": ["m0", "m1"], "node_annotations": {"m1": {"rating": 1}}})
        == 1.0
    )


def test_a_pair_compared_the_other_way_round_counts_with_the_mirrored_label():
    expected = {
        "branch_comparisons": {
            "m0": {"shown_order": [], "pairs": [{"a": "m1", "b": "m2", "label": "Better"}]}
        }
    }
    mirrored = {
        "branch_comparisons": {"m0": {"shown_order": [], "pairs": [{"a": "m2", "b": "m1", "label": "Worse"}]}}
    }
    same_label = {
        "branch_comparisons": {
            "m0": {"shown_order": [], "pairs": [{"a": "m2", "b": "m1", "label": "Better"}]}
        }
    }
    assert score("tree", expected, mirrored) == 1.0
    assert score("tree", expected, same_label) == 0.0


def test_a_ranking_scores_the_share_of_sibling_pairs_in_the_same_order():
    expected = {"branch_comparisons": {"m0": {"shown_order": [], "ranking": ["a", "b", "c"]}}}
    given = {"branch_comparisons": {"m0": {"shown_order": [], "ranking": ["a", "c", "b"]}}}
    assert score("ranked", expected, given) == pytest.approx(2 / 3)


def test_an_items_score_is_the_mean_of_its_scored_schemes():
    expected = {"sentiment": {"label": "positive"}, "quality": {"rating": 4}, "notes": {"text": "kind"}}
    given = {"sentiment": {"label": "positive"}, "quality": {"rating": 2}, "notes": {"text": "other"}}

    result = answers_score(scored_schemes(CONFIG), expected, given)

    assert result.score == 0.5
    assert result.by_scheme == {"sentiment": 1.0, "quality": 0.0}


def test_an_item_with_nothing_scored_has_no_score():
    assert answers_score(scored_schemes(CONFIG), {"notes": {"text": "kind"}}, {}).score is None


def test_quality_schemes_limit_what_is_scored():
    config = parse_config(
        "annotation_schemes:\n"
        "  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative]}\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"
        "quality: {schemes: [sentiment]}\n"
    )
    assert [scheme.name for scheme in scored_schemes(config)] == ["sentiment"]
