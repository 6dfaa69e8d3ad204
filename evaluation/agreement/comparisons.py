"""Branch-comparison pair labels as nominal reliability data: one unit per sibling pair per item.

An annotator's answer ``{a, b, label}`` reads "a is <label> than b". The same
judgement can be given either way round — Better for (a, b) is Worse for
(b, a) — so each pair is put in a canonical order (the smaller node id
first) and the label is mirrored when the answer had the pair the other way
round. The unit is ``(item, parent, first, second)``; the result feeds
``krippendorff_alpha`` (nominal, or ordinal with the labels' order),
``fleiss_kappa``, ``cohen_kappa_pairs`` and ``percent_agreement`` as is.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple


class PairJudgement(NamedTuple):
    item: Hashable
    parent: Hashable
    coder: Hashable
    a: Any
    b: Any
    label: Hashable


def mirror_from_order(labels: Sequence[Hashable]) -> dict[Hashable, Hashable]:
    """The mirror map of labels ordered from "prefers a" to "prefers b": i-th from the start ↔ from the end.

    ["Better", "Same", "Worse"] gives Better ↔ Worse and Same ↔ Same, as the
    preference-pairs export reads them (first label prefers a, last prefers
    b, those in between are ties).
    """
    return {label: labels[len(labels) - 1 - index] for index, label in enumerate(labels)}


def comparison_units(
    judgements: Iterable[PairJudgement | tuple[Any, ...]], mirror: Mapping[Hashable, Hashable]
) -> dict[tuple[Any, ...], dict[Hashable, Hashable]]:
    """Reliability data ``(item, parent, first, second) → {coder: label as read for (first, second)}``.

    ``judgements`` are ``(item, parent, coder, a, b, label)``; ``mirror`` maps
    each label to the one it becomes when a and b swap (``mirror_from_order``).
    A label outside ``mirror``, a pair of a node with itself, or one coder
    giving the same pair two different labels (once oriented) raise
    ValueError: those are mistakes upstream, not disagreement.
    """
    data: dict[tuple[Any, ...], dict[Hashable, Hashable]] = {}
    for judgement in judgements:
        item, parent, coder, a, b, label = judgement
        if label not in mirror:
            known = ", ".join(map(repr, mirror))
            raise ValueError(f"item {item!r}: label {label!r} is not one of the comparison labels ({known})")
        if a == b:
            raise ValueError(f"item {item!r}: {coder!r} compared {a!r} with itself")
        if b < a:
            a, b, label = b, a, mirror[label]
        answers = data.setdefault((item, parent, a, b), {})
        earlier = answers.setdefault(coder, label)
        if earlier != label:
            raise ValueError(
                f"item {item!r}: {coder!r} labelled {a!r} against {b!r} both {earlier!r} and {label!r}"
            )
    return data
