"""Span agreement: exact-match and overlap F1 between annotators, per pair and averaged.

F1 = 2 · matched / (spans of one + spans of the other), pooled over the items
both annotated. Every case is small enough to count by hand.
"""

from __future__ import annotations

import pytest

from evaluation.agreement import Span, span_agreement, span_f1, span_f1_pairs


def one_item(alice, bob):
    return {"conv-1": {"alice": alice, "bob": bob}}


def test_exact_match_needs_the_same_node_offsets_and_label():
    alice = [Span("n1", 0, 5, "PERSON"), Span("n1", 10, 15, "PLACE"), Span("n2", 0, 5, "PERSON")]
    bob = [Span("n1", 0, 5, "PERSON"), Span("n1", 10, 14, "PLACE"), Span("n2", 0, 5, "PLACE")]

    result = span_f1(one_item(alice, bob), "alice", "bob")

    # Only the first span matches: 2 · 1 / (3 + 3).
    assert result.value == pytest.approx(1 / 3)
    assert result.parts == {"matched": 1, "spans_first": 3, "spans_second": 3}
    assert result.measure == "span F1 (exact)"


def test_overlap_match_needs_the_same_node_and_label_and_a_character_in_common():
    alice = [Span("n1", 0, 5, "PERSON"), Span("n1", 10, 15, "PLACE"), Span("n2", 0, 5, "PERSON")]
    bob = [Span("n1", 0, 5, "PERSON"), Span("n1", 10, 14, "PLACE"), Span("n2", 0, 5, "PLACE")]

    # The PLACE spans on n1 overlap (4 characters); the n2 spans differ in label: 2 · 2 / 6.
    assert span_f1(one_item(alice, bob), "alice", "bob", match="overlap").value == pytest.approx(2 / 3)


def test_touching_spans_do_not_overlap():
    # [0, 5) and [5, 9) share no character (end is exclusive).
    data = one_item([Span("n1", 0, 5, "X")], [Span("n1", 5, 9, "X")])

    assert span_f1(data, "alice", "bob", match="overlap").value == 0


def test_overlap_pairs_spans_one_to_one_largest_overlap_first():
    # Alice's [0, 10) overlaps Bob's [0, 4) by 4 and [3, 10) by 7: it pairs with [3, 10) only.
    data = one_item([Span("n1", 0, 10, "X")], [Span("n1", 0, 4, "X"), Span("n1", 3, 10, "X")])

    result = span_f1(data, "alice", "bob", match="overlap")

    assert result.parts["matched"] == 1
    assert result.value == pytest.approx(2 / 3)


def test_overlap_takes_exact_pairs_first_so_it_is_never_below_exact_f1():
    # Alice's [2, 10) overlaps Bob's [0, 12) and [2, 10) by 8 each; the exact pair wins (smaller union),
    # which leaves [0, 12) for Alice's [11, 12). Pairing [2, 10) with [0, 12) would have matched only one.
    alice = [Span("n1", 2, 10, "X"), Span("n1", 11, 12, "X")]
    bob = [Span("n1", 0, 12, "X"), Span("n1", 2, 10, "X")]
    data = one_item(alice, bob)

    assert span_f1(data, "alice", "bob", match="exact").value == pytest.approx(0.5)
    assert span_f1(data, "alice", "bob", match="overlap").value == pytest.approx(1.0)


def test_spans_pool_over_the_items_both_annotated():
    data = {
        "conv-1": {"alice": [("n1", 0, 5, "X")], "bob": [("n1", 0, 5, "X")]},
        # An empty answer counts: bob's span is unmatched.
        "conv-2": {"alice": [], "bob": [("n1", 0, 3, "X")]},
        "conv-3": {"alice": [("n1", 0, 5, "X")]},  # bob did not annotate it: left out
    }

    result = span_f1(data, "alice", "bob")

    assert result.value == pytest.approx(2 * 1 / (1 + 2))
    assert (result.n_units, result.n_dropped, result.n_values) == (2, 1, 3)


@pytest.mark.parametrize("match", ["exact", "overlap"])
def test_span_f1_undefined_cases(match):
    apart = {"conv-1": {"alice": [("n1", 0, 5, "X")]}, "conv-2": {"bob": []}}
    silent = {"conv-1": {"alice": [], "bob": []}, "conv-2": {"alice": [], "bob": []}}

    assert span_f1(apart, "alice", "bob", match=match).undefined_reason == (
        "alice and bob annotated no item in common"
    )
    assert span_f1(silent, "alice", "bob", match=match).undefined_reason == (
        "neither alice nor bob marked a span on the 2 items both annotated"
    )


def test_span_agreement_averages_the_pairs():
    s1, s2 = ("n1", 0, 5, "X"), ("n1", 7, 9, "Y")
    data = {"conv-1": {"alice": [s1, s2], "bob": [s1], "carol": [s1, s2]}}

    pairs = span_f1_pairs(data)
    mean = span_agreement(data)

    # alice-bob 2 · 1/3, alice-carol 1, bob-carol 2 · 1/3.
    assert {pair: round(result.value, 9) for pair, result in pairs.items()} == {
        ("alice", "bob"): round(2 / 3, 9),
        ("alice", "carol"): 1.0,
        ("bob", "carol"): round(2 / 3, 9),
    }
    assert mean.value == pytest.approx(7 / 9)
    assert (mean.n_coders, mean.n_units, mean.parts) == (3, 1, {"pairs": 3, "defined_pairs": 3})


def test_span_agreement_leaves_undefined_pairs_out_and_says_when_none_is_left():
    s1 = ("n1", 0, 5, "X")
    data = {"conv-1": {"alice": [s1], "bob": [s1]}, "conv-2": {"carol": [s1]}}

    assert span_agreement(data).value == 1.0
    assert span_agreement({"conv-1": {"alice": [s1]}}).undefined_reason == (
        "only one coder: no pair of coders to compare"
    )
    assert span_agreement({"conv-1": {"alice": [], "bob": []}}).undefined_reason == (
        "no pair of coders has a value "
        "(alice and bob: neither alice nor bob marked a span on the 1 item both annotated)"
    )


def test_a_span_is_a_four_tuple():
    with pytest.raises(ValueError, match=r"a span is a \(node, start, end, label\) tuple"):
        span_f1(one_item([{"node": "n1", "start": 0, "end": 5, "label": "X"}], []), "alice", "bob")
