"""Ranking consensus: Tideman's ranked pairs, with a deterministic tie rule.

``ranked_pairs(rankings)`` takes rankings best first and returns the
consensus best first (index = rank, 0 = best), over the candidates that
every ranking contains — as Open-Assistant scores sibling replies, whose
rankers may have seen different sets (a reply deleted meanwhile).

1. For each pair of candidates count the rankings that put one above the
   other; the pair with more votes is a majority, its strength the margin.
2. Lock majorities strongest first, skipping any that would close a cycle
   with those already locked.
3. Read the order off the locked graph: repeatedly take a candidate that no
   remaining candidate beats.

Tie rule. The first ranking given is the tie-breaking ranking (Zavist and
Tideman's TBRC, taken as the first ballot rather than drawn at random, so the
result never varies between runs):

* majorities of equal margin are locked in the order of their winners in it,
  and for one winner, the pair with the lower-placed loser first;
* a pair with no majority (a tie in votes) locks nothing;
* when several candidates are unbeaten at step 3, the one placed higher in
  it comes first.

So unanimous rankings come back unchanged, and a perfect tie (or a cycle of
equal strengths) resolves the way the first ranker ordered it. Plain Python,
no database.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations


def common_candidates(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The candidates every ranking lists, in the order of the first."""
    if not rankings:
        return []
    others = [set(ranking) for ranking in rankings[1:]]
    return [candidate for candidate in rankings[0] if all(candidate in other for other in others)]


def ranked_pairs(rankings: list[list[str]]) -> list[str]:
    """The ranked-pairs consensus of ``rankings`` (each best first), best first.

    Raises ValueError when a ranking lists a candidate twice.
    """
    for number, ranking in enumerate(rankings, start=1):
        seen: set[str] = set()
        for candidate in ranking:
            if candidate in seen:
                raise ValueError(f'ranking {number} lists "{candidate}" twice')
            seen.add(candidate)
    tie_break = common_candidates(rankings)
    if len(tie_break) < 2:
        return tie_break
    place = {candidate: index for index, candidate in enumerate(tie_break)}
    wins = _pairwise_wins(rankings, place)

    majorities = []
    for a, b in combinations(tie_break, 2):
        ab, ba = wins[(a, b)], wins[(b, a)]
        if ab != ba:
            winner, loser = (a, b) if ab > ba else (b, a)
            majorities.append((abs(ab - ba), winner, loser))
    majorities.sort(key=lambda pair: (-pair[0], place[pair[1]], -place[pair[2]]))

    beats: dict[str, set[str]] = {candidate: set() for candidate in tie_break}
    for _, winner, loser in majorities:
        if not _reaches(beats, loser, winner):
            beats[winner].add(loser)

    beaten_by = {candidate: 0 for candidate in tie_break}
    for losers in beats.values():
        for loser in losers:
            beaten_by[loser] += 1
    order: list[str] = []
    remaining = list(tie_break)  # kept in tie-break order
    while remaining:
        chosen = next(candidate for candidate in remaining if beaten_by[candidate] == 0)
        remaining.remove(chosen)
        order.append(chosen)
        for loser in beats[chosen]:
            beaten_by[loser] -= 1
    return order


def _pairwise_wins(rankings: Sequence[Sequence[str]], place: dict[str, int]) -> dict[tuple[str, str], int]:
    """``wins[(a, b)]``: how many rankings put ``a`` above ``b`` (over the common candidates)."""
    wins = {(a, b): 0 for a in place for b in place if a != b}
    for ranking in rankings:
        kept = [candidate for candidate in ranking if candidate in place]
        for above, below in combinations(kept, 2):
            wins[(above, below)] += 1
    return wins


def _reaches(beats: dict[str, set[str]], start: str, goal: str) -> bool:
    """Whether the locked graph leads from ``start`` to ``goal`` (so locking goal over start
    would close a cycle)."""
    stack, seen = [start], {start}
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        for nxt in beats[node]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False
