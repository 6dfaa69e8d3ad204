"""Problems found in what users give us (configs, payloads), located by path.

Config paths look like ``annotation_schemes[0].node_scheme.size``; payload
paths like ``response_quality.node_annotations.resp_a.rating``. The admin
shows them on the form, the CLI prints them and exits 2, the API returns
them as JSON with a 400.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Paths are written one way everywhere: the stored-text checks (trees) write them too.
from trees.storable import join


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    code: str = "invalid"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


class ProblemsError(Exception):
    """Raised with every problem found, not just the first."""

    def __init__(self, problems: list[Problem]):
        super().__init__("; ".join(str(problem) for problem in problems))
        self.problems = problems


def nearest(word: str, choices: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


@dataclass
class Problems:
    """Collects problems and the keys accepted but ignored."""

    items: list[Problem] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    def add(self, path: str, message: str, code: str = "invalid") -> None:
        self.items.append(Problem(path, message, code))

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise ProblemsError(list(self.items))

    def check_keys(
        self,
        raw: Mapping[str, Any],
        path: str,
        known: Iterable[str],
        ignorable: Iterable[str] = (),
    ) -> None:
        """Report unknown keys (suggesting the nearest known one) and note ignorable ones."""
        known = set(known)
        ignorable = set(ignorable)
        for key in raw:
            if key in known:
                continue
            if key in ignorable:
                self.ignored.append(join(path, key))
                continue
            suggestion = nearest(str(key), known | ignorable)
            hint = f' (did you mean "{suggestion}"?)' if suggestion else ""
            self.add(join(path, str(key)), f"unknown key{hint}", "unknown_key")


def describe(value: Any) -> str:
    """A value's JSON type name, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
