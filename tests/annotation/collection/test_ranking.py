"""Ranking consensus: Tideman's ranked pairs as Open-Assistant computes it (annotation.collection.ranking).

- Published elections give their published order.
- Open-Assistant's own examples (``oasst_backend/utils/ranking.py``: its ``__main__`` ballots and
  its docstring's) give the order its ``ranked_pairs`` returns for them.
- Ties go as Open-Assistant has them: tied pairs lock too, in the order of the candidates' ids,
  so of two candidates nobody separates the smaller id comes first; never by the order of the
  rankings.
- A candidate no locked pair beats never comes after one that a locked pair beats.
- Rankings may list only some candidates: those left out are tied below those listed.
"""

import json
import random
from pathlib import Path

import pytest

from annotation.collection.ranking import common_candidates, pairwise_margins, ranked_pairs

TENNESSEE = Path(__file__).resolve().parents[2] / "fixtures" / "ranking" / "tennessee_ranked_pairs.json"

# Open-Assistant's example in oasst_backend/utils/ranking.py (__main__): four rankers, three replies.
C5, DC, D1 = (
    "c5181083-d3e9-41e7-a935-83fb9fa01488",
    "dcf3d179-0f34-4c15-ae21-b8feb15e422d",
    "d11705af-5575-43e5-b22e-08d155fbaa62",
)
OA_MAIN = [[C5, DC, D1], [D1, C5, DC], [DC, C5, D1], [D1, C5, DC]]


def ballots(fixture: dict) -> list[list[str]]:
    return [list(ballot["ranking"]) for ballot in fixture["ballots"] for _ in range(ballot["count"])]


def repeated(*groups: tuple[str, int]) -> list[list[str]]:
    """Ballots written as ("wxzy", 3): three rankings w > x > z > y."""
    return [list(order) for order, count in groups for _ in range(count)]


def test_the_tennessee_capital_election_gives_the_published_order():
    fixture = json.loads(TENNESSEE.read_text())

    assert (
        ranked_pairs(ballots(fixture))
        == fixture["published_order"]
        == [
            "Nashville",
            "Chattanooga",
            "Knoxville",
            "Memphis",
        ]
    )


def test_the_tennessee_order_does_not_depend_on_the_order_of_the_ballots():
    fixture = json.loads(TENNESSEE.read_text())

    assert ranked_pairs(list(reversed(ballots(fixture)))) == fixture["published_order"]


def test_open_assistants_own_example_gives_its_order():
    # c5 beats dc 3:1; c5-d1 and d1-dc are 2:2. Open-Assistant returns c5, d1, dc: d1, which
    # nothing beats, comes before dc, which c5 beats.
    assert ranked_pairs(OA_MAIN) == [C5, D1, DC]


@pytest.mark.parametrize(
    ("rankings", "consensus"),
    [
        # The docstring of Open-Assistant's ranked_pairs.
        (repeated(("wxzy", 3), ("wyxz", 2), ("xyzw", 4), ("xzwy", 5), ("ywxz", 1)), list("xzwy")),
        # The ballots left in a string in its __main__.
        (repeated(("wxzy", 1), ("wyxz", 2), ("xzwy", 5), ("ywxz", 1)), list("xzwy")),
    ],
)
def test_open_assistants_other_examples_give_its_order(rankings, consensus):
    assert ranked_pairs(rankings) == consensus


def test_a_candidate_nothing_beats_never_comes_after_a_beaten_one():
    consensus = ranked_pairs(OA_MAIN)
    margins = pairwise_margins(OA_MAIN, sorted({C5, DC, D1}))

    assert margins[(C5, DC)] == 2 and margins[(C5, D1)] == 0 and margins[(D1, DC)] == 0
    assert consensus.index(D1) < consensus.index(DC)


@pytest.mark.parametrize(
    ("rankings", "consensus"),
    [
        ([], []),
        ([["a"]], ["a"]),
        ([["b", "a", "c"]], ["b", "a", "c"]),
        ([["b", "a", "c"]] * 3, ["b", "a", "c"]),
        # Two to one: the majority wins.
        ([["a", "b"], ["b", "a"], ["b", "a"]], ["b", "a"]),
    ],
)
def test_unanimous_and_majority_rankings(rankings, consensus):
    assert ranked_pairs(rankings) == consensus


@pytest.mark.parametrize(
    ("rankings", "consensus"),
    [
        # A perfect tie: the smaller id first, whoever ranked first (Open-Assistant gives a, b both ways).
        ([["a", "b"], ["b", "a"]], ["a", "b"]),
        ([["b", "a"], ["a", "b"]], ["a", "b"]),
        # A tie between two of three: c is last for both; a and b by id.
        ([["b", "a", "c"], ["a", "b", "c"]], ["a", "b", "c"]),
        # Each pair 2:2 — no majority at all — so the ids decide every place.
        ([["c", "a", "b"], ["b", "a", "c"], ["a", "b", "c"], ["c", "b", "a"]], ["a", "b", "c"]),
        # Two reversed rankings of four.
        ([["d", "c", "b", "a"], ["a", "b", "c", "d"]], ["a", "b", "c", "d"]),
    ],
)
def test_ties_go_to_the_smaller_id_as_open_assistant_has_them(rankings, consensus):
    assert ranked_pairs(rankings) == consensus


def test_a_cycle_drops_its_weakest_majority():
    # a>b by 5 (7:2), b>c by 3 (6:3), c>a by 1 (5:4): a Condorcet cycle. Locking a>b and b>c
    # first, c>a would close the cycle and is skipped.
    rankings = [["a", "b", "c"]] * 4 + [["b", "c", "a"]] * 2 + [["c", "a", "b"]] * 3

    assert ranked_pairs(rankings) == ["a", "b", "c"]


def test_a_cycle_of_equal_strengths_resolves_by_id_whatever_the_order_of_the_rankings():
    # a>b, b>c, c>a, each 2:1: a>b locks first (the smaller winner id), then b>c; c>a would close it.
    rock_paper_scissors = [["b", "c", "a"], ["a", "b", "c"], ["c", "a", "b"]]

    assert ranked_pairs(rock_paper_scissors) == ["a", "b", "c"]
    assert ranked_pairs(rock_paper_scissors[1:] + rock_paper_scissors[:1]) == ["a", "b", "c"]


def test_partial_rankings_count_the_candidates_they_leave_out_as_tied_below():
    # The ballots of Wikipedia's ranked-pairs article (68 A>B, 72 B>C, 52 C>A), each listing two
    # of three candidates. Its rule, "unstated candidates are assumed to be equally worse than
    # the stated candidates", gives: A over B 68+52 to 72, B over C 68+72 to 52, C over A 72+52 to 68.
    rankings = [["A", "B"]] * 68 + [["B", "C"]] * 72 + [["C", "A"]] * 52

    assert pairwise_margins(rankings, ["A", "B", "C"]) == {
        ("A", "B"): 48,
        ("B", "A"): -48,
        ("B", "C"): 88,
        ("C", "B"): -88,
        ("A", "C"): -56,
        ("C", "A"): 56,
    }
    # B>C (88) and C>A (56) lock; A>B (48) would close a cycle.
    assert ranked_pairs(rankings) == ["B", "C", "A"]


def test_rankings_of_different_candidates_never_give_an_empty_consensus():
    # No two rankers listed the same candidate: a>b and c>d by one each, every other pair 1:1
    # (each ranker puts their own two above the other's), so the ties go by id.
    assert ranked_pairs([["a", "b"], ["c", "d"]]) == ["a", "b", "c", "d"]
    assert ranked_pairs([["x"], ["y"], ["y"]]) == ["y", "x"]


def test_the_common_candidates_are_the_ones_every_ranker_saw():
    # "d" was deleted before the second and third rankers saw the siblings (collection.scoring
    # ranks these only, as Open-Assistant does).
    rankings = [["d", "a", "b", "c"], ["c", "b", "a"], ["c", "a", "b"]]

    assert common_candidates(rankings) == ["a", "b", "c"]


def test_a_ranking_that_lists_a_candidate_twice_is_refused():
    with pytest.raises(ValueError, match='ranking 2 lists "a" twice'):
        ranked_pairs([["a", "b"], ["a", "b", "a"]])


def test_the_result_is_a_permutation_that_does_not_depend_on_the_order_of_the_rankings():
    rng = random.Random(7)
    for _ in range(300):
        candidates = [f"m{index}" for index in range(rng.randint(2, 6))]
        rankings = [rng.sample(candidates, rng.randint(1, len(candidates))) for _ in range(rng.randint(1, 7))]
        consensus = ranked_pairs(rankings)
        assert sorted(consensus) == sorted({c for ranking in rankings for c in ranking})
        assert ranked_pairs(list(reversed(rankings))) == consensus
