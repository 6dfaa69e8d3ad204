"""How close an annotator's answers come to a gold item's expected ones: a score from 0 to 1.

Plain functions over payloads in the shapes the schemes normalise them to,
and the schemes' parsed configs; no database. One scorer per annotation
type, registered by name; a type without one (free ``text``, or a type
another app adds) is not scored, and neither is a scheme the gold item
gives no expected answer for. An item's score is the mean of its scored
schemes' scores.

- ``radio``, ``likert``, ``number``: exact (1 or 0).
- ``slider``: 1 minus the distance as a share of the scale.
- ``multiselect``: set overlap (Jaccard: shared labels over all labels named).
- ``multirate``: the share of options rated the same.
- ``span``: overlap F1 — an answered span matches an expected one on the
  same node with the same label and attributes whose text overlaps it, one
  to one, the largest overlaps first.
- ``tree_annotation``: each part the gold item answers, averaged: node
  ratings (each expected node by the node scheme's scorer), the selected
  path (the shared start as a share of the longer path), comparisons (the
  share of expected pairs given the same label — a pair answered the other
  way round counts when its label is the mirror image on the label list,
  "Worse" for "Better" — or, when ranking, the share of sibling pairs put
  in the same order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from annotation.projects.config import ProjectConfig
    from annotation.schemes.base import Scheme

Scorer = Callable[["Scheme", Any, Any], float | None]
SCORERS: dict[str, Scorer] = {}


def scorer(*types: str) -> Callable[[Scorer], Scorer]:
    def register(function: Scorer) -> Scorer:
        for kind in types:
            SCORERS[kind] = function
        return function

    return register


@dataclass(frozen=True)
class GoldScore:
    """An item's score (None when nothing in it is scored) and each expected scheme's."""

    score: float | None
    by_scheme: dict[str, float | None]


def answers_score(schemes: list[Scheme], expected: Mapping[str, Any], given: Mapping[str, Any]) -> GoldScore:
    """Score ``given`` answers (payloads by scheme name) against ``expected`` ones, over ``schemes``."""
    by_scheme = {
        scheme.name: scheme_score(scheme, expected[scheme.name], given.get(scheme.name))
        for scheme in schemes
        if scheme.name in expected
    }
    scored = [score for score in by_scheme.values() if score is not None]
    return GoldScore(_mean(scored), by_scheme)


def scheme_score(scheme: Scheme, expected: Any, given: Any) -> float | None:
    """One scheme's score; None when the type is not scored or nothing is expected."""
    function = SCORERS.get(scheme.annotation_type)
    if function is None or expected is None:
        return None
    return function(scheme, expected, given)


def is_scored(scheme: Scheme) -> bool:
    return scheme.annotation_type in SCORERS


def scored_schemes(config: ProjectConfig) -> list[Scheme]:
    """The schemes gold answers are scored on: ``quality.schemes`` (or all), where a score can be computed."""
    wanted = config.quality.schemes
    return [
        scheme for scheme in config.schemes if is_scored(scheme) and (wanted is None or scheme.name in wanted)
    ]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _get(payload: Any, key: str) -> Any:
    return payload.get(key) if isinstance(payload, Mapping) else None


@scorer("radio")
def _radio(scheme: Scheme, expected: Any, given: Any) -> float:
    return 1.0 if _get(given, "label") == _get(expected, "label") else 0.0


@scorer("likert")
def _likert(scheme: Scheme, expected: Any, given: Any) -> float:
    return 1.0 if _get(given, "rating") == _get(expected, "rating") else 0.0


@scorer("number")
def _number(scheme: Scheme, expected: Any, given: Any) -> float:
    want, got = _get(expected, "value"), _get(given, "value")
    if want is None or got is None:
        return 0.0
    return 1.0 if abs(want - got) <= 1e-9 * max(1.0, abs(want)) else 0.0


@scorer("slider")
def _slider(scheme: Scheme, expected: Any, given: Any) -> float:
    want, got = _get(expected, "value"), _get(given, "value")
    if want is None or got is None:
        return 0.0
    low, high = getattr(scheme, "minimum", None), getattr(scheme, "maximum", None)
    if low is None or high is None or high <= low:
        return _number(scheme, expected, given)
    return max(0.0, 1.0 - abs(want - got) / (high - low))


@scorer("multiselect")
def _multiselect(scheme: Scheme, expected: Any, given: Any) -> float:
    want, got = set(_get(expected, "labels") or []), set(_get(given, "labels") or [])
    named = want | got
    return len(want & got) / len(named) if named else 1.0


@scorer("multirate")
def _multirate(scheme: Scheme, expected: Any, given: Any) -> float:
    want = expected if isinstance(expected, Mapping) else {}
    got = given if isinstance(given, Mapping) else {}
    options = set(want) | set(got)
    if not options:
        return 1.0
    return sum(1 for option in options if want.get(option) == got.get(option)) / len(options)


@scorer("span")
def _spans(scheme: Scheme, expected: Any, given: Any) -> float:
    return spans_f1(_get(expected, "spans") or [], _get(given, "spans") or [])


def spans_f1(expected: list[Mapping[str, Any]], given: list[Mapping[str, Any]]) -> float:
    """Overlap F1 of ``given`` spans against ``expected`` ones (1 when both are empty)."""
    if not expected and not given:
        return 1.0
    if not expected or not given:
        return 0.0

    def kind(span: Mapping[str, Any]) -> tuple[Any, ...]:
        attributes = span.get("attributes") or {}
        return (span["node"], span["label"], tuple(sorted(attributes.items())))

    candidates = []
    for i, want in enumerate(expected):
        for j, got in enumerate(given):
            overlap = min(want["end"], got["end"]) - max(want["start"], got["start"])
            if overlap > 0 and kind(want) == kind(got):
                candidates.append((overlap, i, j))
    # Largest overlaps first, then input order, so that ties resolve the same way every time.
    candidates.sort(key=lambda candidate: (-candidate[0], candidate[1], candidate[2]))
    used_expected: set[int] = set()
    used_given: set[int] = set()
    for _, i, j in candidates:
        if i not in used_expected and j not in used_given:
            used_expected.add(i)
            used_given.add(j)
    matched = len(used_expected)
    if not matched:
        return 0.0
    precision, recall = matched / len(given), matched / len(expected)
    return 2 * precision * recall / (precision + recall)


@scorer("tree_annotation")
def _tree(scheme: Scheme, expected: Any, given: Any) -> float | None:
    want = expected if isinstance(expected, Mapping) else {}
    got = given if isinstance(given, Mapping) else {}
    parts = [
        _node_ratings(
            getattr(scheme, "node_scheme", None), want.get("node_annotations"), got.get("node_annotations")
        ),
        _path(want.get("selected_path"), got.get("selected_path")),
        _comparisons(
            getattr(scheme, "comparison_labels", []),
            want.get("branch_comparisons"),
            got.get("branch_comparisons"),
        ),
    ]
    return _mean([part for part in parts if part is not None])


def _node_ratings(node_scheme: Scheme | None, expected: Any, given: Any) -> float | None:
    if node_scheme is None or not isinstance(expected, Mapping) or not expected:
        return None
    got = given if isinstance(given, Mapping) else {}
    scores = [scheme_score(node_scheme, answer, got.get(node)) for node, answer in expected.items()]
    return _mean([score for score in scores if score is not None])


def _path(expected: Any, given: Any) -> float | None:
    if not isinstance(expected, list) or not expected:
        return None
    got = given if isinstance(given, list) else []
    shared = 0
    for want, answer in zip(expected, got, strict=False):
        if want != answer:
            break
        shared += 1
    return shared / max(len(expected), len(got))


def _comparisons(labels: list[str], expected: Any, given: Any) -> float | None:
    if not isinstance(expected, Mapping):
        return None
    got = given if isinstance(given, Mapping) else {}
    scores = []
    for parent, comparison in expected.items():
        answer = got.get(parent) if isinstance(got.get(parent), Mapping) else {}
        if comparison.get("pairs"):
            scores.append(_pairs(labels, comparison["pairs"], answer.get("pairs") or []))
        elif comparison.get("ranking"):
            scores.append(_ranking(comparison["ranking"], answer.get("ranking") or []))
    return _mean(scores)


def _pairs(labels: list[str], expected: list[Mapping[str, str]], given: list[Mapping[str, str]]) -> float:
    mirror = dict(zip(labels, reversed(labels), strict=True))
    answers = {(pair["a"], pair["b"]): pair["label"] for pair in given}
    right = 0
    for pair in expected:
        same_way = answers.get((pair["a"], pair["b"])) == pair["label"]
        other_way = answers.get((pair["b"], pair["a"]), object()) == mirror.get(pair["label"])
        right += same_way or other_way
    return right / len(expected)


def _ranking(expected: list[str], given: list[str]) -> float:
    if len(expected) < 2:
        return 1.0 if list(given) == list(expected) else 0.0
    place = {node: index for index, node in enumerate(given)}
    pairs = list(combinations(expected, 2))
    same = sum(
        1 for first, second in pairs if first in place and second in place and place[first] < place[second]
    )
    return same / len(pairs)
