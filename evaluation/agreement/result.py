"""What every agreement measure returns: a value, or "undefined" with the reason.

A result is never NaN or infinite: a measure that has nothing to say on its
data (no pairable units, no variation, a single coder...) returns an
``Agreement`` whose ``value`` is None and whose ``undefined_reason`` says
why, in words a project manager can act on.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Agreement:
    """One measure's result over some data.

    ``n_units`` counts the units that entered the computation, ``n_dropped``
    those left out (each measure's docstring says which and why),
    ``n_values`` the values (ratings, spans, rankings...) that entered, and
    ``parts`` the intermediate figures a report may show (observed and
    expected disagreement, matched spans...).
    """

    measure: str
    value: float | None
    undefined_reason: str | None = None
    n_units: int = 0
    n_coders: int = 0
    n_values: int = 0
    n_dropped: int = 0
    parts: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Guards against a measure's own bug, not against data: data never reaches here as NaN.
        if (self.value is None) == (self.undefined_reason is None):
            raise ValueError("an Agreement has either a value or an undefined_reason")
        if self.value is not None and not math.isfinite(self.value):
            raise ValueError(f"{self.measure}: {self.value} is not a finite value")

    @classmethod
    def of(cls, measure: str, value: float, **counts: Any) -> Agreement:
        return cls(measure, float(value), None, **counts)

    @classmethod
    def undefined(cls, measure: str, reason: str, **counts: Any) -> Agreement:
        return cls(measure, None, reason, **counts)

    @property
    def is_defined(self) -> bool:
        return self.value is not None

    def __str__(self) -> str:
        if self.value is None:
            return f"undefined ({self.undefined_reason})"
        shown = f"{self.value:.3f}"
        return "0.000" if shown == "-0.000" else shown

    def as_dict(self) -> dict[str, Any]:
        """For JSON: every field, ``value`` None when undefined, plus the text shown."""
        return {
            "measure": self.measure,
            "value": self.value,
            "undefined_reason": self.undefined_reason,
            "shown": str(self),
            "n_units": self.n_units,
            "n_coders": self.n_coders,
            "n_values": self.n_values,
            "n_dropped": self.n_dropped,
            "parts": dict(self.parts),
        }


def mean_over_pairs(
    measure: str,
    pairs: Mapping[tuple[Hashable, Hashable], Agreement],
    *,
    n_units: int,
    n_coders: int,
    n_dropped: int = 0,
) -> Agreement:
    """The plain mean of the defined values in ``pairs`` (one per pair of coders).

    Undefined pairs are left out (``parts`` counts ``pairs`` and
    ``defined_pairs``); the mean is undefined when there is no pair (fewer
    than two coders) or no defined one (the first pair's reason is quoted).
    The unit counts are the caller's, who knows the data.
    """
    counts = {"n_units": n_units, "n_coders": n_coders, "n_dropped": n_dropped}
    if not pairs:
        return Agreement.undefined(measure, f"{_coders(n_coders)}: no pair of coders to compare", **counts)
    defined = [result for result in pairs.values() if result.value is not None]
    parts = {"pairs": len(pairs), "defined_pairs": len(defined)}
    if not defined:
        (first_pair, first), *_ = pairs.items()
        reason = f"no pair of coders has a value ({_pair(first_pair)}: {first.undefined_reason})"
        return Agreement.undefined(measure, reason, parts=parts, **counts)
    value = math.fsum(result.value for result in defined if result.value is not None) / len(defined)
    n_values = sum(result.n_values for result in defined)
    return Agreement.of(measure, value, n_values=n_values, parts=parts, **counts)


def _coders(count: int) -> str:
    return "no coder" if count == 0 else "only one coder" if count == 1 else f"{count} coders"


def _pair(pair: tuple[Hashable, Hashable]) -> str:
    return f"{pair[0]} and {pair[1]}"
