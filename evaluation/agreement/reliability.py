"""Reliability data: what each coder said about each unit.

Every measure reads the same shape, a mapping ``unit → {coder: value}``::

    {"item-1": {"alice": "Better", "bob": "Same"},
     "item-2": {"alice": "Worse", "bob": "Worse", "carol": "Worse"}}

A value a coder did not give is simply absent (a None value counts as
absent too). Values are hashable: labels, numbers, frozensets for set-valued
answers, tuples of spans for span answers. Units and coders are any hashable
ids. The builders below make this shape from the two layouts data usually
comes in.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

ReliabilityData = Mapping[Hashable, Mapping[Hashable, Any]]


def reliability_from_lists(
    values_by_coder: Mapping[Hashable, Sequence[Any]], units: Sequence[Hashable] | None = None
) -> dict[Hashable, dict[Hashable, Any]]:
    """From Krippendorff's matrix layout: one list per coder, one position per unit, None for missing.

    Units are named by ``units`` (one per position) or by their position
    from 0. Units nobody coded are kept (as empty mappings) so that they are
    counted as dropped rather than silently lost.
    """
    width = max((len(values) for values in values_by_coder.values()), default=0)
    if units is None:
        units = range(width)
    elif len(units) < width:
        raise ValueError(f"{len(units)} unit names for lists of up to {width} values")
    data: dict[Hashable, dict[Hashable, Any]] = {unit: {} for unit in units}
    for coder, values in values_by_coder.items():
        for unit, value in zip(units, values, strict=False):
            if value is not None:
                data[unit][coder] = value
    return data


def reliability_from_records(
    records: Iterable[tuple[Hashable, Hashable, Any]],
) -> dict[Hashable, dict[Hashable, Any]]:
    """From ``(unit, coder, value)`` records, as a database gives them.

    A coder giving one unit two different values is a mistake upstream (one
    annotation per annotator and item): it raises ValueError naming both.
    """
    data: dict[Hashable, dict[Hashable, Any]] = {}
    for unit, coder, value in records:
        if value is None:
            continue
        answers = data.setdefault(unit, {})
        earlier = answers.setdefault(coder, value)
        if earlier != value:
            raise ValueError(f"unit {unit!r}: coder {coder!r} gave two values, {earlier!r} and {value!r}")
    return data


def coders_in(data: ReliabilityData) -> list[Hashable]:
    """The coders that gave at least one value, sorted (in order of appearance if ids don't sort)."""
    seen: dict[Hashable, None] = {}
    for answers in data.values():
        for coder, value in answers.items():
            if value is not None:
                seen[coder] = None
    try:
        return sorted(seen)  # type: ignore[type-var]
    except TypeError:
        return list(seen)
