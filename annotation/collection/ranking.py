"""Ranking consensus: Tideman's ranked pairs, computed as Open-Assistant computes it.

``ranked_pairs(rankings)`` takes rankings best first and returns the
consensus best first (index = rank, 0 = best).

1. Tally: for each pair of candidates, count the rankings that put one above
   the other. A ranking need not list every candidate: the ones it leaves out
   count as tied with each other below the ones it lists (the usual
   definition: "unstated candidates are equally worse than the stated ones").
2. Sort: every ordered pair (a, b) whose margin (a over b, minus b over a) is
   zero or more, strongest margin first.
3. Lock each pair in turn unless it would close a cycle with those locked.
4. Read the order off the locked graph: repeatedly take a candidate that no
   remaining candidate beats.

Ties, as Open-Assistant's ``oasst_backend/utils/ranking.py`` has them, so a
tree scored here gets the ranks it would get there:

* candidates are ordered by their ids (sorted), and pairs of equal margin are
  locked in that order (by winner, then loser);
* a pair with no majority (a tie in votes) is locked too, both ways in that
  order, so the first way wins unless it closes a cycle: of two candidates
  nobody separates, the one with the smaller id comes first;
* when several candidates are unbeaten at step 4, the one with the smaller id
  comes first — where Open-Assistant has no rule (its code then drops a
  candidate and fails), this is ours.

So a candidate no locked pair beats never comes after one that a locked pair
beats, and the result never depends on the order the rankings came in.
Open-Assistant ranks only the replies every ranker saw
(``collection.scoring`` filters the rankings so); this function takes any.
Plain Python, no database.
"""

from __future__ import annotations

from collections.abc import Sequence


def common_candidates(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The candidates every ranking lists, in the order of the first."""
    if not rankings:
        return []
    others = [set(ranking) for ranking in rankings[1:]]
    return [candidate for candidate in rankings[0] if all(candidate in other for other in others)]


def ranked_pairs(rankings: Sequence[Sequence[str]]) -> list[str]:
    """The ranked-pairs consensus of ``rankings`` (each best first, each any subset of the
    candidates), best first, over every candidate any ranking lists.

    Raises ValueError when a ranking lists a candidate twice.
    """
    for number, ranking in enumerate(rankings, start=1):
        if len(set(ranking)) != len(ranking):
            twice = next(candidate for candidate in ranking if list(ranking).count(candidate) > 1)
            raise ValueError(f'ranking {number} lists "{twice}" twice')
    candidates = sorted({candidate for ranking in rankings for candidate in ranking})
    if len(candidates) < 2:
        return candidates
    margin = pairwise_margins(rankings, candidates)

    # Every ordered pair with a margin of zero or more, built winner-major in id order and
    # sorted stably: equal margins keep that order.
    pairs = [(a, b) for a in candidates for b in candidates if a != b and margin[(a, b)] >= 0]
    pairs.sort(key=lambda pair: -margin[pair])

    beats: dict[str, set[str]] = {candidate: set() for candidate in candidates}
    for winner, loser in pairs:
        if not _reaches(beats, loser, winner):
            beats[winner].add(loser)

    beaten_by = {candidate: 0 for candidate in candidates}
    for losers in beats.values():
        for loser in losers:
            beaten_by[loser] += 1
    order: list[str] = []
    remaining = list(candidates)  # in id order
    while remaining:
        chosen = next(candidate for candidate in remaining if beaten_by[candidate] == 0)
        remaining.remove(chosen)
        order.append(chosen)
        for loser in beats[chosen]:
            beaten_by[loser] -= 1
    return order


def pairwise_margins(
    rankings: Sequence[Sequence[str]], candidates: Sequence[str]
) -> dict[tuple[str, str], int]:
    """``margin[(a, b)]``: how many rankings put ``a`` above ``b``, less how many put ``b``
    above ``a``; a candidate a ranking lists is above every one it leaves out."""
    wins = {(a, b): 0 for a in candidates for b in candidates if a != b}
    for ranking in rankings:
        listed = set(ranking)
        unlisted = [candidate for candidate in candidates if candidate not in listed]
        for index, above in enumerate(ranking):
            for below in ranking[index + 1 :]:
                wins[(above, below)] += 1
            for below in unlisted:
                wins[(above, below)] += 1
    return {(a, b): wins[(a, b)] - wins[(b, a)] for (a, b) in wins}


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
