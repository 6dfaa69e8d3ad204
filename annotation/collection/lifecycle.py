"""A collected tree's states and the moves between them, as plain data and functions.

Open-Assistant's states (``trees.vocabulary``) and its rules
(``tree_manager.py``), without the database: the services load a tree's
facts, ask ``advance`` which events they imply, and apply each through
``transition``. Every move is a row of ``TRANSITIONS``; anything else is
an ``IllegalTransition``.

::

    initial_prompt_review ──prompt_accepted──▶ prompt_lottery_waiting ──lottery_won──▶ growing
            │ prompt_rejected / red_flagged                                              │ goal_reached
            ▼                                                                            ▼
    aborted_low_grade ◀──red_flagged── growing          backlog_ranking ──activated──▶ ranking
                                                                                         │ rankings_complete
    ready_for_export ◀──scored── ready_for_scoring ◀─────────────────────────────────────┘
                                   │ scoring_error        ▲ retry
                                   ▼                      │
                                 scoring_failed ──────────┘  (──retry_incomplete──▶ ranking)

    any state ──halt──▶ halted_by_moderator ──resume──▶ growing (after the lottery) or initial_prompt_review
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trees.vocabulary import (
    ABORTED_LOW_GRADE,
    BACKLOG_RANKING,
    GROWING,
    HALTED_BY_MODERATOR,
    INITIAL_PROMPT_REVIEW,
    PROMPT_LOTTERY_WAITING,
    RANKING,
    READY_FOR_EXPORT,
    READY_FOR_SCORING,
    SCORING_FAILED,
    TREE_STATES,
)

# Open-Assistant's TERMINAL_STATES: a tree in one of them is inactive — no task is handed
# out on it — until something moves it on (the lottery, a moderator, a retry).
TERMINAL_STATES = frozenset(
    {
        READY_FOR_EXPORT,
        ABORTED_LOW_GRADE,
        SCORING_FAILED,
        HALTED_BY_MODERATOR,
        BACKLOG_RANKING,
        PROMPT_LOTTERY_WAITING,
    }
)
ACTIVE_STATES = frozenset(TREE_STATES) - TERMINAL_STATES

# Events, by what causes them.
PROMPT_ACCEPTED = "prompt_accepted"  # the prompt's reviews are in and it passed
PROMPT_REJECTED = "prompt_rejected"  # ... and it failed
RED_FLAGGED = "red_flagged"  # the prompt drew auto_mod_red_flags reports
LOTTERY_WON = "lottery_won"  # the prompt lottery drew it
GOAL_REACHED = "goal_reached"  # enough accepted messages, none awaiting review
ALL_DELETED = "all_deleted"  # moderators deleted every message
RANKINGS_COMPLETE = "rankings_complete"  # every sibling group has its rankings
SCORED = "scored"  # ranked pairs set the ranks
SCORING_ERROR = "scoring_error"  # ... or failed
RETRY = "retry"  # a moderator retries a failed scoring whose rankings are complete
RETRY_INCOMPLETE = "retry_incomplete"  # ... whose rankings are not (any more)
BACKLOG_ACTIVATED = "backlog_activated"  # an imported tree is taken up for ranking
BACKLOG_EMPTY = "backlog_empty"  # ... but it has nothing to rank
HALT = "halt"  # a moderator (or auto-moderation) halts the tree
RESUME = "resume"  # a moderator resumes it: back to growing if it had won the lottery
RESUME_UNREVIEWED = "resume_unreviewed"  # ... or to its prompt's review if not

TRANSITIONS: dict[tuple[str, str], str] = {
    (INITIAL_PROMPT_REVIEW, PROMPT_ACCEPTED): PROMPT_LOTTERY_WAITING,
    (INITIAL_PROMPT_REVIEW, PROMPT_REJECTED): ABORTED_LOW_GRADE,
    (INITIAL_PROMPT_REVIEW, RED_FLAGGED): ABORTED_LOW_GRADE,
    (PROMPT_LOTTERY_WAITING, LOTTERY_WON): GROWING,
    (GROWING, GOAL_REACHED): RANKING,
    (GROWING, RED_FLAGGED): ABORTED_LOW_GRADE,
    (GROWING, ALL_DELETED): HALTED_BY_MODERATOR,
    (RANKING, RANKINGS_COMPLETE): READY_FOR_SCORING,
    (READY_FOR_SCORING, SCORED): READY_FOR_EXPORT,
    (READY_FOR_SCORING, SCORING_ERROR): SCORING_FAILED,
    (SCORING_FAILED, RETRY): READY_FOR_SCORING,
    (SCORING_FAILED, RETRY_INCOMPLETE): RANKING,
    (BACKLOG_RANKING, BACKLOG_ACTIVATED): RANKING,
    (BACKLOG_RANKING, BACKLOG_EMPTY): ABORTED_LOW_GRADE,
    **{(state, HALT): HALTED_BY_MODERATOR for state in TREE_STATES if state != HALTED_BY_MODERATOR},
    (HALTED_BY_MODERATOR, RESUME): GROWING,
    (HALTED_BY_MODERATOR, RESUME_UNREVIEWED): INITIAL_PROMPT_REVIEW,
}


class IllegalTransition(ValueError):
    def __init__(self, state: str, event: str):
        super().__init__(f'a tree in state "{state}" cannot take "{event}"')
        self.state = state
        self.event = event


def transition(state: str, event: str) -> str:
    """The state ``event`` moves a tree in ``state`` to; IllegalTransition if it may not."""
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(state, event) from None


def is_active(state: str) -> bool:
    return state not in TERMINAL_STATES


# -- reviews ------------------------------------------------------------------------


def acceptance_score(reviews: Sequence[Mapping[str, float]]) -> float:
    """``1 - mean(spam) - mean(lang_mismatch)`` over the reviews (a missing lang_mismatch is 0).

    Every review has ``spam`` (it is mandatory); with no reviews the score is 1.
    """
    if not reviews:
        return 1.0
    spam = sum(review["spam"] for review in reviews) / len(reviews)
    mismatch = sum(review.get("lang_mismatch") or 0.0 for review in reviews) / len(reviews)
    return 1.0 - spam - mismatch


def review_verdict(*, reviews: Sequence[Mapping[str, float]], required: int, threshold: float) -> bool | None:
    """Whether a message is accepted: None until ``required`` reviews are in, then whether its
    acceptance score is strictly above ``threshold``."""
    if len(reviews) < required:
        return None
    return acceptance_score(reviews) > threshold


# -- what a tree's facts imply --------------------------------------------------------


@dataclass(frozen=True)
class TreeFacts:
    """What decides a tree's automatic moves, counted over its messages that are not deleted."""

    state: str
    goal_tree_size: int
    root_verdict: bool | None  # the prompt's review result
    messages: int  # messages not deleted
    accepted: int  # ... accepted (the prompt included)
    awaiting_review: int  # ... not decided yet
    # For each parent with ≥ 2 accepted children of a ranked role: the rankings done of them.
    rankings_done: tuple[int, ...] = ()
    required_rankings: int = 3


def ranking_due(facts: TreeFacts) -> bool:
    """A growing tree is ranked once its accepted messages reach the goal and none awaits review."""
    return facts.accepted >= facts.goal_tree_size and facts.awaiting_review == 0


def scoring_due(facts: TreeFacts) -> bool:
    """Every sibling group has its rankings (vacuously true for a tree with nothing to rank)."""
    return all(done >= facts.required_rankings for done in facts.rankings_done)


def advance(facts: TreeFacts) -> list[str]:
    """The events the facts imply, in order, from the tree's current state.

    A tree entering ``ranking`` is checked for scoring at once, so a tree with
    nothing to rank goes straight on to ``ready_for_scoring``.
    """
    state, events = facts.state, []

    def take(event: str) -> None:
        nonlocal state
        state = transition(state, event)
        events.append(event)

    if state == INITIAL_PROMPT_REVIEW and facts.root_verdict is not None:
        take(PROMPT_ACCEPTED if facts.root_verdict else PROMPT_REJECTED)
    if state == GROWING:
        if facts.messages == 0:
            take(ALL_DELETED)
        elif ranking_due(facts):
            take(GOAL_REACHED)
    if state == RANKING and scoring_due(facts):
        take(RANKINGS_COMPLETE)
    return events


def resume_event(*, won_lottery: bool) -> str:
    """How a halted tree resumes: growing again if it had won the lottery, else back to review."""
    return RESUME if won_lottery else RESUME_UNREVIEWED
