"""Likert scales: ``size`` points between ``min_label`` and ``max_label``; payload ``{"rating": n}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Scheme, expect_mapping, read_int, read_str
from annotation.schemes.registry import register
from trees.shapes import TreeShape


@register
class Likert(Scheme):
    annotation_type = "likert"
    keys = frozenset({"size", "min_label", "max_label", "labels"})
    agreement = "ordinal"

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.size = read_int(raw, "size", path, problems, minimum=2, default=5, required=True)
        self.min_label = read_str(raw, "min_label", path, problems, default="")
        self.max_label = read_str(raw, "max_label", path, problems, default="")
        # Optional names for every point (Potato's scale labels).
        self.point_labels: list[str] = []
        labels = raw.get("labels")
        if labels is not None:
            if not isinstance(labels, list) or not all(isinstance(x, str | int) for x in labels):
                problems.add(join(path, "labels"), "must be a list of names, one per scale point")
            elif len(labels) != self.size:
                problems.add(join(path, "labels"), f"has {len(labels)} names for {self.size} scale points")
            else:
                self.point_labels = [str(x) for x in labels]

    def as_config(self) -> dict[str, Any]:
        config = super().as_config() | {
            "size": self.size,
            "min_label": self.min_label,
            "max_label": self.max_label,
        }
        if self.point_labels:
            config["labels"] = self.point_labels
        return config

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        value = expect_mapping(payload, path, problems, {"rating"})
        if value is None:
            return None
        rating = value.get("rating")
        if isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= self.size:
            problems.add(
                join(path, "rating"),
                f"must be an integer from 1 to {self.size}, got {describe(rating)}"
                if not isinstance(rating, int) or isinstance(rating, bool)
                else f"must be from 1 to {self.size}, got {rating}",
            )
            return None
        return {"rating": rating}
