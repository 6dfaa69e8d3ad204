"""JSON paths into what an automatic check can see.

A path names a value in the tree's metadata, the judged message or the tree::

    metadata.ground_truth.participants     the tree's metadata (what the import carried)
    $.ground_truth.participants            the same: ``$`` is short for ``metadata``
    metadata.final_state.slots[0].start    [n] indexes a list (from 0; [-1] is the last)
    metadata["odd.key"].value              a key with dots or spaces, quoted
    node.text                              the judged message: id, role, text, lang,
    node.metadata.tool_calls                 model_name, depth, metadata
    tree.id                                the tree: id (its external id), state

A path that leads nowhere (a missing key, an index out of range, a step into
a string) resolves to ``MISSING``; checks treat that as not holding. Paths
are parsed once, when the rubric is read, so a typo is a validation error
with its key path rather than a check that silently never holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaluation.subjects import Subject

ROOTS = ("metadata", "node", "tree")
SYNTAX = 'a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps'
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_STEP = re.compile(r'\.([A-Za-z0-9_\-]+)|\[(-?\d+)\]|\["((?:[^"\\]|\\.)*)"\]')


class _Missing:
    """What a path that leads nowhere resolves to (never equal to anything, itself included)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class PathError(ValueError):
    """The text is not a path; the message says why."""


@dataclass(frozen=True, slots=True)
class JsonPath:
    text: str
    root: str
    steps: tuple[str | int, ...]

    def __str__(self) -> str:
        return self.text

    def resolve(self, subject: Subject) -> Any:
        """The value at this path for ``subject``, or ``MISSING``."""
        return walk(subject.root(self.root), self.steps)


def walk(value: Any, steps: tuple[str | int, ...]) -> Any:
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                return MISSING
            value = value[step]
    return value


def parse_path(text: Any) -> JsonPath:
    """Read a path; raises PathError with the reason."""
    if not isinstance(text, str) or not text.strip():
        raise PathError(f"must be a path: {SYNTAX}")
    source = text.strip()
    if source.startswith("$"):
        root, position = "metadata", 1
    else:
        match = _NAME.match(source)
        if match is None:
            raise PathError(f'"{source}" is not a path: {SYNTAX}')
        root, position = match.group(0), match.end()
        if root not in ROOTS:
            raise PathError(f'"{source}" starts with "{root}": paths start with metadata, node, tree or $')
    steps: list[str | int] = []
    while position < len(source):
        match = _STEP.match(source, position)
        if match is None:
            raise PathError(f'"{source}" is not a path: cannot read "{source[position:]}" ({SYNTAX})')
        key, index, quoted = match.groups()
        if key is not None:
            steps.append(key)
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(re.sub(r"\\(.)", r"\1", quoted))
        position = match.end()
    return JsonPath(source, root, tuple(steps))


def parse_metadata_path(text: Any) -> JsonPath:
    """A path into the tree's metadata, its root optional: ``ground_truth.time`` reads as
    ``metadata.ground_truth.time`` (and ``node.x`` as the metadata's key ``node``); raises
    PathError with the reason."""
    if isinstance(text, str) and not re.match(r"\s*(\$|metadata(?=[.\[]|\s*$))", text):
        text = "metadata." + text.strip()
    return parse_path(text)
