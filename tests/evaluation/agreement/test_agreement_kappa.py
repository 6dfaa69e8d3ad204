"""Cohen's kappa per pair (unweighted, linear, quadratic), Fleiss' kappa and percent agreement.

References: Cohen's kappa's textbook table (Wikipedia, "Cohen's kappa":
50 grant proposals, kappa = 0.4) and Fleiss' kappa's worked example
(Wikipedia, "Fleiss' kappa": 10 subjects x 14 raters x 5 categories,
P = 0.378, Pe = 0.213, kappa = 0.210). The rest is computed by hand, and
three annotators' pairwise judgements on 300 items are checked against
textbook implementations written here, independently of the module's.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evaluation.agreement import (
    PairJudgement,
    cohen_kappa,
    cohen_kappa_pairs,
    comparison_units,
    fleiss_kappa,
    fleiss_kappa_from_counts,
    krippendorff_alpha,
    mirror_from_order,
    percent_agreement,
    reliability_from_lists,
)

# Wikipedia, "Fleiss' kappa", section "Worked example" (often attributed to Fleiss 1971): 10 subjects,
# each rated by 14 raters into 5 categories; a row counts the raters per category.
FLEISS_WORKED_EXAMPLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


# -- Cohen's kappa ----------------------------------------------------------------


def test_cohens_kappa_reproduces_the_textbook_table():
    # Both yes 20, A yes and B no 5, A no and B yes 10, both no 15: p_o = 0.7, p_e = 0.5 · 0.6 + 0.5 · 0.4.
    data = reliability_from_lists(
        {"A": ["yes"] * 25 + ["no"] * 25, "B": ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15}
    )

    result = cohen_kappa(data, "A", "B")

    assert result.value == pytest.approx(0.4)
    assert result.parts["observed_agreement"] == pytest.approx(0.7)
    assert result.parts["expected_disagreement"] == pytest.approx(0.5)
    assert (result.n_units, result.n_coders) == (50, 2)


# Units (alice, bob): (1, 1), (1, 2), (2, 2), (3, 2); alice's marginals 1: 2, 2: 1, 3: 1, bob's 1: 1, 2: 3.
WEIGHTED = {"u1": {"alice": 1, "bob": 1}, "u2": {"alice": 1, "bob": 2}, "u3": {"alice": 2, "bob": 2}}
WEIGHTED["u4"] = {"alice": 3, "bob": 2}


def test_unweighted_kappa_by_hand():
    # p_o = 2/4; p_e = (2 · 1 + 1 · 3 + 1 · 0) / 16 = 5/16; kappa = (1/2 - 5/16) / (11/16) = 3/11.
    assert cohen_kappa(WEIGHTED, "alice", "bob").value == pytest.approx(3 / 11)


def test_linearly_weighted_kappa_by_hand():
    # w = |i - j| / 2. Observed: (1, 2) and (3, 2) at 1/2 each: 1/4. Expected (Σ r_i c_j w_ij / 16):
    # r1 c2 2 · 3 · 1/2 + r2 c1 1/2 + r3 c1 1 + r3 c2 3 · 1/2 = 6 → 6/16. kappa = 1 - (1/4)/(3/8) = 1/3.
    result = cohen_kappa(WEIGHTED, "alice", "bob", weights="linear", categories=[1, 2, 3])

    assert result.value == pytest.approx(1 / 3)
    assert result.measure == "Cohen's kappa (linear weights)"


def test_quadratically_weighted_kappa_by_hand():
    # w = (|i - j| / 2)²: one step 1/4, two steps 1. Observed 2 · 1/4 / 4 = 1/8; expected
    # (2 · 3 · 1/4 + 1/4 + 1 + 3 · 1/4) / 16 = 3.5/16. kappa = 1 - (1/8)/(7/32) = 3/7.
    result = cohen_kappa(WEIGHTED, "alice", "bob", weights="quadratic", categories=[1, 2, 3])

    assert result.value == pytest.approx(3 / 7)


def test_weights_follow_the_category_order_not_the_labels():
    labels = {1: "low", 2: "mid", 3: "high"}
    as_labels = {unit: {c: labels[v] for c, v in answers.items()} for unit, answers in WEIGHTED.items()}

    result = cohen_kappa(as_labels, "alice", "bob", weights="linear", categories=["low", "mid", "high"])

    assert result.value == pytest.approx(1 / 3)


def test_cohens_kappa_uses_the_units_both_coded():
    data = dict(WEIGHTED)
    data["u5"] = {"alice": 3}
    data["u6"] = {"bob": 1, "carol": 2}

    result = cohen_kappa(data, "alice", "bob")

    assert result.value == pytest.approx(3 / 11)
    assert (result.n_units, result.n_dropped) == (4, 2)


def test_kappa_is_zero_when_coders_never_agree_and_chance_says_they_would_not():
    data = reliability_from_lists({"alice": ["a", "a"], "bob": ["b", "b"]})

    # p_o = 0 and p_e = 0: kappa = 0, defined.
    assert cohen_kappa(data, "alice", "bob").value == 0


def test_cohens_kappa_for_each_pair_of_coders():
    data = {
        "u1": {"carol": "x", "alice": "x", "bob": "x"},
        "u2": {"carol": "y", "alice": "y", "bob": "x"},
        "u3": {"carol": "y", "alice": "x", "bob": "y"},
    }

    pairs = cohen_kappa_pairs(data)

    assert list(pairs) == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    assert pairs["alice", "carol"].value == cohen_kappa(data, "alice", "carol").value
    # alice and bob: p_o = 1/3, marginals x: 2, y: 1 each, p_e = 5/9: kappa = (1/3 - 5/9) / (4/9) = -1/2.
    assert pairs["alice", "bob"].value == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"u1": {"alice": "a"}, "u2": {"bob": "a"}}, "alice and bob coded no unit in common"),
        (
            {"u1": {"alice": "a", "bob": "a"}, "u2": {"alice": "a", "bob": "a"}},
            "alice and bob gave every unit 'a': no variation, so chance agreement is 1",
        ),
    ],
)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohens_kappa_undefined_cases(data, reason, weights):
    result = cohen_kappa(data, "alice", "bob", weights=weights, categories=["a", "b"])

    assert result.value is None
    assert result.undefined_reason == reason


def test_weights_need_categories_and_labels_must_be_among_them():
    with pytest.raises(ValueError, match="linear weights need the categories in their order"):
        cohen_kappa(WEIGHTED, "alice", "bob", weights="linear")
    with pytest.raises(ValueError, match="labels outside the categories given: 3"):
        cohen_kappa(WEIGHTED, "alice", "bob", weights="quadratic", categories=[1, 2])
    with pytest.raises(ValueError, match='unknown weights "cubic"'):
        cohen_kappa(WEIGHTED, "alice", "bob", weights="cubic", categories=[1, 2, 3])


# -- Fleiss' kappa ----------------------------------------------------------------


def test_fleiss_kappa_reproduces_the_worked_example():
    result = fleiss_kappa_from_counts(FLEISS_WORKED_EXAMPLE)

    assert result.value == pytest.approx(0.210, abs=5e-4)
    assert result.parts["observed_agreement"] == pytest.approx(0.378, abs=5e-4)
    assert result.parts["expected_agreement"] == pytest.approx(0.213, abs=5e-4)
    assert (result.n_units, result.n_coders, result.n_values) == (10, 14, 140)


def test_fleiss_kappa_from_ratings_equals_it_from_counts():
    # Each subject's 14 ratings handed out to raters r0..r13 in category order.
    data = {}
    for subject, row in enumerate(FLEISS_WORKED_EXAMPLE):
        ratings = [category for category, count in enumerate(row) for _ in range(count)]
        data[subject] = {f"r{rater}": category for rater, category in enumerate(ratings)}

    assert fleiss_kappa(data).value == pytest.approx(fleiss_kappa_from_counts(FLEISS_WORKED_EXAMPLE).value)


def test_fleiss_kappa_takes_rows_as_label_counts():
    rows = [{"yes": 3}, {"yes": 1, "no": 2}, {"no": 3}]

    # P_i: 1, 1/3, 1: P = 7/9. p_yes = 4/9, p_no = 5/9: Pe = 41/81. kappa = (63/81 - 41/81) / (40/81) = 11/20.
    assert fleiss_kappa_from_counts(rows).value == pytest.approx(11 / 20)


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([], "no unit has a rating"),
        (
            [{"a": 3}, {"a": 1, "b": 1}],
            "units have between 2 and 3 ratings: Fleiss' kappa needs the same number on every unit "
            "(Krippendorff's alpha allows missing values)",
        ),
        ([{"a": 1}, {"b": 1}], "every unit has a single rating: no pair to agree"),
        ([{"a": 2}, {"a": 2}], "every rating is 'a': no variation, so chance agreement is 1"),
    ],
)
def test_fleiss_kappa_undefined_cases(rows, reason):
    result = fleiss_kappa_from_counts(rows)

    assert result.value is None
    assert result.undefined_reason == reason


def test_fleiss_kappa_skips_units_nobody_rated():
    data = {"u1": {"a": "x", "b": "x"}, "u2": {"a": "y", "b": "x"}, "u3": {}, "u4": {"a": None}}

    result = fleiss_kappa(data)

    assert result.value == fleiss_kappa_from_counts([{"x": 2}, {"x": 1, "y": 1}]).value
    assert (result.n_units, result.n_dropped, result.n_coders) == (2, 2, 2)


# -- percent agreement ------------------------------------------------------------


def test_percent_agreement_by_hand():
    data = {
        "u1": {"a": "x", "b": "x", "c": "x"},  # 3 agreeing pairs of 3
        "u2": {"a": "x", "b": "x", "c": "y"},  # 1 of 3
        "u3": {"a": "x", "b": "y"},  # 0 of 1
        "u4": {"a": "x"},  # no pair: dropped
    }

    result = percent_agreement(data)

    assert result.value == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert (result.n_units, result.n_dropped, result.n_values, result.n_coders) == (3, 1, 8, 3)


def test_percent_agreement_undefined_without_a_pairable_unit():
    result = percent_agreement({"u1": {"a": "x"}, "u2": {"b": "y"}})

    assert str(result) == "undefined (no unit has values from two or more coders)"


# -- three annotators' pairwise judgements on 300 items ---------------------------------


def textbook_cohen(first, second, categories, weights=None):
    """Kappa with agreement weights 1 - |i - j|/(K - 1) (or squared): p_o(w) and p_e(w) from the full table."""
    index = {label: i for i, label in enumerate(categories)}
    size = len(categories)
    table = [[0] * size for _ in range(size)]
    for a, b in zip(first, second, strict=True):
        table[index[a]][index[b]] += 1
    total = len(first)
    rows = [sum(table[i]) for i in range(size)]
    columns = [sum(table[i][j] for i in range(size)) for j in range(size)]

    def agreement(i, j):
        if weights is None:
            return 1.0 if i == j else 0.0
        step = abs(i - j) / (size - 1)
        return 1 - (step if weights == "linear" else step**2)

    observed = sum(agreement(i, j) * table[i][j] for i in range(size) for j in range(size)) / total
    expected = (
        sum(agreement(i, j) * rows[i] * columns[j] for i in range(size) for j in range(size)) / total**2
    )
    return (observed - expected) / (1 - expected)


def textbook_fleiss(ratings_per_subject, categories):
    """Fleiss (1971): P_i = (Σ_j n_ij² - n) / (n(n - 1)), p_j = Σ_i n_ij / (N n)."""
    subjects = len(ratings_per_subject)
    raters = len(ratings_per_subject[0])
    counts = [Counter(ratings) for ratings in ratings_per_subject]
    mean_p = (
        sum((sum(c[j] ** 2 for j in categories) - raters) / (raters * (raters - 1)) for c in counts)
        / subjects
    )
    shares = [sum(c[j] for c in counts) / (subjects * raters) for j in categories]
    chance = sum(p * p for p in shares)
    return (mean_p - chance) / (1 - chance)


def three_annotators_on_300_items():
    """Alice, Bob and Carol compare the replies of 300 items (1 to 3 sibling pairs each), each answer given
    in the order the pair was shown (at random), so half need mirroring. Also returns their labels as read
    for each pair in canonical order, which is what the textbook functions get."""
    labels = ["Better", "Same", "Worse"]
    mirror = mirror_from_order(labels)
    accuracy = {"alice": 0.85, "bob": 0.75, "carol": 0.6}
    rng = random.Random(1971)
    judgements, canonical = [], {coder: [] for coder in accuracy}
    for item in range(300):
        replies = ["r1", "r2", "r3"][: rng.choice([2, 2, 3])]
        for i, a in enumerate(replies):
            for b in replies[i + 1 :]:
                truth = rng.choices(labels, weights=[5, 2, 3])[0]
                for coder, right in accuracy.items():
                    label = truth if rng.random() < right else rng.choice(labels)
                    canonical[coder].append(label)
                    if rng.random() < 0.5:
                        judgements.append(PairJudgement(f"item-{item}", "root", coder, a, b, label))
                    else:
                        judgements.append(PairJudgement(f"item-{item}", "root", coder, b, a, mirror[label]))
    return labels, judgements, mirror, canonical


def test_three_annotators_pairwise_judgements_on_300_items():
    labels, judgements, mirror, canonical = three_annotators_on_300_items()

    data = comparison_units(judgements, mirror)

    assert len(data) == len(canonical["alice"]) > 300  # one unit per sibling pair per item
    for weights in (None, "linear", "quadratic"):
        pairs = cohen_kappa_pairs(data, weights=weights, categories=labels)
        assert list(pairs) == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
        for (first, second), result in pairs.items():
            expected = textbook_cohen(canonical[first], canonical[second], labels, weights)
            assert result.value == pytest.approx(expected, abs=1e-12), (first, second, weights)
            assert result.n_units == len(data)
    ratings = list(zip(canonical["alice"], canonical["bob"], canonical["carol"], strict=True))
    fleiss = fleiss_kappa(data)
    assert fleiss.value == pytest.approx(textbook_fleiss(ratings, labels), abs=1e-12)
    assert (fleiss.n_units, fleiss.n_coders, fleiss.n_values) == (len(data), 3, 3 * len(data))
    # Sanity: better annotators agree more.
    kappas = cohen_kappa_pairs(data)
    assert kappas["alice", "bob"].value > kappas["alice", "carol"].value > 0
    # Nominal alpha on complete data is close to Fleiss' kappa (they differ by a small-sample factor).
    assert krippendorff_alpha(data).value == pytest.approx(fleiss.value, abs=0.01)
