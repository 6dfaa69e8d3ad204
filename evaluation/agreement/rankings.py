"""Ranking agreement for sibling rankings: Kendall's W and Kendall's τ-b.

A ranking is either a sequence of items best first (no ties), or a mapping
``item → rank`` where a lower rank is better and equal ranks are ties.
Rankers are compared on the items every one of them ranked (the others are
``n_dropped``), re-ranked among those items with tied items sharing their
mean rank; a ranker with no ranking (None or empty) is missing.

- **Kendall's W** (coefficient of concordance) of m rankers over n items,
  with the tie correction: W = 12 S / (m²(n³ - n) - m Σ T), where S is the
  sum of squared deviations of the items' rank sums from m(n + 1)/2 and
  T = Σ (t³ - t) over each ranker's groups of t tied items. 1 is full
  agreement, 0 none. Undefined with fewer than two rankers or two common
  items, or when every ranker tied every item.
- **Kendall's τ-b** of two rankings: (C - D) / √((n₀ - n₁)(n₀ - n₂)) over
  the n₀ = n(n - 1)/2 item pairs, C concordant, D discordant, n₁ and n₂ the
  pairs tied in each ranking. -1 to 1. Undefined with fewer than two
  common items or when either ranking ties every item.

``ranking_agreement`` averages either over many units (one per decision
point: item x parent), each unit weighing the same.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import combinations

from evaluation.agreement.reliability import ReliabilityData
from evaluation.agreement.result import Agreement, mean_over_pairs

Ranking = Sequence[Hashable] | Mapping[Hashable, float]
Pair = tuple[Hashable, Hashable]


def kendall_w(rankings: Mapping[Hashable, Ranking | None]) -> Agreement:
    """Kendall's W of the rankers in ``rankings`` (ranker → ranking), tie-corrected."""
    measure = "Kendall's W"
    common, present, dropped = _common_items(rankings)
    m, n = len(present), len(common)
    counted = {"n_units": n, "n_coders": m, "n_values": m * n, "n_dropped": dropped}
    if m < 2:
        return Agreement.undefined(measure, f"{_rankers(m)}: agreement needs two", **counted)
    if n < 2:
        reason = f"{_common(n)} ranked by every ranker: nothing to order"
        return Agreement.undefined(measure, reason, **counted)
    ranks = [_mid_ranks(ranking, common) for ranking in present.values()]
    middle = m * (n + 1) / 2
    spread = math.fsum((sum(rank[item] for rank in ranks) - middle) ** 2 for item in common)
    ties = sum(
        t**3 - t
        for ranking, rank in zip(present.values(), ranks, strict=True)
        if isinstance(ranking, Mapping)  # lists have no ties
        for t in Counter(rank.values()).values()
    )
    denominator = m * m * (n**3 - n) - m * ties
    if denominator <= 0:
        return Agreement.undefined(measure, "every ranker tied all the items", **counted)
    return Agreement.of(measure, 12 * spread / denominator, parts={"ties": ties}, **counted)


def kendall_tau_b(ranking_a: Ranking, ranking_b: Ranking) -> Agreement:
    """Kendall's τ-b between two rankings, on the items both ranked."""
    measure = "Kendall's tau-b"
    common, present, dropped = _common_items({"a": ranking_a, "b": ranking_b})
    n = len(common)
    counted = {"n_units": n, "n_coders": len(present), "n_values": 2 * n, "n_dropped": dropped}
    if len(present) < 2:
        return Agreement.undefined(measure, "a ranking is missing", **counted)
    if n < 2:
        return Agreement.undefined(measure, f"{_common(n)} ranked by both: nothing to order", **counted)
    rank_a, rank_b = _mid_ranks(present["a"], common), _mid_ranks(present["b"], common)
    concordant = discordant = tied_a = tied_b = 0
    for x, y in combinations(common, 2):
        sign_a = (rank_a[x] > rank_a[y]) - (rank_a[x] < rank_a[y])
        sign_b = (rank_b[x] > rank_b[y]) - (rank_b[x] < rank_b[y])
        tied_a += not sign_a
        tied_b += not sign_b
        product = sign_a * sign_b
        concordant += product > 0
        discordant += product < 0
    pairs = n * (n - 1) // 2
    parts = {"concordant": concordant, "discordant": discordant, "tied_a": tied_a, "tied_b": tied_b}
    if tied_a == pairs or tied_b == pairs:
        which = "both rankings tie" if tied_a == tied_b == pairs else "one ranking ties"
        return Agreement.undefined(measure, f"{which} all {n} items", parts=parts, **counted)
    value = (concordant - discordant) / math.sqrt((pairs - tied_a) * (pairs - tied_b))
    return Agreement.of(measure, value, parts=parts, **counted)


def kendall_tau_b_pairs(rankings: Mapping[Hashable, Ranking | None]) -> dict[Pair, Agreement]:
    """τ-b for each pair of rankers with a ranking, keyed in the mapping's order."""
    present = [ranker for ranker, ranking in rankings.items() if ranking]
    return {(a, b): kendall_tau_b(rankings[a], rankings[b]) for a, b in combinations(present, 2)}


def mean_kendall_tau_b(rankings: Mapping[Hashable, Ranking | None]) -> Agreement:
    """The mean of τ-b over the pairs of rankers (one unit)."""
    pairs = kendall_tau_b_pairs(rankings)
    common, present, dropped = _common_items(rankings)
    return mean_over_pairs(
        "mean Kendall's tau-b", pairs, n_units=len(common), n_coders=len(present), n_dropped=dropped
    )


# name → (what the mean over units is called, the measure of one unit)
RANKING_MEASURES: dict[str, tuple[str, Callable[[Mapping[Hashable, Ranking | None]], Agreement]]] = {
    "kendall_w": ("Kendall's W (mean over units)", kendall_w),
    "kendall_tau_b": ("Kendall's tau-b (mean over pairs, then units)", mean_kendall_tau_b),
}


def ranking_agreement(data: ReliabilityData, measure: str = "kendall_w") -> Agreement:
    """``measure`` (a name in ``RANKING_MEASURES``) per unit of ``data`` (unit → {ranker: ranking}), averaged.

    Units where the measure is undefined (a single ranker, a single item...)
    are dropped; the mean is undefined when no unit is left, quoting the
    first unit's reason.
    """
    if measure not in RANKING_MEASURES:
        raise ValueError(f'unknown ranking measure "{measure}" (expected {" or ".join(RANKING_MEASURES)})')
    name, compute = RANKING_MEASURES[measure]
    # Only figures are kept per unit, not its result: 10,000 live results would cost in garbage collection.
    values: list[float] = []
    rankings_used = dropped = 0
    first_reason = None
    for rankings in data.values():
        result = compute(rankings)
        if result.value is None:
            dropped += 1
            first_reason = first_reason or result.undefined_reason
        else:
            values.append(result.value)
            rankings_used += result.n_coders
    rankers = {ranker for rankings in data.values() for ranker, ranking in rankings.items() if ranking}
    counted = {"n_units": len(values), "n_coders": len(rankers), "n_dropped": dropped}
    if not values:
        reason = "no units" if not data else f"no unit has a value (first: {first_reason})"
        return Agreement.undefined(name, reason, **counted)
    return Agreement.of(name, math.fsum(values) / len(values), n_values=rankings_used, **counted)


def _common_items(
    rankings: Mapping[Hashable, Ranking | None],
) -> tuple[list[Hashable], dict[Hashable, Ranking], int]:
    """The items every present ranking ranked (in the first one's order), the present rankings, and how
    many items some but not all ranked."""
    present = {ranker: ranking for ranker, ranking in rankings.items() if ranking}
    item_sets = [_items_of(ranking) for ranking in present.values()]
    if not item_sets:
        return [], present, 0
    shared = set.intersection(*item_sets)
    every = set.union(*item_sets)
    first = next(iter(present.values()))
    return [item for item in _ordered(first) if item in shared], present, len(every) - len(shared)


def _items_of(ranking: Ranking) -> set[Hashable]:
    items = list(_ordered(ranking))
    if len(set(items)) != len(items):
        repeated = [item for item, count in Counter(items).items() if count > 1]
        raise ValueError(f"a ranking lists {', '.join(map(repr, repeated))} more than once")
    return set(items)


def _ordered(ranking: Ranking) -> list[Hashable]:
    if isinstance(ranking, Mapping):
        return [item for item, rank in ranking.items() if rank is not None]
    if isinstance(ranking, str | bytes):
        raise ValueError(f"a ranking is a list of items or a mapping item → rank, got {ranking!r}")
    return list(ranking)


def _mid_ranks(ranking: Ranking, items: Sequence[Hashable]) -> dict[Hashable, float]:
    """Ranks 1..n among ``items``, tied items sharing the mean of the ranks they span."""
    if not isinstance(ranking, Mapping):  # best first, no ties: ranks are places among ``items``
        kept = set(items)
        return {item: place for place, item in enumerate((item for item in ranking if item in kept), 1)}
    keyed = [(ranking[item], item) for item in items]
    keyed.sort(key=lambda entry: entry[0])
    ranks: dict[Hashable, float] = {}
    start = 0
    while start < len(keyed):
        end = start
        while end + 1 < len(keyed) and keyed[end + 1][0] == keyed[start][0]:
            end += 1
        for _, item in keyed[start : end + 1]:
            ranks[item] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _rankers(count: int) -> str:
    return "no ranker" if count == 0 else "only one ranker" if count == 1 else f"{count} rankers"


def _common(count: int) -> str:
    return "no item" if count == 0 else "only one item" if count == 1 else f"{count} items"
