"""Krippendorff's alpha, the result type and the reliability-data builders.

Reference: Krippendorff (2011)'s 4 coders x 12 units matrix
(tests/fixtures/agreement/krippendorff_2011.json) reproduced to 3 decimals
for the nominal, ordinal, interval and ratio metrics; every other case is
small enough to check by hand (the arithmetic is in the comments), and a
naive implementation straight from the coincidence-matrix definition
cross-checks the fast one on random data with missing values.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from evaluation.agreement import (
    Agreement,
    coders_in,
    coincidences,
    krippendorff_alpha,
    path_node_set,
    reliability_from_lists,
    reliability_from_records,
)

KRIPPENDORFF_2011 = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures" / "agreement" / "krippendorff_2011.json").read_text()
)["vector"]


def krippendorff_data():
    return reliability_from_lists(dict(zip("ABCD", KRIPPENDORFF_2011["reliability_data"], strict=True)))


# -- the published values ---------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_it_reproduces_krippendorffs_published_alphas(metric, published):
    result = krippendorff_alpha(krippendorff_data(), metric)

    assert result.value == pytest.approx(published, abs=5e-4)
    assert str(result) == f"{published:.3f}"
    # 11 pairable units holding 40 values; unit 12 has a single value and is dropped.
    assert (result.n_units, result.n_values, result.n_dropped, result.n_coders) == (11, 40, 1, 4)


def test_ordinal_alpha_is_the_same_over_the_value_domain_given_as_an_order():
    result = krippendorff_alpha(krippendorff_data(), "ordinal", order=[1, 2, 3, 4, 5])

    assert result.value == pytest.approx(0.815, abs=5e-4)


def test_set_alpha_on_single_label_answers_is_nominal_alpha():
    singletons = {
        unit: {coder: frozenset([value]) for coder, value in answers.items()}
        for unit, answers in krippendorff_data().items()
    }

    assert krippendorff_alpha(singletons, "set").value == pytest.approx(0.743, abs=5e-4)


def test_the_coincidence_matrix_of_the_reference_data():
    matrix = coincidences(krippendorff_data())

    # o_11: unit 1 (three 1s, m = 3) gives 3 · 2 / 2, unit 8 (three 1s and a 2) 3 · 2 / 3, unit 11 (two 1s)
    # 2 · 1 / 1: 7. o_12: unit 8 gives 3 · 1 / 3, unit 6 (1, 2, 3, 4) 1 · 1 / 3: 4/3. Rows sum to the
    # pairable values' marginals, 40 in all.
    rows = Counter()
    for (c, _), count in matrix.items():
        rows[c] += count
    assert {value: round(total, 9) for value, total in rows.items()} == {1: 9, 2: 13, 3: 10, 4: 5, 5: 3}
    assert matrix[1, 1] == pytest.approx(7)
    assert matrix[1, 2] == matrix[2, 1] == pytest.approx(4 / 3)
    assert matrix[5, 5] == pytest.approx(3)
    assert (1, 5) not in matrix


# -- hand-computed cases, one per metric ---------------------------------------------
#
# D_o = 1/n · Σ_u S_u / (m_u - 1) and D_e = S(marginals) / (n(n - 1)), S = Σ_c Σ_k n_c n_k δ²(c, k).


def test_nominal_alpha_by_hand():
    data = reliability_from_lists({"alice": ["a", "a", "b", "b"], "bob": ["a", "b", "b", "b"]})

    result = krippendorff_alpha(data, "nominal")

    # n = 8, marginals a: 3, b: 5. D_o = (2 / 1) / 8 = 1/4 (only unit 2 disagrees: S = 2² - 1 - 1).
    # D_e = (8² - 3² - 5²) / (8 · 7) = 30/56. alpha = 1 - (1/4) / (30/56) = 8/15.
    assert result.value == pytest.approx(8 / 15)
    assert result.parts == pytest.approx({"observed_disagreement": 1 / 4, "expected_disagreement": 30 / 56})


def test_interval_alpha_by_hand():
    data = reliability_from_lists({"alice": [1, 2, 3], "bob": [1, 2, 5]})

    # n = 6. D_o = (2 · (3 - 5)²) / 6 = 8/6. Marginals 1: 2, 2: 2, 3: 1, 5: 1, mean 14/6,
    # Σ n(x - mean)² = 44 - 6 · (14/6)² = 34/3, S = 2 · 6 · 34/3 = 136, D_e = 136/30.
    # alpha = 1 - (8/6) / (136/30) = 12/17.
    assert krippendorff_alpha(data, "interval").value == pytest.approx(12 / 17)


def test_interval_alpha_takes_floats():
    data = reliability_from_lists({"alice": [0.1, 0.2, 0.3], "bob": [0.1, 0.2, 0.5]})

    # The integer case scaled by 1/10: alpha does not depend on the unit of measurement.
    assert krippendorff_alpha(data, "interval").value == pytest.approx(12 / 17)


def test_ordinal_alpha_by_hand():
    data = reliability_from_lists({"alice": [1, 2, 3], "bob": [1, 2, 5]})

    # Marginals 1: 2, 2: 2, 3: 1, 5: 1; mid-rank positions P = Σ below + n/2: 1, 3, 4.5, 5.5.
    # δ²(3, 5) = (n_3 + n_4 + n_5 - (n_3 + n_5)/2)² = (2 - 1)² = 1 = (5.5 - 4.5)².
    # D_o = 2 · 1 / 6 = 1/3. Positions' mean 3, Σ n(P - 3)² = 8 + 0 + 2.25 + 6.25 = 16.5,
    # S = 2 · 6 · 16.5 = 198, D_e = 198/30 = 6.6. alpha = 1 - (1/3)/6.6 = 94/99.
    assert krippendorff_alpha(data, "ordinal").value == pytest.approx(94 / 99)


def test_ordinal_alpha_orders_labels_by_the_order_given():
    labels = {1: "low", 2: "mid", 3: "high", 5: "top"}
    data = reliability_from_lists(
        {"alice": [labels[v] for v in (1, 2, 3)], "bob": [labels[v] for v in (1, 2, 5)]}
    )

    result = krippendorff_alpha(data, "ordinal", order=["low", "mid", "high", "higher", "top"])

    # Same ranks as above: the unused "higher" has no values and changes nothing.
    assert result.value == pytest.approx(94 / 99)


def test_ratio_alpha_by_hand():
    data = reliability_from_lists({"alice": [1, 2], "bob": [1, 4]})

    # δ²(2, 4) = (2/6)² = 1/9, so D_o = (2/9) / 4 = 1/18. Marginals 1: 2, 2: 1, 4: 1:
    # S = 4 · 1/9 (1, 2) + 4 · 9/25 (1, 4) + 2 · 1/9 (2, 4) = 158/75, D_e = 158/900.
    # alpha = 1 - (50/900) / (158/900) = 54/79.
    assert krippendorff_alpha(data, "ratio").value == pytest.approx(54 / 79)


def test_set_alpha_by_hand_with_jaccard_distance():
    data = {
        "item-1": {"alice": frozenset({"a", "b"}), "bob": frozenset({"a"})},
        "item-2": {"alice": ["c"], "bob": {"c"}},  # lists and sets are taken as frozensets
    }

    result = krippendorff_alpha(data, "set")

    # d({a, b}, {a}) = 1 - 1/2 = 1/2: D_o = (2 · 1/2) / 4 = 1/4. Marginals {a,b}: 1, {a}: 1, {c}: 2:
    # S = 2 (1/2 + 2 · 1 + 2 · 1) = 9, D_e = 9/12. alpha = 1 - (1/4)/(3/4) = 2/3.
    assert result.value == pytest.approx(2 / 3)


def test_set_alpha_counts_two_empty_answers_as_agreeing():
    data = {
        "item-1": {"alice": frozenset(), "bob": frozenset()},
        "item-2": {"alice": frozenset({"x"}), "bob": frozenset()},
    }

    # D_o = 2 · 1 / 4 = 1/2; marginals ∅: 3, {x}: 1, S = 2 · 3 = 6, D_e = 6/12: alpha = 0.
    assert krippendorff_alpha(data, "set").value == pytest.approx(0)


def test_paths_become_node_sets_named_by_their_item():
    assert path_node_set("tree-1", ["root", "resp_a"]) == {("tree-1", "root"), ("tree-1", "resp_a")}
    # Paths down different trees share no node, even when the trees reuse ids.
    assert not path_node_set("tree-1", ["root"]) & path_node_set("tree-2", ["root"])


def test_paths_that_part_late_disagree_less_than_paths_that_part_early():
    def alpha_for(bob_path):
        data = {
            "tree-1": {
                "alice": path_node_set("tree-1", ["root", "a", "a1", "a2"]),
                "bob": path_node_set("tree-1", bob_path),
            },
            "tree-2": {
                "alice": path_node_set("tree-2", ["root", "b"]),
                "bob": path_node_set("tree-2", ["root", "b"]),
            },
        }
        return krippendorff_alpha(data, "set").value

    assert alpha_for(["root", "a", "a1", "x2"]) > alpha_for(["root", "x", "x1", "x2"])


# -- missing values and undefined results ----------------------------------------


def test_units_with_a_single_value_are_dropped():
    data = {"u1": {"alice": 1, "bob": 1}, "u2": {"alice": 2, "bob": 3}, "u3": {"alice": 9}, "u4": {}}
    without = {"u1": {"alice": 1, "bob": 1}, "u2": {"alice": 2, "bob": 3}}

    result = krippendorff_alpha(data, "interval")

    assert result.value == krippendorff_alpha(without, "interval").value
    assert (result.n_units, result.n_dropped, result.n_values) == (2, 2, 4)


def test_none_is_a_missing_value():
    assert krippendorff_alpha({"u1": {"alice": "a", "bob": None}, "u2": {"alice": "a", "bob": "b"}}) == (
        krippendorff_alpha({"u1": {"alice": "a"}, "u2": {"alice": "a", "bob": "b"}})
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({}, "no coder gave values: agreement needs two"),
        (
            {"u1": {"alice": 1}, "u2": {"alice": 2}},
            "only one coder ('alice') gave values: agreement needs two",
        ),
        ({"u1": {"alice": 1}, "u2": {"bob": 2}}, "no unit has values from two or more coders"),
        (
            {"u1": {"alice": 3, "bob": 3}, "u2": {"alice": 3, "bob": 3, "carol": 3}, "u3": {"alice": 5}},
            "every pairable value is 3: no variation, so expected disagreement is 0",
        ),
    ],
)
@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval", "ratio"])
def test_degenerate_data_gives_undefined_with_the_reason(data, reason, metric):
    result = krippendorff_alpha(data, metric)

    assert result.value is None
    assert result.undefined_reason == reason
    assert str(result) == f"undefined ({reason})"
    assert result.as_dict()["value"] is None


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ((1e-200, 2e-200), "expected disagreement is 0: the values do not differ under this metric"),
        ((1e200, -1e200), "the values are too large to square in floating point: rescale them"),
    ],
)
def test_floating_point_extremes_give_undefined_rather_than_nan(values, reason):
    data = {"u1": {"alice": values[0], "bob": values[1]}, "u2": {"alice": values[1], "bob": values[1]}}

    assert krippendorff_alpha(data, "interval").undefined_reason == reason


def test_no_variation_in_sets_names_the_set():
    same = {"u1": {"alice": frozenset({"x", "y"}), "bob": frozenset({"y", "x"})}}
    empty = {"u1": {"alice": frozenset(), "bob": frozenset()}}

    assert krippendorff_alpha(same, "set").undefined_reason == (
        "every pairable value is {'x', 'y'}: no variation, so expected disagreement is 0"
    )
    assert krippendorff_alpha(empty, "set").undefined_reason == (
        "every pairable value is the empty set: no variation, so expected disagreement is 0"
    )


@pytest.mark.parametrize(
    ("data", "metric", "options", "message"),
    [
        ({"u": {"a": 1, "b": "x"}}, "interval", {}, "interval values must be numbers, got 'x'"),
        (
            {"u": {"a": 1, "b": float("nan")}},
            "interval",
            {},
            "interval values must be finite numbers, got nan",
        ),
        ({"u": {"a": 1, "b": -2}}, "ratio", {}, "ratio values must not be negative, got -2"),
        ({"u": {"a": 1, "b": "x"}}, "ordinal", {}, "ordinal values must sort, or come with an order"),
        ({"u": {"a": "Better", "b": "Meh"}}, "ordinal", {"order": ["Better", "Worse"]}, "'Meh'"),
        ({"u": {"a": "x", "b": "y"}}, "set", {}, "set values must be sets or lists of elements, got 'x'"),
        ({"u": {"a": 1, "b": 2}}, "cosine", {}, 'unknown metric "cosine"'),
        ({"u": {"a": 1, "b": 2}}, "nominal", {"order": [1, 2]}, "order applies to the ordinal metric"),
    ],
)
def test_values_that_do_not_fit_the_metric_raise(data, metric, options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        krippendorff_alpha(data, metric, **options)


# -- the fast computation against the definition ------------------------------------------


def naive_alpha(data, delta):
    """Straight from Krippendorff (2011): every ordered pair of values from different coders in a unit
    adds 1/(m_u - 1) to o_ck; alpha = 1 - (n - 1) Σ o_ck δ² / Σ n_c n_k δ². Exact fractions."""
    matrix = Counter()
    for answers in data.values():
        values = [value for value in answers.values() if value is not None]
        if len(values) < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    matrix[c, k] += Fraction(1, len(values) - 1)
    marginal = Counter()
    for (c, _), count in matrix.items():
        marginal[c] += count
    n = sum(marginal.values())
    observed = sum(count * delta(c, k, marginal) for (c, k), count in matrix.items())
    expected = sum(
        n_c * n_k * delta(c, k, marginal) for c, n_c in marginal.items() for k, n_k in marginal.items()
    )
    return 1 - (n - 1) * observed / expected


def nominal(c, k, marginal):
    return c != k


def interval(c, k, marginal):
    return Fraction(c - k) ** 2


def ratio(c, k, marginal):
    return Fraction(c - k, c + k) ** 2 if c != k else 0


def ordinal(c, k, marginal):
    low, high = min(c, k), max(c, k)
    between = sum(count for value, count in marginal.items() if low <= value <= high)
    return (between - Fraction(marginal[c] + marginal[k], 2)) ** 2


def jaccard(c, k, marginal):
    union = len(c | k)
    return 1 - Fraction(len(c & k), union) if union else 0


def random_data(seed, make_value, units=60, coders=4, missing=0.3):
    rng = random.Random(seed)
    truth = [make_value(rng) for _ in range(units)]
    return {
        unit: {
            f"coder-{c}": truth[unit] if rng.random() < 0.6 else make_value(rng)
            for c in range(coders)
            if rng.random() >= missing
        }
        for unit in range(units)
    }


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    ("metric", "delta", "make_value"),
    [
        ("nominal", nominal, lambda rng: rng.choice("abcd")),
        ("ordinal", ordinal, lambda rng: rng.randint(1, 7)),
        ("interval", interval, lambda rng: rng.randint(0, 100)),
        ("ratio", ratio, lambda rng: rng.randint(0, 20)),
        # 12 labels: enough distinct sets to take the inverted-index path for the marginals.
        ("set", jaccard, lambda rng: frozenset(rng.sample("abcdefghijkl", rng.randint(0, 4)))),
    ],
)
def test_fast_alpha_matches_the_definition_on_random_data(seed, metric, delta, make_value):
    data = random_data(seed, make_value)

    assert krippendorff_alpha(data, metric).value == pytest.approx(float(naive_alpha(data, delta)), abs=1e-12)


def test_coincidences_match_the_definition_on_random_data():
    data = random_data(7, lambda rng: rng.choice("abc"))
    expected = Counter()
    for answers in data.values():
        values = list(answers.values())
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    expected[c, k] += 1 / (len(values) - 1)

    assert coincidences(data) == pytest.approx(dict(expected))


# -- the result value -------------------------------------------------------------


def test_a_result_shows_three_decimals_or_undefined_with_its_reason():
    assert str(Agreement.of("alpha", 0.74342)) == "0.743"
    assert str(Agreement.of("alpha", -0.0001)) == "0.000"
    assert str(Agreement.undefined("alpha", "no variation")) == "undefined (no variation)"


def test_a_result_as_json():
    result = Agreement.of(
        "alpha", 0.5, n_units=3, n_coders=2, n_values=6, parts={"observed_disagreement": 0.1}
    )

    assert json.loads(json.dumps(result.as_dict())) == {
        "measure": "alpha",
        "value": 0.5,
        "undefined_reason": None,
        "shown": "0.500",
        "n_units": 3,
        "n_coders": 2,
        "n_values": 6,
        "n_dropped": 0,
        "parts": {"observed_disagreement": 0.1},
    }


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_result_cannot_hold_nan_or_infinity(value):
    with pytest.raises(ValueError, match="not a finite value"):
        Agreement.of("alpha", value)


# -- reliability data ---------------------------------------------------------------


def test_reliability_data_from_coder_lists_skips_missing_values():
    data = reliability_from_lists({"alice": [1, None, 3], "bob": [1, 2]}, units=["u1", "u2", "u3"])

    assert data == {"u1": {"alice": 1, "bob": 1}, "u2": {"bob": 2}, "u3": {"alice": 3}}


def test_reliability_data_from_records_rejects_two_values_from_one_coder():
    records = [("u1", "alice", "a"), ("u1", "bob", "b"), ("u2", "alice", None)]

    assert reliability_from_records(records) == {"u1": {"alice": "a", "bob": "b"}}
    with pytest.raises(ValueError, match="unit 'u1': coder 'alice' gave two values, 'a' and 'c'"):
        reliability_from_records([*records, ("u1", "alice", "c")])


def test_coders_are_listed_sorted():
    data = {"u1": {"carol": 1, "alice": 2}, "u2": {"bob": 3, "dave": None}}

    assert coders_in(data) == ["alice", "bob", "carol"]


DEGENERATE = [
    {},
    {"u1": {}},
    {"u1": {"alice": None}},
    {"u1": {"alice": 1}, "u2": {"alice": 2}},
    {"u1": {"alice": 1}, "u2": {"bob": 1}},
    {"u1": {"alice": 1, "bob": 1}},
    {"u1": {"alice": 1, "bob": 1}, "u2": {"alice": 1, "bob": 1, "carol": 1}},
]


@pytest.mark.parametrize("data", DEGENERATE)
def test_every_measure_answers_degenerate_data_with_undefined_and_a_reason(data):
    from evaluation.agreement import cohen_kappa_pairs, fleiss_kappa, percent_agreement

    as_sets = {
        u: {c: frozenset([v]) if v is not None else None for c, v in a.items()} for u, a in data.items()
    }
    results = [krippendorff_alpha(data, metric) for metric in ("nominal", "ordinal", "interval", "ratio")]
    results += [krippendorff_alpha(as_sets, "set"), fleiss_kappa(data)]
    results += cohen_kappa_pairs(data, weights="quadratic", categories=[1]).values()

    for result in results:
        assert result.value is None, result
        assert result.undefined_reason
        assert "nan" not in str(result).lower()
    # Not chance-corrected, percent agreement needs no variation: coders that all said 1 agree fully.
    assert percent_agreement(data).value in (None, 1.0)
