"""What a run that grows branches is asked to do, checked once for every door (the API, the
admin's form, the command): which endpoint, which turns, how many replies, the sampling
settings, the system prompt, and the budget.

``grow_request_parse`` reads plain data (JSON, a form's cleaned data, command options) and
returns a ``GrowRequest`` or raises ``GrowInvalid`` naming each bad key and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from evaluation.llm.models import ModelEndpoint
from trees.branches import NODES, RULES, UNANSWERED

MAX_REPLIES = 20
MAX_IDS = 10_000
MAX_ID_CHARS = 255
MAX_SYSTEM_PROMPT_CHARS = 20_000
KEYS = frozenset(
    {
        "endpoint",
        "rule",
        "nodes",
        "trees",
        "n",
        "temperature",
        "top_p",
        "max_tokens",
        "seed",
        "system_prompt",
        "budget_tokens",
        "budget_cost",
    }
)


class GrowInvalid(Exception):
    """Bad options: ``problems`` is a list of ``(key, why)``."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{key}: {why}" for key, why in problems))
        self.problems = problems


@dataclass(frozen=True)
class GrowRequest:
    """A checked request to grow branches (JSON-ready: kept as a job's ``params``)."""

    endpoint: str
    rule: str
    n: int = 1
    nodes: list[str] = field(default_factory=list)
    trees: list[str] | None = None  # tree ids; None: every tree of the dataset or project
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    system_prompt: str = ""
    budget_tokens: int | None = None
    budget_cost: str | None = None  # a decimal, as text: JSON has no decimals

    @property
    def sampling(self) -> dict[str, Any]:
        """The sampling settings given, as the chat-completions protocol names them."""
        values = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        return {name: value for name, value in values.items() if value is not None}

    def as_params(self) -> dict[str, Any]:
        return asdict(self)


def _number(data: Mapping[str, Any], key: str, kind: type, low: float, high: float, problems: list) -> Any:
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        problems.append((key, f"must be a number, got {type(value).__name__}"))
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        problems.append((key, f"must be {'a whole number' if kind is int else 'a number'}, got {value!r}"))
        return None
    if kind is int and isinstance(value, float) and value != number:
        problems.append((key, f"must be a whole number, got {value!r}"))
        return None
    if not low <= number <= high:
        problems.append((key, f"must be between {low:g} and {high:g}, got {number:g}"))
        return None
    return number


def _ids(data: Mapping[str, Any], key: str, problems: list) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [part for part in value.replace(",", " ").split() if part]
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        problems.append((key, "must be a list of ids (text)"))
        return None
    if len(value) > MAX_IDS:
        problems.append((key, f"at most {MAX_IDS:,} ids, got {len(value):,}"))
        return None
    for index, item in enumerate(value):
        if not item or len(item) > MAX_ID_CHARS or "\x00" in item:
            problems.append((f"{key}[{index}]", f"an id is 1 to {MAX_ID_CHARS} characters without NUL"))
            return None
    return list(dict.fromkeys(value))


def grow_request_parse(data: Mapping[str, Any]) -> GrowRequest:
    """The request ``data`` asks for; ``GrowInvalid`` with every bad key otherwise."""
    problems: list[tuple[str, str]] = [(key, "not an option") for key in sorted(set(data) - KEYS)]
    endpoint = data.get("endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        problems.append(("endpoint", "required: the name of a model endpoint"))
    elif not ModelEndpoint.objects.filter(name=endpoint).exists():
        problems.append(("endpoint", f"no model endpoint is called {endpoint!r}"))
    rule = data.get("rule") or (NODES if data.get("nodes") else UNANSWERED)
    if rule not in RULES:
        problems.append(("rule", f"one of {', '.join(RULES)}, got {rule!r}"))
    nodes = _ids(data, "nodes", problems) or []
    if rule == NODES and not nodes and not any(key == "nodes" for key, _ in problems):
        problems.append(("nodes", "rule nodes needs the ids of the turns to grow"))
    if rule in RULES and rule != NODES and nodes:
        problems.append(("nodes", f"ids are for rule nodes, not {rule}"))
    trees = _ids(data, "trees", problems)
    n = _number(data, "n", int, 1, MAX_REPLIES, problems)
    system_prompt = data.get("system_prompt") or ""
    if not isinstance(system_prompt, str):
        problems.append(("system_prompt", "must be text"))
    elif len(system_prompt) > MAX_SYSTEM_PROMPT_CHARS or "\x00" in system_prompt:
        problems.append(("system_prompt", f"at most {MAX_SYSTEM_PROMPT_CHARS:,} characters, without NUL"))
    budget_cost = data.get("budget_cost")
    if budget_cost not in (None, ""):
        try:
            cost = Decimal(str(budget_cost))
            if not cost.is_finite() or cost <= 0:
                raise InvalidOperation
            budget_cost = str(cost)
        except InvalidOperation:
            problems.append(("budget_cost", f"must be a positive amount, got {budget_cost!r}"))
    else:
        budget_cost = None
    request = dict(
        temperature=_number(data, "temperature", float, 0, 2, problems),
        top_p=_number(data, "top_p", float, 0, 1, problems),
        max_tokens=_number(data, "max_tokens", int, 1, 1_000_000, problems),
        seed=_number(data, "seed", int, 0, 2**62, problems),
        budget_tokens=_number(data, "budget_tokens", int, 1, 10**12, problems),
    )
    if problems:
        raise GrowInvalid(problems)
    return GrowRequest(
        endpoint=endpoint,
        rule=rule,
        n=n or 1,
        nodes=nodes,
        trees=trees,
        system_prompt=system_prompt,
        budget_cost=budget_cost,
        **request,
    )
