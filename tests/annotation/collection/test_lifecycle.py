"""A collected tree's states and moves (annotation.workflow.lifecycle), as tables:
every legal move, the illegal ones refused, acceptance strictly above the
threshold, and the automatic moves a tree's facts imply."""

import pytest

from annotation.collection import lifecycle
from annotation.collection.lifecycle import (
    TERMINAL_STATES,
    IllegalTransition,
    TreeFacts,
    acceptance_score,
    advance,
    review_verdict,
    transition,
)
from trees.vocabulary import TREE_STATES

# (state, event, next state): the whole table, written out.
MOVES = [
    ("initial_prompt_review", "prompt_accepted", "prompt_lottery_waiting"),
    ("initial_prompt_review", "prompt_rejected", "aborted_low_grade"),
    ("initial_prompt_review", "red_flagged", "aborted_low_grade"),
    ("prompt_lottery_waiting", "lottery_won", "growing"),
    ("growing", "goal_reached", "ranking"),
    ("growing", "red_flagged", "aborted_low_grade"),
    ("growing", "all_deleted", "halted_by_moderator"),
    ("ranking", "rankings_complete", "ready_for_scoring"),
    ("ready_for_scoring", "scored", "ready_for_export"),
    ("ready_for_scoring", "scoring_error", "scoring_failed"),
    ("scoring_failed", "retry", "ready_for_scoring"),
    ("scoring_failed", "retry_incomplete", "ranking"),
    ("backlog_ranking", "backlog_activated", "ranking"),
    ("backlog_ranking", "backlog_empty", "aborted_low_grade"),
    ("halted_by_moderator", "resume", "growing"),
    ("halted_by_moderator", "resume_unreviewed", "initial_prompt_review"),
    *[(state, "halt", "halted_by_moderator") for state in TREE_STATES if state != "halted_by_moderator"],
]


@pytest.mark.parametrize(("state", "event", "after"), MOVES)
def test_legal_moves(state, event, after):
    assert transition(state, event) == after


def test_the_table_holds_exactly_these_moves():
    assert {(state, event) for state, event, _ in MOVES} == set(lifecycle.TRANSITIONS)


@pytest.mark.parametrize(
    ("state", "event"),
    [
        ("growing", "prompt_accepted"),  # a prompt is reviewed before its tree grows
        ("prompt_lottery_waiting", "goal_reached"),
        ("ranking", "goal_reached"),
        ("ready_for_export", "scored"),  # scoring happens once
        ("ready_for_export", "resume"),  # only a halted tree resumes
        ("halted_by_moderator", "halt"),
        ("aborted_low_grade", "lottery_won"),
        ("scoring_failed", "scored"),  # a retry goes through ready_for_scoring again
    ],
)
def test_illegal_moves_are_refused(state, event):
    with pytest.raises(IllegalTransition, match=f'a tree in state "{state}" cannot take "{event}"'):
        transition(state, event)


@pytest.mark.parametrize(
    ("state", "active"),
    [
        ("initial_prompt_review", True),
        ("prompt_lottery_waiting", False),
        ("growing", True),
        ("ranking", True),
        ("ready_for_scoring", True),
        ("ready_for_export", False),
        ("scoring_failed", False),
        ("aborted_low_grade", False),
        ("halted_by_moderator", False),
        ("backlog_ranking", False),
    ],
)
def test_terminal_states_make_a_tree_inactive(state, active):
    assert lifecycle.is_active(state) is active
    assert (state in TERMINAL_STATES) is not active


# -- acceptance -----------------------------------------------------------------------

NO = {"spam": 0.0, "lang_mismatch": 0.0}
SPAM = {"spam": 1.0, "lang_mismatch": 0.0}
WRONG_LANGUAGE = {"spam": 0.0, "lang_mismatch": 1.0}


@pytest.mark.parametrize(
    ("reviews", "score"),
    [
        ([NO, NO, NO], 1.0),
        ([SPAM, NO, NO], 2 / 3),
        ([SPAM, WRONG_LANGUAGE, NO], 1 / 3),
        ([SPAM, SPAM, NO], 1 / 3),
        ([{"spam": 0.0}, {"spam": 0.0}], 1.0),  # lang_mismatch left out counts as 0
        ([{"spam": 1.0, "lang_mismatch": 1.0}], -1.0),
    ],
)
def test_acceptance_is_one_minus_mean_spam_minus_mean_lang_mismatch(reviews, score):
    assert acceptance_score(reviews) == pytest.approx(score)


@pytest.mark.parametrize(
    ("reviews", "required", "threshold", "verdict"),
    [
        ([NO, NO], 3, 0.6, None),  # not all reviews in yet
        ([NO, NO, NO], 3, 0.6, True),
        ([SPAM, NO, NO], 3, 0.6, True),  # 0.667 > 0.6
        ([SPAM, SPAM, NO], 3, 0.6, False),  # 0.333
        # Strictly above: a score equal to the threshold is a rejection.
        ([SPAM, NO, NO, NO, NO], 5, 0.8, False),
        ([SPAM, NO, NO, NO, NO], 5, 0.79, True),
    ],
)
def test_a_message_is_accepted_when_its_score_is_strictly_above_the_threshold(
    reviews, required, threshold, verdict
):
    assert review_verdict(reviews=reviews, required=required, threshold=threshold) is verdict


# -- automatic moves ---------------------------------------------------------------------


def facts(state, **overrides):
    values = {
        "state": state,
        "goal_tree_size": 5,
        "root_verdict": True,
        "messages": 5,
        "accepted": 5,
        "awaiting_review": 0,
        "rankings_done": (),
        "required_rankings": 3,
    }
    return TreeFacts(**(values | overrides))


@pytest.mark.parametrize(
    ("tree", "events"),
    [
        # The prompt's reviews decide: accepted prompts wait for the lottery, rejected ones abort.
        (facts("initial_prompt_review", root_verdict=None), []),
        (facts("initial_prompt_review", root_verdict=True), ["prompt_accepted"]),
        (facts("initial_prompt_review", root_verdict=False), ["prompt_rejected"]),
        # Growing until the accepted messages reach the goal and nothing awaits review.
        (facts("growing", accepted=4, messages=4), []),
        (facts("growing", accepted=5, messages=6, awaiting_review=1), []),
        (facts("growing", accepted=5, rankings_done=(0,)), ["goal_reached"]),
        (facts("growing", accepted=6, messages=7, rankings_done=(1, 3)), ["goal_reached"]),
        # Nothing to rank: checked on entering ranking, so the tree never sticks there.
        (facts("growing", rankings_done=()), ["goal_reached", "rankings_complete"]),
        (facts("growing", accepted=0, messages=0, root_verdict=None), ["all_deleted"]),
        # Ranked once every sibling group has its rankings.
        (facts("ranking", rankings_done=(3, 2)), []),
        (facts("ranking", rankings_done=(3, 3)), ["rankings_complete"]),
        (facts("ranking", rankings_done=(4,), required_rankings=4), ["rankings_complete"]),
        (facts("ranking", rankings_done=()), ["rankings_complete"]),
        # Other states move only by people (the lottery, moderators) or by scoring.
        (facts("prompt_lottery_waiting"), []),
        (facts("ready_for_scoring"), []),
        (facts("ready_for_export"), []),
        (facts("halted_by_moderator"), []),
        (facts("aborted_low_grade"), []),
    ],
)
def test_what_a_trees_facts_imply(tree, events):
    assert advance(tree) == events


def test_a_halted_tree_resumes_where_the_lottery_left_it():
    assert transition("halted_by_moderator", lifecycle.resume_event(won_lottery=True)) == "growing"
    assert (
        transition("halted_by_moderator", lifecycle.resume_event(won_lottery=False))
        == "initial_prompt_review"
    )
