"""Ranking consensus: Tideman's ranked pairs over the rankers' common candidates,
best first, with the first ranking breaking ties (annotation.workflow.ranking)."""

import json
from pathlib import Path

import pytest

from annotation.collection.ranking import common_candidates, ranked_pairs

TENNESSEE = Path(__file__).resolve().parents[2] / "fixtures" / "ranking" / "tennessee_ranked_pairs.json"


def ballots(fixture: dict) -> list[list[str]]:
    return [list(ballot["ranking"]) for ballot in fixture["ballots"] for _ in range(ballot["count"])]


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
        # A perfect tie: the first ranking decides.
        ([["a", "b"], ["b", "a"]], ["a", "b"]),
        ([["b", "a"], ["a", "b"]], ["b", "a"]),
        # A tie between two of three: c is last for both; a and b as the first ranker put them.
        ([["b", "a", "c"], ["a", "b", "c"]], ["b", "a", "c"]),
        # Each pair 2:2 — no majority at all — so the first ranking is the consensus.
        ([["c", "a", "b"], ["b", "a", "c"], ["a", "b", "c"], ["c", "b", "a"]], ["c", "a", "b"]),
    ],
)
def test_ties_are_broken_by_the_first_ranking(rankings, consensus):
    assert ranked_pairs(rankings) == consensus


def test_a_cycle_drops_its_weakest_majority():
    # a>b by 5 (7:2), b>c by 3 (6:3), c>a by 1 (5:4): a Condorcet cycle. Locking a>b and b>c
    # first, c>a would close the cycle and is skipped.
    rankings = [["a", "b", "c"]] * 4 + [["b", "c", "a"]] * 2 + [["c", "a", "b"]] * 3

    assert ranked_pairs(rankings) == ["a", "b", "c"]


def test_a_cycle_of_equal_strengths_resolves_as_the_first_ranker_ordered_it():
    # a>b, b>c, c>a, each 2:1.
    rock_paper_scissors = [["b", "c", "a"], ["a", "b", "c"], ["c", "a", "b"]]

    assert ranked_pairs(rock_paper_scissors) == ["b", "c", "a"]
    assert ranked_pairs(rock_paper_scissors[1:] + rock_paper_scissors[:1]) == ["a", "b", "c"]


def test_only_the_candidates_every_ranker_saw_are_ranked():
    # "d" was deleted before the second and third rankers saw the siblings.
    rankings = [["d", "a", "b", "c"], ["c", "b", "a"], ["c", "a", "b"]]

    assert common_candidates(rankings) == ["a", "b", "c"]
    assert ranked_pairs(rankings) == ["c", "a", "b"]


def test_a_ranking_that_lists_a_candidate_twice_is_refused():
    with pytest.raises(ValueError, match='ranking 2 lists "a" twice'):
        ranked_pairs([["a", "b"], ["a", "b", "a"]])


def test_the_result_is_always_a_permutation_of_the_common_candidates():
    import random

    rng = random.Random(7)
    for _ in range(200):
        candidates = [f"m{index}" for index in range(rng.randint(2, 6))]
        rankings = [rng.sample(candidates, len(candidates)) for _ in range(rng.randint(1, 7))]
        consensus = ranked_pairs(rankings)
        assert sorted(consensus) == sorted(candidates)
        assert ranked_pairs(rankings) == consensus  # deterministic
