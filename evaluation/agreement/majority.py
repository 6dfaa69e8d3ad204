"""One coder against the majority of others: each unit's majority label, agreement with it, and the confusion.

A model judge is measured against people this way (``evaluation.agreement.judges``):
per unit, the label most of the people gave is "the people's answer", and the judge's
label is compared with it. Plain data in and out, no Django.

The majority of a unit is its plurality label among the chosen coders, read so:

- at least two of them must have answered it (``MIN_VOTERS``): one person's label is
  that person's, not a majority — such units are counted as ``too_few``;
- when two or more labels share the highest count (one Better and one Worse, or a
  Better, a Same and a Worse), the unit has no majority: it is counted as a ``tie`` and
  left out, never settled by a coin or by the order the labels were stored in.

So with three coders a unit has a majority whenever two of them agree; with four, a
2-2 split is a tie.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluation.agreement.reliability import ReliabilityData
from evaluation.agreement.result import Agreement

MIN_VOTERS = 2
MEASURE = "agreement with the human majority"


@dataclass(frozen=True)
class Majorities:
    """Each unit's majority label among some coders, and the units left without one."""

    labels: dict[Hashable, Hashable]  # unit → the majority label
    ties: set[Hashable] = field(default_factory=set)  # units whose top count is shared
    too_few: set[Hashable] = field(default_factory=set)  # units fewer than MIN_VOTERS answered


def majority_labels(data: ReliabilityData, voters: Collection[Hashable]) -> Majorities:
    """The plurality label of each unit among ``voters`` (see the module's docstring for ties)."""
    labels: dict[Hashable, Hashable] = {}
    ties: set[Hashable] = set()
    too_few: set[Hashable] = set()
    for unit, answers in data.items():
        votes = Counter(value for coder, value in answers.items() if coder in voters and value is not None)
        if not votes:
            continue
        if sum(votes.values()) < MIN_VOTERS:
            too_few.add(unit)
            continue
        (first, top), *rest = votes.most_common()
        if rest and rest[0][1] == top:
            ties.add(unit)
        else:
            labels[unit] = first
    return Majorities(labels, ties, too_few)


@dataclass(frozen=True)
class AgainstMajority:
    """A coder's labels against the majority: the agreement, and the confusion table behind it."""

    agreement: Agreement
    labels: list[Hashable]  # rows (majority) and columns (the coder) of ``confusion``, in this order
    confusion: list[list[int]]  # confusion[i][j]: units whose majority is labels[i] and coder said labels[j]
    ties: int  # units the coder answered whose voters tied
    too_few: int  # units the coder answered that fewer than two voters answered

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.agreement.as_dict(),
            "n_agreed": sum(self.confusion[index][index] for index in range(len(self.labels))),
            "n_ties": self.ties,
            "n_too_few": self.too_few,
            "labels": list(self.labels),
            "confusion": [list(row) for row in self.confusion],
        }


def against_majority(
    data: ReliabilityData,
    coder: Hashable,
    majorities: Majorities,
    categories: Sequence[Hashable] = (),
) -> AgainstMajority:
    """``coder``'s label against the majority on each unit both have: the share that match, and the table.

    The labels of the table are ``categories`` in their order, then any other label
    seen, sorted when they sort. Undefined when no unit has both a majority and an
    answer from ``coder`` (the reason says how many were ties or had too few voters).
    """
    table: Counter[tuple[Hashable, Hashable]] = Counter()
    ties = too_few = 0
    for unit, answers in data.items():
        said = answers.get(coder)
        if said is None:
            continue
        majority = majorities.labels.get(unit)
        if majority is not None:
            table[majority, said] += 1
        elif unit in majorities.ties:
            ties += 1
        elif unit in majorities.too_few:
            too_few += 1
    labels = _labels(categories, {label for pair in table for label in pair})
    position = {label: index for index, label in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for (majority, said), count in table.items():
        confusion[position[majority]][position[said]] += count
    compared = sum(table.values())
    counts = {"n_units": compared, "n_coders": 1, "n_values": compared, "n_dropped": ties + too_few}
    if not compared:
        reason = (
            f"no unit {coder} answered has a majority among the people "
            f"({ties} tied, {too_few} answered by fewer than {MIN_VOTERS})"
        )
        agreement = Agreement.undefined(MEASURE, reason, **counts)
    else:
        agreed = math.fsum(count for (majority, said), count in table.items() if majority == said)
        agreement = Agreement.of(MEASURE, agreed / compared, **counts)
    return AgainstMajority(agreement, labels, confusion, ties, too_few)


def _labels(categories: Sequence[Hashable], seen: set[Hashable]) -> list[Hashable]:
    labels = list(categories)
    extra = seen - set(labels)
    try:
        return labels + sorted(extra)  # type: ignore[type-var]
    except TypeError:
        return labels + list(extra)
