"""Adjudication's arithmetic: annotators' answers taken apart into fields, compared, put back.

Pure functions over plain data (no ORM, no Django), so that the page, the API
and the automatic rule decide alike and tests need no database.

A *field* is the smallest part of an answer an adjudicator takes from one
annotator rather than another:

- an item-level scheme is one field, named as the scheme (``quality``);
- a tree answer is a field per node rating (``quality/node/resp_a``), one for
  the selected path (``quality/path``) and one per decision point compared
  (``quality/comparison/root``);
- a span answer is a field per span any annotator marked
  (``entities/span/1:7-16:ENTITY_NAME``): its value is the span, or None for
  an annotator who did not mark it.

``None`` is a value like any other: annotators who all left a node unrated
agree on it. Comparisons are compared without the order their replies were
shown in, which is random per annotator.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TREE, SPAN, WHOLE = "tree", "span", "whole"
EDITED, AUTO_MAJORITY = "edited", "auto:majority"


def scheme_kind(annotation_type: str) -> str:
    """How a scheme's answers split into fields."""
    if annotation_type == "tree_annotation":
        return TREE
    if annotation_type == "span":
        return SPAN
    return WHOLE


def span_field(scheme: str, span: Mapping[str, Any]) -> str:
    """The field of one span: its node, offsets and label, and its attributes when it has any."""
    name = f"{scheme}/span/{span.get('node')}:{span.get('start')}-{span.get('end')}:{span.get('label')}"
    attributes = span.get("attributes") or {}
    if attributes:
        name += " " + ",".join(f"{key}={value}" for key, value in sorted(attributes.items()))
    return name


def answer_fields(kinds: Mapping[str, str], answers: Mapping[str, Any]) -> dict[str, Any]:
    """One annotator's answers (scheme name: payload) as fields; empty answers give no field."""
    fields: dict[str, Any] = {}
    for scheme, kind in kinds.items():
        payload = answers.get(scheme)
        if payload in (None, {}, []):
            continue
        if kind == WHOLE or not isinstance(payload, Mapping):
            fields[scheme] = payload
        elif kind == TREE:
            for node, rating in (payload.get("node_annotations") or {}).items():
                if rating not in (None, {}):
                    fields[f"{scheme}/node/{node}"] = rating
            if payload.get("selected_path"):
                fields[f"{scheme}/path"] = payload["selected_path"]
            for parent, comparison in (payload.get("branch_comparisons") or {}).items():
                if isinstance(comparison, Mapping) and (comparison.get("pairs") or comparison.get("ranking")):
                    fields[f"{scheme}/comparison/{parent}"] = comparison
        else:
            for span in payload.get("spans") or []:
                if isinstance(span, Mapping):
                    fields[span_field(scheme, span)] = span
    return fields


def fields_answers(kinds: Mapping[str, str], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Fields put back together into answers (scheme name: payload), for the schemes to check."""
    answers: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        scheme, _, rest = name.partition("/")
        kind = kinds.get(scheme)
        if kind is None:
            continue
        if kind == WHOLE or not rest:
            answers[scheme] = value
            continue
        payload = answers.setdefault(scheme, {})
        part, _, key = rest.partition("/")
        if kind == TREE and part == "node":
            payload.setdefault("node_annotations", {})[key] = value
        elif kind == TREE and part == "path":
            payload["selected_path"] = value
        elif kind == TREE and part == "comparison":
            payload.setdefault("branch_comparisons", {})[key] = value
        elif kind == SPAN:
            payload.setdefault("spans", []).append(value)
    return answers


def comparable(value: Any) -> str:
    """A value's identity for agreement: canonical JSON, a comparison without its shown order."""
    if isinstance(value, Mapping) and "shown_order" in value:
        value = {key: part for key, part in value.items() if key != "shown_order"}
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class FieldVotes:
    """What each annotator answered for one field, and how far they agree."""

    name: str
    values: dict[str, Any]  # username: value (None: no answer)
    top_value: Any  # the value most annotators gave (the first of them on a tie)
    top_share: float  # the share of annotators who gave it, 0..1

    @property
    def agreed(self) -> bool:
        return self.top_share == 1.0

    def reaches(self, min_agreement: float) -> bool:
        """Whether enough annotators agree for the automatic rule (never with a single one).

        The share is compared to two decimals, as people write it: 0.67 means two of three.
        """
        return len(self.values) > 1 and round(self.top_share, 2) >= min_agreement


def field_votes(columns: Mapping[str, Mapping[str, Any]]) -> list[FieldVotes]:
    """Every field any annotator answered, with each annotator's value: disagreements first,
    then agreements, each in the order the fields were first met (schemes, then nodes)."""
    names: dict[str, None] = {}
    for fields in columns.values():
        for name in fields:
            names.setdefault(name)
    votes = []
    for name in names:
        values = {user: fields.get(name) for user, fields in columns.items()}
        counts: dict[str, int] = {}
        first: dict[str, Any] = {}
        for value in values.values():
            key = comparable(value)
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, value)
        top = max(counts, key=lambda key: counts[key])  # max keeps the first of equal counts
        votes.append(FieldVotes(name, values, first[top], counts[top] / len(values)))
    return sorted(votes, key=lambda vote: vote.agreed)


@dataclass(frozen=True)
class Merged:
    """A final answer as fields, with where each came from, and the fields still undecided."""

    fields: dict[str, Any]
    provenance: dict[str, str]
    undecided: list[str]


def prefilled(votes: list[FieldVotes], *, min_agreement: float | None = None) -> Merged:
    """What needs nobody's choice: fields every annotator agrees on (from the first of them),
    and, when the automatic rule is on (``min_agreement``), fields enough of them agree on."""
    fields: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    undecided: list[str] = []
    for vote in votes:
        if vote.agreed:
            fields[vote.name] = vote.top_value
            provenance[vote.name] = next(iter(vote.values))
        elif min_agreement is not None and vote.reaches(min_agreement):
            fields[vote.name] = vote.top_value
            provenance[vote.name] = AUTO_MAJORITY
        else:
            undecided.append(vote.name)
    return Merged(fields, provenance, undecided)


def auto_majority(votes: list[FieldVotes], min_agreement: float) -> Merged:
    """The automatic rule: every field at least ``min_agreement`` of the annotators agree on,
    marked ``auto:majority``; an item is final without a person when nothing is undecided."""
    fields: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    undecided: list[str] = []
    for vote in votes:
        if vote.reaches(min_agreement):
            fields[vote.name], provenance[vote.name] = vote.top_value, AUTO_MAJORITY
        else:
            undecided.append(vote.name)
    return Merged(fields, provenance, undecided)
