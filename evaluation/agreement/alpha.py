"""Krippendorff's alpha, with the distance that fits each scheme's values.

    alpha = 1 - D_o / D_e

over the coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability"): a unit with m_u ≥ 2 values contributes, for every
ordered pair of its values from different coders, 1 / (m_u - 1) to the
coincidence o_ck of their two values, so that each pairable value counts
once. With n the number of pairable values and n_c their marginals,

    D_o = 1/n · Σ_c Σ_k o_ck δ²(c, k)
    D_e = 1/(n(n - 1)) · Σ_c Σ_k n_c n_k δ²(c, k)

Since δ²(c, c) = 0, Σ_c Σ_k o_ck δ²(c, k) is Σ_u S_u / (m_u - 1), where
S_u = Σ_c Σ_k n_uc n_uk δ²(c, k) over the unit's value counts: that is how
it is computed here, in O(units x distinct values per unit²), never over
all coder pairs. The distances (``DISTANCES``):

- ``nominal``: 0 when equal, 1 otherwise (radio, labels, rubric criteria,
  branch-comparison pair labels). S = m² - Σ n_c².
- ``ordinal``: Krippendorff's rank-based δ²_ck = (Σ_{g=c..k} n_g - (n_c + n_k)/2)²
  over the pairable values' marginals (likert). That is the squared
  difference of the values' mid-rank positions P_c = Σ_{g<c} n_g + n_c/2,
  so it is computed as interval alpha over those positions (sorted distinct
  values, prefix sums). Values sort naturally or by the ``order`` given.
- ``interval``: (c - k)² (number, slider, Open-Assistant's scales).
  S = 2 · m · Σ n_c (x_c - x̄)², exact for integers.
- ``ratio``: ((c - k)/(c + k))² for non-negative numbers; pairwise over
  the distinct values, so O(distinct values²) for the marginals.
- ``set``: the Jaccard distance 1 - |A & B| / |A or B| (the share of the
  elements either answer has that only one of them has) between two sets:
  multiselect labels, a selected path as its node set. Not squared, as
  NLTK's agreement module uses set distances. Why Jaccard rather than
  MASI: it is a true metric with a plain reading, it makes set alpha equal
  nominal alpha when every answer is a single label, and its partial credit
  grows with how much two answers share — two paths down the same tree
  that part late are close — where MASI's monotonicity factor (1, 2/3,
  1/3, 0) steps the credit by how the sets relate (equal, nested,
  overlapping, disjoint) rather than by how much they share. Two empty sets
  are equal (distance 0). Values may be frozensets or any non-string
  iterable (made frozensets); the marginal sum only pairs sets that share
  an element, so paths from different trees cost nothing — name nodes
  ``(item, node)`` with ``path_node_set`` so that "root" of one tree is not
  "root" of another.

Missing values: a coder's value that is absent (or None) is not there; a
unit with fewer than two values is unpairable and dropped (``n_dropped``).
Undefined: fewer than two coders, no unit with two values, or a single
distinct value among the pairable values (no variation: D_e = 0).
"""

from __future__ import annotations

import math
import numbers
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from evaluation.agreement.reliability import ReliabilityData
from evaluation.agreement.result import Agreement

Counts = Mapping[Any, int]


def krippendorff_alpha(
    data: ReliabilityData, metric: str = "nominal", *, order: Sequence[Hashable] | None = None
) -> Agreement:
    """Krippendorff's alpha of ``data`` (unit → {coder: value}) under ``metric`` (a name in ``DISTANCES``).

    ``order`` ranks labels for the ordinal metric (e.g. ["Better", "Same",
    "Worse"]); without it ordinal values sort naturally. Values that do not
    fit the metric (a string for interval, a negative number for ratio, a
    label missing from ``order``) raise ValueError: that is a wiring
    mistake, not degenerate data.
    """
    if metric not in DISTANCES:
        raise ValueError(f'unknown metric "{metric}" (expected one of {", ".join(DISTANCES)})')
    if order is not None and metric != "ordinal":
        raise ValueError(f"order applies to the ordinal metric, not {metric}")
    distance = _Ordinal(order) if order is not None else DISTANCES[metric]
    measure = f"Krippendorff's alpha ({metric})"

    coerce = distance.coerce
    coders: dict[Hashable, None] = {}
    units: list[tuple[Counter[Any], int]] = []
    marginal: Counter[Any] = Counter()
    dropped = 0
    for answers in data.values():
        values = []
        for coder, value in answers.items():
            if value is not None:
                coders[coder] = None
                values.append(coerce(value) if coerce else value)
        if len(values) < 2:
            dropped += 1
            continue
        counts = Counter(values)
        marginal.update(counts)
        units.append((counts, len(values)))

    n = sum(marginal.values())
    counted = {"n_units": len(units), "n_coders": len(coders), "n_values": n, "n_dropped": dropped}
    if len(coders) < 2:
        only = f"only one coder ({next(iter(coders))!r})" if coders else "no coder"
        return Agreement.undefined(measure, f"{only} gave values: agreement needs two", **counted)
    if not units:
        reason = "no unit has values from two or more coders"
        return Agreement.undefined(measure, reason, **counted)
    distance.check(marginal)
    if len(marginal) == 1:
        (value,) = marginal
        reason = f"every pairable value is {_show(value)}: no variation, so expected disagreement is 0"
        return Agreement.undefined(measure, reason, **counted)

    pair_sum = distance.bind(marginal)
    observed = math.fsum(pair_sum(counts, size) / (size - 1) for counts, size in units) / n
    expected = pair_sum(marginal, n) / (n * (n - 1))
    if not (math.isfinite(observed) and math.isfinite(expected)):
        reason = "the values are too large to square in floating point: rescale them"
        return Agreement.undefined(measure, reason, **counted)
    parts = {"observed_disagreement": observed, "expected_disagreement": expected}
    if expected <= 0:  # distinct values whose squared differences underflow to 0
        reason = "expected disagreement is 0: the values do not differ under this metric"
        return Agreement.undefined(measure, reason, parts=parts, **counted)
    return Agreement.of(measure, 1 - observed / expected, parts=parts, **counted)


def coincidences(data: ReliabilityData) -> dict[tuple[Any, Any], float]:
    """Krippendorff's coincidence matrix o_ck (only its non-zero cells), for reports.

    Each pairable unit adds n_uc · (n_uk - [c = k]) / (m_u - 1) to o_ck; the
    row sums are the pairable values' marginals n_c.
    """
    matrix: defaultdict[tuple[Any, Any], float] = defaultdict(float)
    for answers in data.values():
        counts = Counter(value for value in answers.values() if value is not None)
        size = sum(counts.values())
        if size < 2:
            continue
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                paired = n_c * (n_k - (c == k))
                if paired:
                    matrix[c, k] += paired / (size - 1)
    return dict(matrix)


def path_node_set(item: Hashable, path: Iterable[Hashable]) -> frozenset[tuple[Hashable, Hashable]]:
    """A selected path as a set value: its nodes named ``(item, node)``, so trees do not share ids."""
    return frozenset((item, node) for node in path)


# -- distances ----------------------------------------------------------------
#
# Each distance gives ``bind(marginal)``: a function S(counts, total) =
# Σ_c Σ_k n_c n_k δ²(c, k) over a unit's (or the marginal's) value counts.


class _Distance:
    # Turns a raw value into the one compared (a list into a frozenset, say); None keeps it.
    coerce: Callable[[Any], Any] | None = None

    def check(self, marginal: Counts) -> None:
        """Raise ValueError when a value does not fit the metric."""

    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        raise NotImplementedError


class _Nominal(_Distance):
    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        return _nominal_sum


class _Interval(_Distance):
    def check(self, marginal: Counts) -> None:
        for value in marginal:
            _check_number(value, "interval")

    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        return _squared_differences


class _Ordinal(_Distance):
    def __init__(self, order: Sequence[Hashable] | None = None):
        self.rank = None if order is None else {label: index for index, label in enumerate(order)}

    def check(self, marginal: Counts) -> None:
        if self.rank is not None:
            missing = [value for value in marginal if value not in self.rank]
            if missing:
                raise ValueError(f"ordinal values missing from the order given: {_show_all(missing)}")
            return
        try:
            sorted(marginal)
        except TypeError as error:
            raise ValueError(f"ordinal values must sort, or come with an order ({error})") from None

    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        # Twice the mid-rank positions keeps them integers, so sums are exact; δ² is then 4x too big.
        positions, below = {}, 0
        for value in sorted(marginal, key=None if self.rank is None else self.rank.__getitem__):
            positions[value] = 2 * below + marginal[value]
            below += marginal[value]

        def ordinal_sum(counts: Counts, total: int) -> float:
            placed = {positions[value]: count for value, count in counts.items()}
            return _squared_differences(placed, total) / 4

        return ordinal_sum


class _Ratio(_Distance):
    def check(self, marginal: Counts) -> None:
        for value in marginal:
            _check_number(value, "ratio")
            if value < 0:
                raise ValueError(f"ratio values must not be negative, got {value!r}")

    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        return _ratio_sum


class _Set(_Distance):
    @staticmethod
    def coerce(value: Any) -> frozenset[Any]:
        if isinstance(value, frozenset):
            return value
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise ValueError(f"set values must be sets or lists of elements, got {value!r}")
        return frozenset(value)

    def bind(self, marginal: Counts) -> Callable[[Counts, int], float]:
        return _jaccard_sum


DISTANCES: dict[str, _Distance] = {
    "nominal": _Nominal(),
    "ordinal": _Ordinal(),
    "interval": _Interval(),
    "ratio": _Ratio(),
    "set": _Set(),
}


def _nominal_sum(counts: Counts, total: int) -> float:
    return total * total - sum(count * count for count in counts.values())


def _squared_differences(counts: Counts, total: int) -> float:
    """Σ_c Σ_k n_c n_k (c - k)² = 2 · m · Σ n_c (x_c - x̄)²: exact for integers, centred for floats."""
    if all(type(value) is int for value in counts):
        first = sum(count * value for value, count in counts.items())
        second = sum(count * value * value for value, count in counts.items())
        return 2 * (total * second - first * first)
    mean = math.fsum(count * value for value, count in counts.items()) / total
    # Products, not ** 2: a float too large to square gives inf (caught by the caller), not OverflowError.
    return 2 * total * math.fsum(count * (value - mean) * (value - mean) for value, count in counts.items())


def _ratio_sum(counts: Counts, total: int) -> float:
    items = list(counts.items())
    result = 0.0
    for index, (c, n_c) in enumerate(items):
        for k, n_k in items[index + 1 :]:
            # Distinct non-negative values: c + k > 0.
            result += 2 * n_c * n_k * ((c - k) / (c + k)) ** 2
    return result


def _jaccard_sum(counts: Counts, total: int) -> float:
    """Σ n_c n_k (1 - J(c, k)) = total² - Σ n_c n_k J(c, k); J is 0 unless the sets share an element."""
    items = list(counts.items())
    similar = sum(count * count for count in counts.values())  # J(c, c) = 1, the empty set included
    if len(items) <= 8:
        for index, (c, n_c) in enumerate(items):
            for k, n_k in items[index + 1 :]:
                shared = len(c & k)
                if shared:
                    similar += 2 * n_c * n_k * shared / (len(c) + len(k) - shared)
        return total * total - similar
    holders: defaultdict[Any, list[int]] = defaultdict(list)
    for index, (values, _) in enumerate(items):
        for element in values:
            holders[element].append(index)
    for index, (c, n_c) in enumerate(items):
        partners = {other for element in c for other in holders[element] if other > index}
        for other in partners:
            k, n_k = items[other]
            shared = len(c & k)
            similar += 2 * n_c * n_k * shared / (len(c) + len(k) - shared)
    return total * total - similar


def _check_number(value: Any, metric: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{metric} values must be numbers, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{metric} values must be finite numbers, got {value!r}")


def _show(value: Any) -> str:
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(map(repr, value))) + "}" if value else "the empty set"
    return repr(value)


def _show_all(values: Iterable[Any]) -> str:
    return ", ".join(_show(value) for value in values)
