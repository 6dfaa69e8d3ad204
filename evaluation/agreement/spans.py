"""Span agreement: F1 between two annotators' spans, exact or by overlap, averaged over pairs.

Reliability data with items as units and each annotator's spans on the item
as the value: ``item → {annotator: [Span(node, start, end, label), ...]}``.
An empty list is an answer (no spans on that item); an absent (or None)
value means the annotator did not annotate the item, and only items both
annotators of a pair annotated are compared (the others are ``n_dropped``).
Offsets are characters, ``end`` exclusive; ``label`` is any hashable, so it
may carry a span's attributes too (``("ENTITY_NAME", (("entityType", "MOVIE"),))``).

F1 between annotators a and b is 2·matched / (|a's spans| + |b's spans|),
pooled over the items both annotated: it is symmetric, so neither is
taken as the reference.

- **exact**: a span of a matches a span of b with the same node, start,
  end and label (as multisets: a span one gave twice and the other once
  matches once).
- **overlap**: same node and label and at least one character in common;
  spans are paired one-to-one, greedily, largest overlap first (ties: the
  smaller union first, then by position). A pair counts as one match
  whatever its overlap, so overlap F1 is "partial match" F1 on the same
  scale as exact F1, and never below it: an exact pair has the largest
  overlap either of its spans can have and the smallest union, so greedy
  takes every exact pair.

Undefined for a pair: no item annotated by both, or no span on any of the
items both annotated (0/0). The mean over pairs leaves undefined pairs out.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from itertools import combinations
from typing import Any, NamedTuple

from evaluation.agreement.reliability import ReliabilityData, coders_in
from evaluation.agreement.result import Agreement, mean_over_pairs

MATCHES = ("exact", "overlap")
Pair = tuple[Hashable, Hashable]


class Span(NamedTuple):
    node: Hashable
    start: int
    end: int
    label: Hashable


def span_f1(
    data: ReliabilityData, coder_a: Hashable, coder_b: Hashable, *, match: str = "exact"
) -> Agreement:
    """Span F1 between two annotators over the items both annotated (see the module's docstring)."""
    return span_f1_pairs(data, match=match, pairs=[(coder_a, coder_b)])[coder_a, coder_b]


def span_f1_pairs(
    data: ReliabilityData, *, match: str = "exact", pairs: Iterable[Pair] | None = None
) -> dict[Pair, Agreement]:
    """``span_f1`` for each pair of annotators (all of them, keyed (a, b) in ``coders_in`` order, unless
    ``pairs`` names some).

    One pass over the items: each annotator's spans on an item are grouped
    once for all pairs, and nothing per item outlives the item (keeping
    10,000 items' groupings alive would cost more in garbage collection
    than the comparing).
    """
    if match not in MATCHES:
        raise ValueError(f'unknown match "{match}" (expected exact or overlap)')
    prepare = _counted if match == "exact" else _grouped
    count = _exact_matches if match == "exact" else _overlap_matches
    wanted = list(pairs) if pairs is not None else list(combinations(coders_in(data), 2))
    involved = {coder for pair in wanted for coder in pair}
    # Per pair: items compared, items only one of the two annotated, spans matched, each one's spans.
    totals = {pair: [0, 0, 0, 0, 0] for pair in wanted}
    for answers in data.values():
        prepared = {
            coder: prepare(_spans(values))
            for coder, values in answers.items()
            if values is not None and coder in involved
        }
        for (coder_a, coder_b), total in totals.items():
            answer_a, answer_b = prepared.get(coder_a), prepared.get(coder_b)
            if answer_a is None or answer_b is None:
                total[1] += (answer_a is None) != (answer_b is None)
                continue
            total[0] += 1
            total[3] += answer_a[0]
            total[4] += answer_b[0]
            # Identical answers, common in practice, match every span either way.
            total[2] += answer_a[0] if answer_a[1] == answer_b[1] else count(answer_a[1], answer_b[1])
    return {pair: _f1(f"span F1 ({match})", pair, *total) for pair, total in totals.items()}


def span_agreement(data: ReliabilityData, *, match: str = "exact") -> Agreement:
    """The mean of the pairs' span F1 (each pair of annotators weighs the same)."""
    pairs = span_f1_pairs(data, match=match)
    coders = coders_in(data)
    covered = sum(1 for answers in data.values() if sum(v is not None for v in answers.values()) >= 2)
    # Items fewer than two annotators annotated compare nothing.
    return mean_over_pairs(
        f"span F1 ({match})", pairs, n_units=covered, n_coders=len(coders), n_dropped=len(data) - covered
    )


def _f1(
    measure: str, pair: Pair, compared: int, only_one: int, matched: int, first: int, second: int
) -> Agreement:
    coder_a, coder_b = pair
    counted = {"n_units": compared, "n_coders": 2, "n_values": first + second, "n_dropped": only_one}
    if not compared:
        return Agreement.undefined(measure, f"{coder_a} and {coder_b} annotated no item in common", **counted)
    if not first + second:
        reason = f"neither {coder_a} nor {coder_b} marked a span on the {_items(compared)} both annotated"
        return Agreement.undefined(measure, reason, **counted)
    parts = {"matched": matched, "spans_first": first, "spans_second": second}
    return Agreement.of(measure, 2 * matched / (first + second), parts=parts, **counted)


# An annotator's spans on one item, ready to compare: how many, and either the spans counted (exact)
# or their (start, end) ranges by (node, label), sorted (overlap).


def _counted(spans: list[tuple[Any, ...]]) -> tuple[int, dict[tuple[Any, ...], int]]:
    # A plain dict: Counter's constructor costs more than the counting at a few spans per item.
    counts: dict[tuple[Any, ...], int] = {}
    for span in spans:
        counts[span] = counts.get(span, 0) + 1
    return len(spans), counts


def _grouped(
    spans: list[tuple[Any, ...]],
) -> tuple[int, dict[tuple[Hashable, Hashable], list[tuple[int, int]]]]:
    groups: dict[tuple[Hashable, Hashable], list[tuple[int, int]]] = {}
    for node, start, end, label in spans:
        groups.setdefault((node, label), []).append((start, end))
    for ranges in groups.values():
        if len(ranges) > 1:
            ranges.sort()
    return len(spans), groups


def _spans(values: Iterable[Any]) -> list[tuple[Hashable, int, int, Hashable]]:
    """The spans as plain 4-tuples (``Span`` is one), which hash and compare alike."""
    spans = []
    for span in values:
        # Concrete types only: an ABC check (Mapping) would cost more than the comparing.
        if not isinstance(span, (tuple, list)) or len(span) != 4:
            raise ValueError(f"a span is a (node, start, end, label) tuple, got {span!r}")
        spans.append(span if isinstance(span, tuple) else tuple(span))
    return spans


def _exact_matches(spans_a: Mapping[tuple[Any, ...], int], spans_b: Mapping[tuple[Any, ...], int]) -> int:
    return sum(min(count, spans_b[span]) for span, count in spans_a.items() if span in spans_b)


def _overlap_matches(
    groups_a: Mapping[tuple[Hashable, Hashable], list[tuple[int, int]]],
    groups_b: Mapping[tuple[Hashable, Hashable], list[tuple[int, int]]],
) -> int:
    matched = 0
    for key, ranges_a in groups_a.items():
        ranges_b = groups_b.get(key)
        if not ranges_b:
            continue
        if len(ranges_a) == 1 and len(ranges_b) == 1:  # the usual case: nothing to choose between
            (start_a, end_a), (start_b, end_b) = ranges_a[0], ranges_b[0]
            matched += min(end_a, end_b) > max(start_a, start_b)
            continue
        candidates = []
        for i, (start_a, end_a) in enumerate(ranges_a):
            for j, (start_b, end_b) in enumerate(ranges_b):
                overlap = min(end_a, end_b) - max(start_a, start_b)
                if overlap > 0:
                    candidates.append((-overlap, max(end_a, end_b) - min(start_a, start_b), i, j))
        candidates.sort()
        taken_a: set[int] = set()
        taken_b: set[int] = set()
        for _, _, i, j in candidates:
            if i not in taken_a and j not in taken_b:
                taken_a.add(i)
                taken_b.add(j)
                matched += 1
    return matched


def _items(count: int) -> str:
    return "1 item" if count == 1 else f"{count:,} items"
