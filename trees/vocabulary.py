"""The words a tree is made of: message roles and tree states.

Plain Python so that the formats (which must not touch the ORM) and the models
share one definition.
"""

USER = "user"
ASSISTANT = "assistant"
SYSTEM = "system"
ROLES = (USER, ASSISTANT, SYSTEM)

# What other tools call the same roles. Open-Assistant's "prompter" is our user.
ROLE_ALIASES = {
    "user": USER,
    "human": USER,
    "prompter": USER,
    "assistant": ASSISTANT,
    "bot": ASSISTANT,
    "model": ASSISTANT,
    "gpt": ASSISTANT,
    "system": SYSTEM,
}


def normalize_role(value: str) -> str | None:
    """The canonical role for ``value`` (case-insensitive), or None if unknown."""
    return ROLE_ALIASES.get(value.strip().lower())


def describe_roles() -> str:
    aliases = sorted(alias for alias in ROLE_ALIASES if alias not in ROLES)
    return f"{', '.join(ROLES)} (or {', '.join(aliases)})"


# Open-Assistant's message tree states (oasst_backend/models/message_tree_state.py).
INITIAL_PROMPT_REVIEW = "initial_prompt_review"
PROMPT_LOTTERY_WAITING = "prompt_lottery_waiting"
GROWING = "growing"
RANKING = "ranking"
READY_FOR_SCORING = "ready_for_scoring"
READY_FOR_EXPORT = "ready_for_export"
SCORING_FAILED = "scoring_failed"
ABORTED_LOW_GRADE = "aborted_low_grade"
HALTED_BY_MODERATOR = "halted_by_moderator"
BACKLOG_RANKING = "backlog_ranking"
TREE_STATES = (
    INITIAL_PROMPT_REVIEW,
    PROMPT_LOTTERY_WAITING,
    GROWING,
    RANKING,
    READY_FOR_SCORING,
    READY_FOR_EXPORT,
    SCORING_FAILED,
    ABORTED_LOW_GRADE,
    HALTED_BY_MODERATOR,
    BACKLOG_RANKING,
)
# An imported tree is complete: nothing grows it any more.
IMPORTED_TREE_STATE = READY_FOR_EXPORT
