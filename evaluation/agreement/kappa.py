"""Agreement on labels: Cohen's κ per pair and Fleiss' κ (chance-corrected), and percent agreement.

All three read reliability data (unit → {coder: label}); a coder's absent
(or None) value is missing.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from evaluation.agreement.reliability import ReliabilityData, coders_in
from evaluation.agreement.result import Agreement

WEIGHTS = (None, "linear", "quadratic")
Pair = tuple[Hashable, Hashable]


def cohen_kappa(
    data: ReliabilityData,
    coder_a: Hashable,
    coder_b: Hashable,
    *,
    weights: str | None = None,
    categories: Sequence[Hashable] | None = None,
) -> Agreement:
    """Cohen's κ between two coders, on the units both coded (units only one coded are dropped).

    ``weights``: None (unweighted), "linear" or "quadratic" disagreement
    weights |i - j| / (K - 1) and (|i - j| / (K - 1))², where i and j are
    the labels' positions in ``categories`` — needed for weights, since they
    need an order, and checked when given (a label outside it raises
    ValueError). κ = 1 - Σ w·observed / Σ w·expected, the expected table
    being the product of the two coders' own marginals; unweighted, that is
    (p_o - p_e) / (1 - p_e). ``parts`` has p_o (exact agreement) and the
    weighted observed and expected disagreement.

    Undefined: no unit coded by both, or no expected disagreement (both
    coders gave every unit the same single label).
    """
    return cohen_kappa_pairs(data, weights=weights, categories=categories, pairs=[(coder_a, coder_b)])[
        coder_a, coder_b
    ]


def cohen_kappa_pairs(
    data: ReliabilityData,
    *,
    weights: str | None = None,
    categories: Sequence[Hashable] | None = None,
    pairs: Sequence[Pair] | None = None,
) -> dict[Pair, Agreement]:
    """Cohen's κ for each pair of coders (as ``cohen_kappa``), keyed (a, b) with a before b in ``coders_in``.

    One pass over the units builds every pair's joint table, so 5 coders
    over 10,000 units cost 10 x 10,000 increments, not 10 passes.
    """
    if weights not in WEIGHTS:
        raise ValueError(f'unknown weights "{weights}" (expected linear, quadratic or None)')
    if weights is not None and categories is None:
        raise ValueError(f"{weights} weights need the categories in their order")
    weight = _weight_function(weights, categories)
    measure = "Cohen's kappa" + (f" ({weights} weights)" if weights else "")
    wanted = list(pairs) if pairs is not None else list(combinations(coders_in(data), 2))
    tables: dict[Pair, Counter[tuple[Any, Any]]] = {pair: Counter() for pair in wanted}
    by_coder: dict[Hashable, list[Pair]] = {}
    for pair in wanted:
        by_coder.setdefault(pair[0], []).append(pair)
    coded: Counter[Hashable] = Counter()
    for answers in data.values():
        coded.update(coder for coder, value in answers.items() if value is not None)
        for first, first_pairs in by_coder.items():
            value = answers.get(first)
            if value is None:
                continue
            for pair in first_pairs:
                other = answers.get(pair[1])
                if other is not None:
                    tables[pair][value, other] += 1
    results = {}
    for pair in wanted:
        result = _cohen(measure, pair, tables[pair], weight, categories)
        # Units only one of the two coded.
        results[pair] = replace(result, n_dropped=coded[pair[0]] + coded[pair[1]] - 2 * result.n_units)
    return results


def _weight_function(
    weights: str | None, categories: Sequence[Hashable] | None
) -> Callable[[Any, Any], float]:
    if weights is None:
        return lambda a, b: 0.0 if a == b else 1.0
    assert categories is not None
    position = {label: index for index, label in enumerate(categories)}
    span = max(len(categories) - 1, 1)
    power = 1 if weights == "linear" else 2
    return lambda a, b: (abs(position[a] - position[b]) / span) ** power


def _cohen(
    measure: str,
    pair: Pair,
    table: Counter[tuple[Any, Any]],
    weight: Callable[[Any, Any], float],
    categories: Sequence[Hashable] | None,
) -> Agreement:
    total = sum(table.values())
    counted = {"n_units": total, "n_coders": 2, "n_values": 2 * total}
    if not total:
        reason = f"{pair[0]} and {pair[1]} coded no unit in common"
        return Agreement.undefined(measure, reason, **counted)
    rows: Counter[Any] = Counter()
    columns: Counter[Any] = Counter()
    for (a, b), count in table.items():
        rows[a] += count
        columns[b] += count
    if categories is not None:
        known = set(categories)
        unknown = [value for value in rows.keys() | columns.keys() if value not in known]
        if unknown:
            raise ValueError(f"labels outside the categories given: {', '.join(sorted(map(repr, unknown)))}")
    agreed = math.fsum(count for (a, b), count in table.items() if a == b) / total
    observed = math.fsum(count * weight(a, b) for (a, b), count in table.items()) / total
    expected = math.fsum(
        n_a * n_b * weight(a, b) for a, n_a in rows.items() for b, n_b in columns.items()
    ) / (total * total)
    parts = {
        "observed_agreement": agreed,
        "observed_disagreement": observed,
        "expected_disagreement": expected,
    }
    if expected <= 0:
        label = next(iter(rows))
        reason = f"{pair[0]} and {pair[1]} gave every unit {label!r}: no variation, so chance agreement is 1"
        return Agreement.undefined(measure, reason, parts=parts, **counted)
    return Agreement.of(measure, 1 - observed / expected, parts=parts, **counted)


def fleiss_kappa(data: ReliabilityData) -> Agreement:
    """Fleiss' κ over all coders: each unit's labels counted, then ``fleiss_kappa_from_counts``.

    Coders may differ from unit to unit (Fleiss' κ does not track who
    rated), but every rated unit must have the same number of ratings: a
    unit with another count makes κ undefined with the counts in the reason
    — use Krippendorff's alpha, which is defined for missing values, on such
    data. Units nobody rated are not subjects and are dropped.
    """
    rows = []
    dropped = 0
    for answers in data.values():
        counts = Counter(value for value in answers.values() if value is not None)
        if counts:
            rows.append(counts)
        else:
            dropped += 1
    return replace(fleiss_kappa_from_counts(rows), n_coders=len(coders_in(data)), n_dropped=dropped)


def fleiss_kappa_from_counts(table: Sequence[Mapping[Hashable, int] | Sequence[int]]) -> Agreement:
    """Fleiss' κ from a subjects x categories table of counts (a row: {label: count} or counts by column).

    κ = (P̄ - P̄_e) / (1 - P̄_e), with P̄ the mean over subjects of the share of
    agreeing rater pairs, (Σ_j n_ij² - n) / (n(n - 1)), and P̄_e = Σ_j p_j²
    over the pooled category shares p_j. Every row must sum to the same n
    (Fleiss 1971's design); otherwise, with a single rating per subject, or
    when every rating falls in one category, κ is undefined.
    """
    measure = "Fleiss' kappa"
    rows = [dict(row) if isinstance(row, Mapping) else dict(enumerate(row)) for row in table]
    rows = [row for row in rows if sum(row.values())]
    sizes = sorted({sum(row.values()) for row in rows})
    subjects = len(rows)
    counted = {"n_units": subjects, "n_coders": sizes[-1] if sizes else 0}
    if not rows:
        return Agreement.undefined(measure, "no unit has a rating", **counted)
    if len(sizes) > 1:
        reason = (
            f"units have between {sizes[0]} and {sizes[-1]} ratings: Fleiss' kappa needs the same number "
            "on every unit (Krippendorff's alpha allows missing values)"
        )
        ratings = sum(sum(row.values()) for row in rows)
        return Agreement.undefined(measure, reason, n_values=ratings, **counted)
    (raters,) = sizes
    counted["n_values"] = subjects * raters
    if raters < 2:
        return Agreement.undefined(measure, "every unit has a single rating: no pair to agree", **counted)
    totals: Counter[Hashable] = Counter()
    for row in rows:
        totals.update(row)
    used = [label for label, count in totals.items() if count]
    if len(used) == 1:
        reason = f"every rating is {used[0]!r}: no variation, so chance agreement is 1"
        return Agreement.undefined(measure, reason, **counted)
    ratings = subjects * raters
    agreeing = sum(count * count for row in rows for count in row.values()) - ratings
    observed = agreeing / (ratings * (raters - 1))
    expected = math.fsum(count * count for count in totals.values()) / (ratings * ratings)
    parts = {"observed_agreement": observed, "expected_agreement": expected}
    return Agreement.of(measure, (observed - expected) / (1 - expected), parts=parts, **counted)


def percent_agreement(data: ReliabilityData) -> Agreement:
    """The share of agreeing pairs of values, averaged over the units with two or more values.

    Per unit: Σ_c n_c(n_c - 1) / (m(m - 1)), the share of its pairs of
    coders that gave the same value (for two coders: 1 if they agree, else
    0), so the result is a proportion in [0, 1], not chance-corrected.
    Units with fewer than two values are dropped; undefined when none is left.
    """
    measure = "percent agreement"
    shares = []
    coders: dict[Hashable, None] = {}
    dropped = values = 0
    for answers in data.values():
        present = []
        for coder, value in answers.items():
            if value is not None:
                coders[coder] = None
                present.append(value)
        size = len(present)
        if size < 2:
            dropped += 1
            continue
        values += size
        same = sum(count * (count - 1) for count in Counter(present).values())
        shares.append(same / (size * (size - 1)))
    counted = {"n_units": len(shares), "n_coders": len(coders), "n_values": values, "n_dropped": dropped}
    if not shares:
        return Agreement.undefined(measure, "no unit has values from two or more coders", **counted)
    return Agreement.of(measure, math.fsum(shares) / len(shares), **counted)
