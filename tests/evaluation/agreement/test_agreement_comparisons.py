"""Branch-comparison pair labels as nominal data: one unit per sibling pair per item, labels oriented."""

from __future__ import annotations

import pytest

from evaluation.agreement import PairJudgement, comparison_units, krippendorff_alpha, mirror_from_order

MIRROR = mirror_from_order(["Better", "Same", "Worse"])


def test_the_mirror_of_an_ordered_label_scale():
    assert MIRROR == {"Better": "Worse", "Same": "Same", "Worse": "Better"}
    assert mirror_from_order(["A much better", "A better", "Tie", "B better", "B much better"]) == {
        "A much better": "B much better",
        "A better": "B better",
        "Tie": "Tie",
        "B better": "A better",
        "B much better": "A much better",
    }


def test_the_same_judgement_given_either_way_round_is_one_value():
    judgements = [
        PairJudgement("conv-1", "root", "alice", "resp_a", "resp_b", "Better"),
        PairJudgement("conv-1", "root", "bob", "resp_b", "resp_a", "Worse"),  # resp_a is better, again
    ]

    assert comparison_units(judgements, MIRROR) == {
        ("conv-1", "root", "resp_a", "resp_b"): {"alice": "Better", "bob": "Better"}
    }


def test_one_unit_per_sibling_pair_per_item():
    judgements = [
        ("conv-1", "root", "alice", "a", "b", "Better"),
        ("conv-1", "root", "alice", "c", "a", "Same"),
        ("conv-1", "root", "alice", "b", "c", "Worse"),
        ("conv-2", "root", "alice", "a", "b", "Same"),
        ("conv-1", "a", "alice", "a1", "a2", "Better"),
    ]

    assert comparison_units(judgements, MIRROR) == {
        ("conv-1", "root", "a", "b"): {"alice": "Better"},
        ("conv-1", "root", "a", "c"): {"alice": "Same"},
        ("conv-1", "root", "b", "c"): {"alice": "Worse"},
        ("conv-2", "root", "a", "b"): {"alice": "Same"},
        ("conv-1", "a", "a1", "a2"): {"alice": "Better"},
    }


def test_pair_labels_feed_nominal_alpha():
    mirror = mirror_from_order(["Better", "Worse"])
    # As read for (x, y): alice Better, Better, Worse, Worse; bob Better, Worse, Worse, Worse — bob answering
    # two of them the other way round.
    judgements = [
        ("t1", "root", "alice", "x", "y", "Better"),
        ("t2", "root", "alice", "x", "y", "Better"),
        ("t3", "root", "alice", "x", "y", "Worse"),
        ("t4", "root", "alice", "x", "y", "Worse"),
        ("t1", "root", "bob", "y", "x", "Worse"),
        ("t2", "root", "bob", "x", "y", "Worse"),
        ("t3", "root", "bob", "y", "x", "Better"),
        ("t4", "root", "bob", "x", "y", "Worse"),
    ]

    # The hand-computed nominal case of test_agreement.py: a a / a b / b b / b b gives 8/15.
    assert krippendorff_alpha(comparison_units(judgements, mirror)).value == pytest.approx(8 / 15)


@pytest.mark.parametrize(
    ("judgement", "message"),
    [
        (
            ("conv-1", "root", "alice", "a", "b", "Meh"),
            "item 'conv-1': label 'Meh' is not one of the comparison labels",
        ),
        (("conv-1", "root", "alice", "a", "a", "Same"), "item 'conv-1': 'alice' compared 'a' with itself"),
        (
            ("conv-1", "root", "alice", "b", "a", "Better"),
            "item 'conv-1': 'alice' labelled 'a' against 'b' both 'Better' and 'Worse'",
        ),
    ],
)
def test_mistakes_upstream_raise(judgement, message):
    judgements = [("conv-1", "root", "alice", "a", "b", "Better"), judgement]

    with pytest.raises(ValueError, match=message):
        comparison_units(judgements, MIRROR)
