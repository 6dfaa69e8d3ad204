"""People's answers to a rubric: payload shapes, majority per criterion, agreement.

What one judge answers (the ``rubric`` scheme's payload, by the rubric's target)::

    conversation  {"criteria": {"correct_time": true, ...}, "note": "..."}
    path          {"path": ["root", "a1", "u2", "a2"], "criteria": {...}, "note": "..."}
    node          {"nodes": {"a1": {"criteria": {...}, "note": "..."}, ...}}

A path is a chain from the root, each message a reply to the one before; it
is judged as a unit named by its last message, like a node. ``criteria``
holds criteria and gates alike.

Several judges of one unit are combined per criterion by majority: more
"yes" than "no" holds; **a tie fails the criterion** (the rubric asks for
evidence that it holds, and an even split is not that). A criterion nobody
answered does not hold either, and says so. The raw votes are kept with each
result, so agreement can be measured later (``criterion_agreement`` here,
and the agreement module's coefficients).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Any

# unit key ("" for the conversation) → criterion → judge id → answer
Votes = dict[str, dict[str, dict[str, bool]]]


def payload_units(payload: Any, target: str) -> dict[str, dict[str, bool]]:
    """The answers in one judge's payload, by unit key (see the module docstring)."""
    if not isinstance(payload, Mapping):
        return {}
    if target == "conversation":
        return {"": _answers(payload.get("criteria"))}
    if target == "path":
        path = payload.get("path")
        if not isinstance(path, list) or not path:
            return {}
        return {str(path[-1]): _answers(payload.get("criteria"))}
    nodes = payload.get("nodes")
    if not isinstance(nodes, Mapping):
        return {}
    return {
        str(node): _answers(answer.get("criteria"))
        for node, answer in nodes.items()
        if isinstance(answer, Mapping)
    }


def _answers(criteria: Any) -> dict[str, bool]:
    if not isinstance(criteria, Mapping):
        return {}
    return {str(key): value for key, value in criteria.items() if isinstance(value, bool)}


def votes_collect(judgements: Iterable[tuple[str, Any]], target: str) -> Votes:
    """Gather ``(judge id, payload)`` pairs into votes by unit, criterion and judge."""
    votes: Votes = {}
    for judge, payload in judgements:
        for unit, answers in payload_units(payload, target).items():
            by_key = votes.setdefault(unit, {})
            for key, answer in answers.items():
                by_key.setdefault(key, {})[judge] = answer
    return votes


def majority(votes: Mapping[str, bool]) -> bool | None:
    """True when more judges said yes than no; False on a tie or more no; None with no votes."""
    if not votes:
        return None
    yes = sum(1 for answer in votes.values() if answer)
    return yes > len(votes) - yes


def vote_note(votes: Mapping[str, bool]) -> str:
    """How the judges voted, for the explanation: "2 of 3 judges said yes (tie fails)"."""
    if not votes:
        return "no judge answered"
    yes = sum(1 for answer in votes.values() if answer)
    total = len(votes)
    if total == 1:
        return "the judge said " + ("yes" if yes else "no")
    tie = " (a tie fails)" if yes * 2 == total else ""
    return f"{yes} of {total} judges said yes{tie}"


def criterion_agreement(votes: Mapping[str, bool]) -> float | None:
    """Observed agreement on one criterion of one unit: the share of judge pairs that agree
    (None with fewer than two judges)."""
    answers = list(votes.values())
    if len(answers) < 2:
        return None
    pairs = list(combinations(answers, 2))
    return sum(1 for a, b in pairs if a == b) / len(pairs)
