"""Choices among labels: ``radio`` (one, ``{"label"}``) and ``multiselect`` (any, ``{"labels"}``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Label, Scheme, expect_mapping, labels_config, read_labels
from annotation.schemes.registry import register
from trees.shapes import TreeShape


class _Labelled(Scheme):
    keys = frozenset({"labels"})
    labels: list[Label]

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.labels = read_labels(
            raw, "labels", path, problems, minimum=2 if self.annotation_type == "radio" else 1
        )

    @property
    def label_names(self) -> list[str]:
        return [label.name for label in self.labels]

    def as_config(self) -> dict[str, Any]:
        return super().as_config() | {"labels": labels_config(self.labels)}

    def _check_label(self, value: Any, path: str, problems: Problems) -> bool:
        if isinstance(value, str) and value in self.label_names:
            return True
        shown = f'"{value}"' if isinstance(value, str) else describe(value)
        problems.add(path, f"{shown} is not one of the labels ({', '.join(self.label_names)})")
        return False


@register
class Radio(_Labelled):
    annotation_type = "radio"

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        value = expect_mapping(payload, path, problems, {"label"})
        if value is None or not self._check_label(value.get("label"), join(path, "label"), problems):
            return None
        return {"label": value["label"]}


@register
class Multiselect(_Labelled):
    annotation_type = "multiselect"
    agreement = "set"

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        value = expect_mapping(payload, path, problems, {"labels"})
        if value is None:
            return None
        chosen = value.get("labels")
        if not isinstance(chosen, list):
            problems.add(join(path, "labels"), f"must be a list of labels, got {describe(chosen)}")
            return None
        ok = True
        for index, label in enumerate(chosen):
            ok &= self._check_label(label, join(join(path, "labels"), index), problems)
        if ok and len(set(chosen)) != len(chosen):
            problems.add(join(path, "labels"), "lists a label more than once")
            ok = False
        if not ok:
            return None
        # The configured order, so that equal answers are equal payloads.
        return {"labels": [name for name in self.label_names if name in chosen]}

    def is_empty(self, payload: Any) -> bool:
        return not payload or not payload.get("labels")
