"""Answers as people read them: "4 of 5", "Positive", "path root → resp_a".

For pages that show an answer beside another (the expected answer after a
training item, say), where a payload's JSON would be in the way. Plain
functions over payloads and the schemes' parsed configs; a type without a
describer shows its JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotation.schemes.base import Scheme

Describer = Callable[["Scheme", Any], str]
DESCRIBERS: dict[str, Describer] = {}
NONE = "no answer"


def describer(*types: str) -> Callable[[Describer], Describer]:
    def register(function: Describer) -> Describer:
        for kind in types:
            DESCRIBERS[kind] = function
        return function

    return register


def answer_text(scheme: Scheme, payload: Any) -> str:
    """``payload`` (an answer to ``scheme``) in words."""
    if payload is None or payload == {}:
        return NONE
    function = DESCRIBERS.get(scheme.annotation_type)
    if function is None or not isinstance(payload, Mapping):
        return json.dumps(payload, ensure_ascii=False, sort_keys=True)
    return function(scheme, payload) or NONE


@describer("radio")
def _radio(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    return str(payload.get("label") or "")


@describer("likert")
def _likert(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    rating = payload.get("rating")
    if rating is None:
        return ""
    size = getattr(scheme, "size", None)
    names = getattr(scheme, "point_labels", []) or []
    text = f"{rating} of {size}" if size else str(rating)
    if names and 1 <= rating <= len(names):
        return f"{text} ({names[rating - 1]})"
    ends = {1: getattr(scheme, "min_label", ""), size: getattr(scheme, "max_label", "")}
    return f"{text} ({ends[rating]})" if ends.get(rating) else text


@describer("multiselect")
def _multiselect(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    return ", ".join(payload.get("labels") or []) or "none"


@describer("multirate")
def _multirate(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    return "; ".join(f"{option}: {label}" for option, label in payload.items())


@describer("number", "slider")
def _number(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    value = payload.get("value")
    return f"{value:g}" if isinstance(value, int | float) else ""


@describer("text")
def _text(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    return str(payload.get("text") or "")


@describer("span")
def _spans(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    spans = payload.get("spans") or []
    if not spans:
        return "no spans"
    return "; ".join(f"“{span['text']}” {span['label']} (message {span['node']})" for span in spans)


@describer("tree_annotation")
def _tree(scheme: Scheme, payload: Mapping[str, Any]) -> str:
    parts = []
    node_scheme = getattr(scheme, "node_scheme", None)
    for node, answer in (payload.get("node_annotations") or {}).items():
        parts.append(f"{node}: {answer_text(node_scheme, answer) if node_scheme else answer}")
    path = payload.get("selected_path") or []
    if path:
        parts.append("path " + " → ".join(path))
    for parent, comparison in (payload.get("branch_comparisons") or {}).items():
        for pair in comparison.get("pairs") or []:
            parts.append(f"{pair['a']} vs {pair['b']}: {pair['label']}")
        if comparison.get("ranking"):
            parts.append(f"replies to {parent}, best first: " + " > ".join(comparison["ranking"]))
    return "; ".join(parts)
