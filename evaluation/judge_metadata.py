"""The conversation metadata a rubric's human judges see beside the conversation.

A rubric's question can be about something only the tree's metadata holds
(the time the user asked for, in ``ground_truth``): the automatic checks read
it, people on the annotate page would not see it. So a rubric names the
metadata its judges need, two ways, both kept in the order written:

- ``show_metadata: [ground_truth.time, final_state]`` in the rubric's YAML;
- a path written in a question's text, ``metadata.ground_truth.time`` or
  ``$.ground_truth.time`` (braces around it, ``{metadata.x}``, read the same).

Values are shown as text: a string as it is, anything else as JSON. Plain
functions over the spec and the metadata; no queries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from evaluation.paths import MISSING, JsonPath, PathError, parse_metadata_path, parse_path, walk
from evaluation.rubrics import RubricSpec

# A metadata path inside prose: not preceded by a word character, a dot or a $ (so that
# "node.metadata.x" and "a$.b" are not read as one), and ending before punctuation.
_IN_TEXT = re.compile(r'(?<![\w.$])(?:metadata|\$)(?:\.[A-Za-z0-9_\-]+|\[-?\d+\]|\["(?:[^"\\]|\\.)*"\])+')
# What one value shows at most: the box sits beside the conversation, it must not bury it.
MAX_CHARS = 2_000
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_\-]+")


def judge_metadata_paths(spec: RubricSpec) -> list[JsonPath]:
    """The metadata paths ``spec`` shows its judges: ``show_metadata`` first, then those its
    questions name, in order, each once."""
    paths: dict[tuple[str | int, ...], JsonPath] = {}
    for text in spec.show_metadata:
        path = parse_metadata_path(text)  # checked when the rubric was read
        paths.setdefault(path.steps, path)
    for item in spec.checks:
        for found in _IN_TEXT.findall(item.question):
            try:
                path = parse_path(found)
            except PathError:
                continue
            paths.setdefault(path.steps, path)
    return [path for path in paths.values() if path.steps]  # "$" alone would be everything


def metadata_key(path: JsonPath) -> str:
    """The path as judges read it, without its root: ``ground_truth.time``, ``slots[0]``."""
    parts: list[str] = []
    for step in path.steps:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _PLAIN_KEY.fullmatch(step):
            parts.append(f".{step}" if parts else step)
        else:
            parts.append(f"[{json.dumps(step, ensure_ascii=False)}]")
    return "".join(parts)


def metadata_text(value: Any) -> str | None:
    """``value`` as text (None when the tree has none): a string as it is, else JSON, cut short."""
    if value is MISSING:
        return None
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, indent=2 if isinstance(value, dict | list) else None)
    if len(text) > MAX_CHARS:
        return f"{text[:MAX_CHARS]}… ({len(text) - MAX_CHARS:,} more characters)"
    return text


def judge_metadata(spec: RubricSpec, metadata: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """What ``spec`` shows its judges of a tree whose metadata is ``metadata``: (key, text)."""
    tree_metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    return [
        (metadata_key(path), metadata_text(walk(tree_metadata, path.steps)))
        for path in judge_metadata_paths(spec)
    ]
