"""Free text; payload ``{"text": "..."}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Scheme, expect_mapping, read_bool, read_int
from annotation.schemes.registry import register
from trees.shapes import TreeShape


@register
class Text(Scheme):
    annotation_type = "text"
    keys = frozenset({"multiline", "rows", "cols", "max_length"})
    agreement = "none"

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.multiline = read_bool(raw, "multiline", path, problems, default=False)
        self.rows = read_int(raw, "rows", path, problems, minimum=1, default=4)
        self.cols = read_int(raw, "cols", path, problems, minimum=1, default=60)
        self.max_length = read_int(raw, "max_length", path, problems, minimum=1, default=20_000)

    def as_config(self) -> dict[str, Any]:
        return super().as_config() | {
            "multiline": self.multiline,
            "rows": self.rows,
            "cols": self.cols,
            "max_length": self.max_length,
        }

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        value = expect_mapping(payload, path, problems, {"text"})
        if value is None:
            return None
        text = value.get("text")
        if not isinstance(text, str):
            problems.add(join(path, "text"), f"must be a string, got {describe(text)}")
            return None
        if len(text) > self.max_length:
            problems.add(
                join(path, "text"), f"is {len(text):,} characters, over the limit of {self.max_length:,}"
            )
            return None
        return {"text": text}

    def is_empty(self, payload: Any) -> bool:
        return not payload or not payload.get("text", "").strip()
