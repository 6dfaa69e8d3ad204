"""Numbers: ``number`` (a typed value) and ``slider`` (a position on a scale); payload ``{"value": x}``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Scheme, expect_mapping, read_number, read_str
from annotation.schemes.registry import register
from trees.shapes import TreeShape


class _Numeric(Scheme):
    keys = frozenset({"min", "max", "step"})
    agreement = "interval"
    default_min: float | None = None
    default_max: float | None = None
    default_step: float | None = None

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.minimum = read_number(raw, "min", path, problems, default=self.default_min)
        self.maximum = read_number(raw, "max", path, problems, default=self.default_max)
        self.step = read_number(raw, "step", path, problems, default=self.default_step)
        if self.minimum is not None and self.maximum is not None and self.minimum >= self.maximum:
            problems.add(join(path, "max"), f"must be above min ({self.minimum:g})")
        if self.step is not None and self.step <= 0:
            problems.add(join(path, "step"), "must be above 0")

    def as_config(self) -> dict[str, Any]:
        return super().as_config() | {"min": self.minimum, "max": self.maximum, "step": self.step}

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        value = expect_mapping(payload, path, problems, {"value"})
        if value is None:
            return None
        number = value.get("value")
        where = join(path, "value")
        if isinstance(number, bool) or not isinstance(number, int | float):
            problems.add(where, f"must be a number, got {describe(number)}")
            return None
        if not math.isfinite(number):
            problems.add(where, f"must be a finite number, got {number}")
            return None
        if self.minimum is not None and number < self.minimum:
            problems.add(where, f"must be at least {self.minimum:g}, got {number:g}")
            return None
        if self.maximum is not None and number > self.maximum:
            problems.add(where, f"must be at most {self.maximum:g}, got {number:g}")
            return None
        if self.step is not None:
            base = self.minimum or 0
            steps = (number - base) / self.step
            if abs(steps - round(steps)) > 1e-9:
                problems.add(where, f"must be a multiple of {self.step:g} from {base:g}, got {number:g}")
                return None
        return {"value": number}


@register
class Number(_Numeric):
    annotation_type = "number"


@register
class Slider(_Numeric):
    annotation_type = "slider"
    keys = _Numeric.keys | {"min_label", "max_label", "starting_value"}
    default_min = 0
    default_max = 100
    default_step = 1

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        super().read(raw, path, problems)
        self.min_label = read_str(raw, "min_label", path, problems, default="")
        self.max_label = read_str(raw, "max_label", path, problems, default="")
        self.starting_value = read_number(raw, "starting_value", path, problems, default=self.minimum)

    def as_config(self) -> dict[str, Any]:
        return super().as_config() | {
            "min_label": self.min_label,
            "max_label": self.max_label,
            "starting_value": self.starting_value,
        }
