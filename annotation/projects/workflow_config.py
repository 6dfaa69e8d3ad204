"""The ``workflow:`` section of a project's YAML: Open-Assistant's tree-manager settings.

Names and defaults are Open-Assistant's (``TreeManagerConfiguration`` in
``oasst_backend/config.py``), so a config written for it reads the same
here. Two keys are ours: ``default_lang`` (the language of a prompt whose
author does not say) and ``max_message_chars`` (Open-Assistant's
``MESSAGE_SIZE_LIMIT``, a server setting there). Errors name the key path,
like every config error: ``workflow.max_children_count: must be an integer ≥ 1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from annotation.problems import Problems, describe, join, nearest
from annotation.projects import text_labels as labels

SECTION = "workflow"
LABEL_LISTS = ("labels_initial_prompt", "labels_assistant_reply", "labels_prompter_reply")
MANDATORY_LISTS = (
    "mandatory_labels_initial_prompt",
    "mandatory_labels_assistant_reply",
    "mandatory_labels_prompter_reply",
)


@dataclass(frozen=True)
class WorkflowConfig:
    max_active_trees: int = 10
    max_initial_prompt_review: int = 100
    max_prompt_lottery_waiting: int = 250
    max_tree_depth: int = 3
    max_children_count: int = 3
    num_prompter_replies: int = 1
    goal_tree_size: int = 12
    random_goal_tree_size: bool = False
    min_goal_tree_size: int = 5
    num_reviews_initial_prompt: int = 3
    num_reviews_reply: int = 3
    acceptance_threshold_initial_prompt: float = 0.6
    acceptance_threshold_reply: float = 0.6
    num_required_rankings: int = 3
    rank_prompter_replies: bool = False
    lonely_children_count: int = 2
    p_lonely_child_extension: float = 0.75
    p_full_labeling_review_prompt: float = 1.0
    p_full_labeling_review_reply_assistant: float = 0.5
    p_full_labeling_review_reply_prompter: float = 0.25
    p_activate_backlog_tree: float = 0.1
    min_active_rankings_per_lang: int = 0
    max_pending_tasks_per_user: int = 8
    recent_tasks_span_sec: int = 300
    auto_mod_enabled: bool = True
    auto_mod_red_flags: int = 4
    auto_mod_max_skip_reply: int = 25
    labels_initial_prompt: tuple[str, ...] = labels.DEFAULT_LABELS_INITIAL_PROMPT
    labels_assistant_reply: tuple[str, ...] = labels.DEFAULT_LABELS_ASSISTANT_REPLY
    labels_prompter_reply: tuple[str, ...] = labels.DEFAULT_LABELS_PROMPTER_REPLY
    mandatory_labels_initial_prompt: tuple[str, ...] = labels.DEFAULT_MANDATORY
    mandatory_labels_assistant_reply: tuple[str, ...] = labels.DEFAULT_MANDATORY
    mandatory_labels_prompter_reply: tuple[str, ...] = labels.DEFAULT_MANDATORY
    default_lang: str = "en"
    max_message_chars: int = 10_000

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}

    def reviews_required(self, *, root: bool) -> int:
        return self.num_reviews_initial_prompt if root else self.num_reviews_reply

    def acceptance_threshold(self, *, root: bool) -> float:
        return self.acceptance_threshold_initial_prompt if root else self.acceptance_threshold_reply


KEYS = tuple(f.name for f in fields(WorkflowConfig))
_DEFAULTS = WorkflowConfig()
# Keys that may be 0 (a count that can be switched off: 0 prompts under review stops new
# prompts); other integers must be ≥ 1.
_MAY_BE_ZERO = frozenset(
    {
        "min_active_rankings_per_lang",
        "lonely_children_count",
        "max_initial_prompt_review",
        "max_prompt_lottery_waiting",
    }
)
_PROBABILITIES = frozenset(
    {
        "p_lonely_child_extension",
        "p_full_labeling_review_prompt",
        "p_full_labeling_review_reply_assistant",
        "p_full_labeling_review_reply_prompter",
        "p_activate_backlog_tree",
    }
)
_THRESHOLDS = frozenset({"acceptance_threshold_initial_prompt", "acceptance_threshold_reply"})


def tree_capacity(*, max_depth: int, max_children_count: int, num_prompter_replies: int) -> int:
    """The most messages a tree can hold: a prompt, then at each level up to ``max_children_count``
    assistant replies per prompter message and ``num_prompter_replies`` prompter replies per
    assistant message, down to depth ``max_depth``."""
    total, level, prompter_level = 1, 1, True
    for _ in range(max_depth):
        level *= max_children_count if prompter_level else min(num_prompter_replies, max_children_count)
        total += level
        prompter_level = not prompter_level
    return total


def parse_workflow(raw: Any, problems: Problems) -> WorkflowConfig:
    """The section's settings over Open-Assistant's defaults; problems are added with their paths."""
    if raw is None:
        return _DEFAULTS
    if not isinstance(raw, Mapping):
        problems.add(
            SECTION, f"must be a mapping of Open-Assistant's tree-manager settings, got {describe(raw)}"
        )
        return _DEFAULTS
    problems.check_keys(raw, SECTION, KEYS)
    values: dict[str, Any] = {}
    before = len(problems.items)
    for key in KEYS:
        if key not in raw:
            continue
        value = _read(key, raw[key], join(SECTION, key), problems)
        if value is not None:
            values[key] = value
    if len(problems.items) > before:
        return _DEFAULTS
    config = WorkflowConfig(**values)
    _check_together(config, problems)
    return config if len(problems.items) == before else _DEFAULTS


def _read(key: str, value: Any, path: str, problems: Problems) -> Any:
    default = getattr(_DEFAULTS, key)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            problems.add(path, f"must be true or false, got {describe(value)}")
            return None
        return value
    if isinstance(default, int):
        low = 0 if key in _MAY_BE_ZERO else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            problems.add(path, f"must be an integer ≥ {low}")
            return None
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.add(path, f"must be a number, got {describe(value)}")
            return None
        if key in _PROBABILITIES and not 0 <= value <= 1:
            problems.add(path, f"is a probability: from 0 to 1, got {value:g}")
            return None
        if key in _THRESHOLDS and not -1 <= value <= 1:
            problems.add(path, f"must be from -1 to 1 (acceptance scores lie there), got {value:g}")
            return None
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str) or not value.strip():
            problems.add(path, f"must be a non-empty string, got {describe(value)}")
            return None
        return value.strip()
    return _label_list(value, path, problems)


def _label_list(value: Any, path: str, problems: Problems) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not value:
        problems.add(path, f"must be a non-empty list of labels, got {describe(value)}")
        return None
    names: list[str] = []
    ok = True
    for index, name in enumerate(value):
        where = join(path, index)
        if not isinstance(name, str) or name not in labels.LABELS:
            suggestion = nearest(str(name), labels.LABELS) if isinstance(name, str) else None
            hint = f' (did you mean "{suggestion}"?)' if suggestion else ""
            shown = f'"{name}"' if isinstance(name, str) else describe(name)
            problems.add(where, f"unknown label {shown}{hint}; expected one of {', '.join(labels.LABELS)}")
            ok = False
        elif name in names:
            problems.add(where, f'"{name}" is listed twice')
            ok = False
        else:
            names.append(name)
    return tuple(names) if ok else None


def _check_together(config: WorkflowConfig, problems: Problems) -> None:
    for listed, mandatory in zip(LABEL_LISTS, MANDATORY_LISTS, strict=True):
        required = getattr(config, mandatory)
        if "spam" not in required:
            problems.add(join(SECTION, mandatory), "must include spam: acceptance is computed from it")
        offered = getattr(config, listed)
        missing = [name for name in required if name not in offered]
        if missing:
            problems.add(
                join(SECTION, listed),
                f"must include the mandatory labels ({', '.join(missing)} missing, see {mandatory})",
            )
    if config.random_goal_tree_size and config.min_goal_tree_size > config.goal_tree_size:
        problems.add(
            join(SECTION, "min_goal_tree_size"),
            f"must not exceed goal_tree_size ({config.goal_tree_size})",
        )
    capacity = tree_capacity(
        max_depth=config.max_tree_depth,
        max_children_count=config.max_children_count,
        num_prompter_replies=config.num_prompter_replies,
    )
    if config.goal_tree_size > capacity:
        problems.add(
            join(SECTION, "goal_tree_size"),
            f"{config.goal_tree_size} messages cannot fit in a tree of depth {config.max_tree_depth} with "
            f"at most {config.max_children_count} {'reply' if config.max_children_count == 1 else 'replies'} "
            f"per message (at most {capacity}): "
            "its trees would never stop growing",
        )
