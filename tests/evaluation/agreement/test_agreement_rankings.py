"""Ranking agreement for sibling rankings: Kendall's W (tie-corrected) and Kendall's tau-b.

Reference: SciPy's ``kendalltau`` example, x = [12, 2, 1, 12, 2] and
y = [1, 4, 7, 1, 0], tau-b = -0.47140452079103173 (cross-checked with R's
cor.test in SciPy's tests). W is checked by hand and against its identity
with the mean pairwise Spearman correlation, mean rho = (mW - 1)/(m - 1).
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from evaluation.agreement import (
    kendall_tau_b,
    kendall_tau_b_pairs,
    kendall_w,
    mean_kendall_tau_b,
    ranking_agreement,
)

# -- Kendall's tau-b --------------------------------------------------------------


def test_tau_b_reproduces_scipys_example_with_ties():
    x = dict(enumerate([12, 2, 1, 12, 2]))
    y = dict(enumerate([1, 4, 7, 1, 0]))

    assert kendall_tau_b(x, y).value == pytest.approx(-0.47140452079103173, abs=1e-12)


def test_tau_b_by_hand():
    # One of the six item pairs (b, c) is swapped: (5 - 1) / 6.
    result = kendall_tau_b(["a", "b", "c", "d"], ["a", "c", "b", "d"])

    assert result.value == pytest.approx(2 / 3)
    assert result.parts == {"concordant": 5, "discordant": 1, "tied_a": 0, "tied_b": 0}


def test_tau_b_compares_the_items_both_ranked():
    result = kendall_tau_b(["a", "b", "c", "d"], ["d", "b", "a"])

    # On a, b, d: first a < b < d, second d < b < a: all three pairs discordant.
    assert result.value == pytest.approx(-1)
    assert (result.n_units, result.n_dropped) == (3, 1)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        (["a", "b"], ["a", "c"], "only one item ranked by both: nothing to order"),
        ({"a": 1, "b": 1, "c": 1}, ["a", "b", "c"], "one ranking ties all 3 items"),
        ({"a": 1, "b": 1}, {"a": 2, "b": 2}, "both rankings tie all 2 items"),
        ([], ["a", "b"], "a ranking is missing"),
    ],
)
def test_tau_b_undefined_cases(first, second, reason):
    assert kendall_tau_b(first, second).undefined_reason == reason


# -- Kendall's W ------------------------------------------------------------------


def test_w_is_one_when_rankers_agree_and_zero_when_two_are_opposite():
    assert kendall_w({"alice": ["x", "y", "z"], "bob": ["x", "y", "z"], "carol": ["x", "y", "z"]}).value == 1
    assert kendall_w({"alice": ["x", "y", "z"], "bob": ["z", "y", "x"]}).value == 0


def test_w_by_hand():
    rankings = {"alice": ["x", "y", "z"], "bob": ["x", "y", "z"], "carol": ["z", "y", "x"]}

    # Rank sums x 5, y 6, z 7 around m(n + 1)/2 = 6: S = 2. W = 12 · 2 / (3² · (3³ - 3)) = 1/9.
    assert kendall_w(rankings).value == pytest.approx(1 / 9)


def test_w_with_ties_by_hand():
    # Bob ties y and z: mid-ranks 2.5 each. Rank sums x 2, y 4.5, z 5.5 around 4: S = 6.5.
    # T = 2³ - 2 = 6. W = 12 · 6.5 / (2² · 24 - 2 · 6) = 78/84.
    rankings = {"alice": {"x": 1, "y": 2, "z": 3}, "bob": {"x": 1, "y": 2, "z": 2}}

    result = kendall_w(rankings)

    assert result.value == pytest.approx(13 / 14)
    assert result.parts == {"ties": 6}


def spearman(first, second):
    n = len(first)
    return 1 - 6 * sum((first.index(item) - second.index(item)) ** 2 for item in first) / (n * (n * n - 1))


@pytest.mark.parametrize("seed", range(5))
def test_w_matches_the_mean_spearman_identity(seed):
    rng = random.Random(seed)
    items = list("abcdef")
    rankings = {f"ranker-{r}": rng.sample(items, len(items)) for r in range(4)}
    m = len(rankings)
    mean_rho = sum(spearman(a, b) for a, b in combinations(rankings.values(), 2)) / (m * (m - 1) / 2)

    assert kendall_w(rankings).value == pytest.approx((mean_rho * (m - 1) + 1) / m, abs=1e-12)


def test_w_ranks_the_items_every_ranker_ranked():
    result = kendall_w({"alice": ["a", "b", "c"], "bob": ["a", "b"], "carol": None})

    assert result.value == 1
    assert (result.n_coders, result.n_units, result.n_dropped) == (2, 2, 1)


@pytest.mark.parametrize(
    ("rankings", "reason"),
    [
        ({}, "no ranker: agreement needs two"),
        ({"alice": ["a", "b"], "bob": None}, "only one ranker: agreement needs two"),
        ({"alice": ["a", "b"], "bob": ["b", "c"]}, "only one item ranked by every ranker: nothing to order"),
        ({"alice": {"a": 1, "b": 1}, "bob": {"a": 2, "b": 2}}, "every ranker tied all the items"),
    ],
)
def test_w_undefined_cases(rankings, reason):
    assert kendall_w(rankings).undefined_reason == reason


def test_a_ranking_lists_each_item_once():
    with pytest.raises(ValueError, match="a ranking lists 'a' more than once"):
        kendall_w({"alice": ["a", "b", "a"], "bob": ["a", "b"]})


# -- over many decision points ----------------------------------------------------------


def sibling_rankings():
    return {
        ("conv-1", "root"): {"alice": ["r1", "r2", "r3"], "bob": ["r1", "r2", "r3"]},  # W 1, tau 1
        ("conv-2", "root"): {"alice": ["r1", "r2"], "bob": ["r2", "r1"]},  # W 0, tau -1
        ("conv-3", "root"): {"alice": ["r1", "r2"]},  # one ranker: dropped
    }


def test_ranking_agreement_averages_w_over_decision_points():
    result = ranking_agreement(sibling_rankings(), "kendall_w")

    assert result.value == pytest.approx(0.5)
    assert (result.n_units, result.n_dropped, result.n_coders) == (2, 1, 2)


def test_ranking_agreement_averages_tau_b_over_pairs_then_decision_points():
    assert ranking_agreement(sibling_rankings(), "kendall_tau_b").value == pytest.approx(0)

    three = {"alice": ["a", "b", "c"], "bob": ["a", "b", "c"], "carol": ["c", "b", "a"]}
    assert [r.value for r in kendall_tau_b_pairs(three).values()] == [1, -1, -1]
    assert mean_kendall_tau_b(three).value == pytest.approx(-1 / 3)


def test_ranking_agreement_undefined_when_no_decision_point_has_a_value():
    result = ranking_agreement({("conv-3", "root"): {"alice": ["r1", "r2"]}})

    assert result.undefined_reason == "no unit has a value (first: only one ranker: agreement needs two)"
    assert ranking_agreement({}).undefined_reason == "no units"
    with pytest.raises(ValueError, match='unknown ranking measure "spearman"'):
        ranking_agreement({}, "spearman")
