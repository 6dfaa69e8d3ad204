"""A grid of ``options`` each rated with one of ``labels``; payload ``{option: label}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Label, Scheme, labels_config, read_labels
from annotation.schemes.registry import register
from trees.shapes import TreeShape


@register
class Multirate(Scheme):
    annotation_type = "multirate"
    keys = frozenset({"options", "labels"})
    agreement = "ordinal"

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.options: list[Label] = read_labels(raw, "options", path, problems)
        self.labels: list[Label] = read_labels(raw, "labels", path, problems, minimum=2)

    def as_config(self) -> dict[str, Any]:
        return super().as_config() | {
            "options": labels_config(self.options),
            "labels": labels_config(self.labels),
        }

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        if not isinstance(payload, Mapping):
            problems.add(path, f"must be an object of option: label, got {describe(payload)}")
            return None
        options = [option.name for option in self.options]
        labels = [label.name for label in self.labels]
        ok = True
        for option, label in payload.items():
            if option not in options:
                problems.add(join(path, str(option)), f"is not one of the options ({', '.join(options)})")
                ok = False
            elif label not in labels:
                shown = f'"{label}"' if isinstance(label, str) else describe(label)
                problems.add(join(path, option), f"{shown} is not one of the labels ({', '.join(labels)})")
                ok = False
        if not ok:
            return None
        return {option: payload[option] for option in options if option in payload}

    def is_empty(self, payload: Any) -> bool:
        return not payload or len(payload) < len(self.options)
