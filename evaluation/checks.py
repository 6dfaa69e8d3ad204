"""Automatic checks: a registry of small check types, each read from YAML once.

A check is a mapping with one key, the check's type::

    equals: [metadata.final_state.start, metadata.ground_truth.start]      two paths
    equals: {path: metadata.final_state.status, value: confirmed}           a path and a value
    equals: {left: ..., right: metadata.ground_truth.duration, default: 30} right when missing or null
    set_equals: {left: ..., right: ..., ignore_case: true}                  lists as sets
    exists: metadata.final_state.booking                                    present and not null
    truthy: metadata.scheduling_context.conflict                            true, non-empty, non-zero
    contains: {message: last_assistant, text: booked, ignore_case: true}    text may be a list (any)
    regex: {message: any, pattern: "\\b(tomorrow|monday)\\b", ignore_case: true}
    length: {message: last_assistant, min: 40, max: 2000}                   characters of a message
    length: {path: metadata.final_state.alternatives, min: 1}               items (or characters)
    length: {messages: assistant, max: 8}                                   messages on the line
    last_role: assistant                                                    who spoke last
    all: [check, ...]   any: [check, ...]   not: check                      combinators
    python: booking_confirmed                                               a registered Python check

Paths are described in ``evaluation.paths``; message selectors in
``MESSAGE_SELECTORS`` (relative to the subject's line, see
``evaluation.subjects``). Python checks are functions ``(subject) -> bool``
registered by name in ``settings.BRANCHPOINT_RUBRIC_CHECKS``; YAML can only
name them, never import code. Adding a check type is adding one parser here
with ``@check_type``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from annotation.problems import Problems, describe, join, nearest
from evaluation.paths import MISSING, JsonPath, PathError, parse_path
from evaluation.subjects import Subject
from trees.vocabulary import ROLES

Check = Callable[[Subject], bool]
MESSAGE_SELECTORS = (
    "last_assistant",
    "last_user",
    "last",
    "any",
    "any_assistant",
    "any_user",
    "path",
)


# all/any/not nest: reading a check, and running it, descend one call per level.
MAX_NESTING = 20


@dataclass(frozen=True)
class ParseContext:
    """What reading a check needs beyond its YAML: the registered Python checks' names, and
    how many all/any/not the check being read is inside."""

    python_checks: Collection[str]
    depth: int = 0

    def inner(self) -> ParseContext:
        return replace(self, depth=self.depth + 1)


Parser = Callable[[Any, str, Problems, ParseContext], Check | None]
CHECK_TYPES: dict[str, Parser] = {}


def check_type(name: str) -> Callable[[Parser], Parser]:
    def register(parser: Parser) -> Parser:
        CHECK_TYPES[name] = parser
        return parser

    return register


def parse_check(raw: Any, path: str, problems: Problems, context: ParseContext) -> Check | None:
    """The check ``raw`` describes, or None after adding what is wrong to ``problems``."""
    names = ", ".join(sorted(CHECK_TYPES))
    if not isinstance(raw, Mapping) or len(raw) != 1:
        got = describe(raw) if not isinstance(raw, Mapping) else f"a mapping with {len(raw)} keys"
        problems.add(path, f"must be a mapping with one key, the check's type ({names}), got {got}")
        return None
    if context.depth > MAX_NESTING:
        problems.add(path, f"all, any and not nest more than {MAX_NESTING} levels deep", "too_deep")
        return None
    ((kind, value),) = raw.items()
    parser = CHECK_TYPES.get(kind) if isinstance(kind, str) else None
    if parser is None:
        suggestion = nearest(str(kind), CHECK_TYPES)
        hint = f'did you mean "{suggestion}"? ' if suggestion else ""
        problems.add(path, f'unknown check "{kind}" ({hint}checks are: {names})', "unknown_check")
        return None
    return parser(value, join(path, kind), problems, context)


# -- reading the parts of a check ------------------------------------------------------


def _path(raw: Any, where: str, problems: Problems) -> JsonPath | None:
    try:
        return parse_path(raw)
    except PathError as error:
        problems.add(where, str(error))
        return None


def _options(raw: Any, where: str, problems: Problems, known: set[str], required: set[str]) -> bool:
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be a mapping with {', '.join(sorted(required))}, got {describe(raw)}")
        return False
    problems.check_keys(raw, where, known)
    missing = sorted(key for key in required if key not in raw)
    for key in missing:
        problems.add(join(where, key), "is required")
    return not missing


def _flag(raw: Mapping[str, Any], key: str, where: str, problems: Problems) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        problems.add(join(where, key), f"must be true or false, got {describe(value)}")
        return False
    return value


def _selector(raw: Mapping[str, Any], where: str, problems: Problems) -> str | None:
    value = raw.get("message", "last_assistant")
    if value not in MESSAGE_SELECTORS:
        shown = f'"{value}"' if isinstance(value, str) else describe(value)
        problems.add(join(where, "message"), f"{shown} is not a message ({', '.join(MESSAGE_SELECTORS)})")
        return None
    return value


def _bound(raw: Mapping[str, Any], key: str, where: str, problems: Problems) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.add(join(where, key), f"must be an integer ≥ 0, got {describe(value)}")
        return None
    return value


def texts(subject: Subject, selector: str) -> list[str]:
    """The texts a message selector picks from ``subject`` (none when there is no such message)."""
    if selector == "path":
        return ["\n\n".join(message.text for message in subject.line)]
    if selector == "last":
        return [subject.line[-1].text] if subject.line else []
    if selector in ("last_assistant", "last_user"):
        role = selector.removeprefix("last_")
        for message in reversed(subject.line):
            if message.role == role:
                return [message.text]
        return []
    if selector == "any":
        return [message.text for message in subject.messages]
    role = selector.removeprefix("any_")
    return [message.text for message in subject.messages if message.role == role]


def _canonical(value: Any, ignore_case: bool) -> Any:
    if isinstance(value, str):
        return value.casefold() if ignore_case else value
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


# -- the check types ---------------------------------------------------------------


def _two_sides(raw: Any, where: str, problems: Problems) -> tuple[JsonPath | None, Any, bool, bool]:
    """(left path, right path or value, right is a value, ignore_case) of equals / set_equals."""
    if isinstance(raw, list):
        if len(raw) != 2:
            problems.add(where, f"must list two paths, got {len(raw)}")
            return None, None, False, False
        return _path(raw[0], join(where, 0), problems), _path(raw[1], join(where, 1), problems), False, False
    if not isinstance(raw, Mapping):
        problems.add(where, f"must be two paths [left, right] or a mapping, got {describe(raw)}")
        return None, None, False, False
    ignore_case = _flag(raw, "ignore_case", where, problems)
    if "value" in raw:
        _options(raw, where, problems, {"path", "value", "ignore_case"}, {"path"})
        return _path(raw.get("path"), join(where, "path"), problems), raw["value"], True, ignore_case
    _options(raw, where, problems, {"left", "right", "ignore_case", "default"}, {"left", "right"})
    left = _path(raw.get("left"), join(where, "left"), problems) if "left" in raw else None
    right = _path(raw.get("right"), join(where, "right"), problems) if "right" in raw else None
    if right is not None and "default" in raw:
        right = _Defaulted(right, raw["default"])
    return left, right, False, ignore_case


@dataclass(frozen=True)
class _Defaulted:
    """A right-hand path with the value it stands for when missing or null: a ground truth
    that leaves out what the method assumes (a meeting's 30 minutes, say)."""

    path: JsonPath
    default: Any

    def resolve(self, subject: Subject) -> Any:
        value = self.path.resolve(subject)
        return self.default if value is MISSING or value is None else value


@check_type("equals")
def _equals(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    left, right, literal, ignore_case = _two_sides(raw, where, problems)
    if left is None or (right is None and not literal):
        return None

    def check(subject: Subject) -> bool:
        a = left.resolve(subject)
        b = right if literal else right.resolve(subject)
        if a is MISSING or b is MISSING:
            return False
        if ignore_case and isinstance(a, str) and isinstance(b, str):
            return a.casefold() == b.casefold()
        return (type(a) is type(b) and a == b) or _numbers_equal(a, b)

    return check


def _numbers_equal(a: Any, b: Any) -> bool:
    numbers = (int, float)
    return (
        isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


@check_type("set_equals")
def _set_equals(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    left, right, literal, ignore_case = _two_sides(raw, where, problems)
    if left is None or (right is None and not literal):
        return None
    if literal and not isinstance(right, list):
        problems.add(join(where, "value"), f"must be a list, got {describe(right)}")
        return None

    def as_set(value: Any) -> frozenset | None:
        if not isinstance(value, list):
            return None
        return frozenset(_canonical(item, ignore_case) for item in value)

    fixed = as_set(right) if literal else None

    def check(subject: Subject) -> bool:
        a = as_set(left.resolve(subject))
        b = fixed if literal else as_set(right.resolve(subject))
        return a is not None and b is not None and a == b

    return check


@check_type("exists")
def _exists(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    target = _path(raw, where, problems)
    if target is None:
        return None

    def check(subject: Subject) -> bool:
        value = target.resolve(subject)
        return value is not MISSING and value is not None

    return check


@check_type("truthy")
def _truthy(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    target = _path(raw, where, problems)
    if target is None:
        return None
    return lambda subject: bool(target.resolve(subject))


@check_type("contains")
def _contains(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    if not _options(raw, where, problems, {"message", "text", "ignore_case"}, {"text"}):
        return None
    selector = _selector(raw, where, problems)
    ignore_case = _flag(raw, "ignore_case", where, problems)
    wanted = raw["text"]
    wanted = [wanted] if isinstance(wanted, str) else wanted
    if not isinstance(wanted, list) or not wanted or not all(isinstance(w, str) and w for w in wanted):
        problems.add(join(where, "text"), "must be a non-empty string or a list of them (any may appear)")
        return None
    if selector is None:
        return None
    needles = [w.casefold() for w in wanted] if ignore_case else list(wanted)

    def check(subject: Subject) -> bool:
        for text in texts(subject, selector):
            haystack = text.casefold() if ignore_case else text
            if any(needle in haystack for needle in needles):
                return True
        return False

    return check


@check_type("regex")
def _regex(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    if not _options(raw, where, problems, {"message", "pattern", "ignore_case"}, {"pattern"}):
        return None
    selector = _selector(raw, where, problems)
    ignore_case = _flag(raw, "ignore_case", where, problems)
    pattern = raw["pattern"]
    if not isinstance(pattern, str) or not pattern:
        problems.add(join(where, "pattern"), f"must be a regular expression, got {describe(pattern)}")
        return None
    try:
        compiled = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as error:
        problems.add(join(where, "pattern"), f"is not a valid regular expression: {error}")
        return None
    if selector is None:
        return None
    search = compiled.search
    return lambda subject: any(search(text) for text in texts(subject, selector))


@check_type("length")
def _length(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    if not _options(raw, where, problems, {"message", "path", "messages", "min", "max"}, set()):
        return None
    measured = [key for key in ("message", "path", "messages") if key in raw]
    if len(measured) != 1:
        problems.add(where, "must measure one thing: a message (message:), a path (path:) or messages:")
        return None
    low, high = _bound(raw, "min", where, problems), _bound(raw, "max", where, problems)
    if "min" not in raw and "max" not in raw:
        problems.add(where, "needs min, max or both")
        return None
    if low is not None and high is not None and low > high:
        problems.add(join(where, "min"), f"is above max ({low} > {high})")
        return None

    def within(size: int) -> bool:
        return (low is None or size >= low) and (high is None or size <= high)

    if "message" in raw:
        selector = _selector(raw, where, problems)
        if selector is None:
            return None
        return lambda subject: any(within(len(text)) for text in texts(subject, selector))
    if "path" in raw:
        target = _path(raw["path"], join(where, "path"), problems)
        if target is None:
            return None

        def sized(subject: Subject) -> bool:
            value = target.resolve(subject)
            return isinstance(value, list | str | dict) and within(len(value))

        return sized
    role = raw["messages"]
    if role != "any" and role not in ROLES:
        problems.add(join(where, "messages"), f"must be any or a role ({', '.join(ROLES)})")
        return None
    if role == "any":
        return lambda subject: within(len(subject.line))
    return lambda subject: within(sum(1 for message in subject.line if message.role == role))


@check_type("last_role")
def _last_role(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    if raw not in ROLES:
        shown = f'"{raw}"' if isinstance(raw, str) else describe(raw)
        problems.add(where, f"{shown} is not a role ({', '.join(ROLES)})")
        return None
    return lambda subject: bool(subject.line) and subject.line[-1].role == raw


def _many(raw: Any, where: str, problems: Problems, context: ParseContext) -> list[Check] | None:
    if not isinstance(raw, list) or not raw:
        problems.add(where, f"must be a non-empty list of checks, got {describe(raw)}")
        return None
    inner = context.inner()
    parts = [parse_check(item, join(where, index), problems, inner) for index, item in enumerate(raw)]
    if any(part is None for part in parts):
        return None
    return parts  # type: ignore[return-value]


@check_type("all")
def _all(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    parts = _many(raw, where, problems, context)
    if parts is None:
        return None
    return lambda subject: all(part(subject) for part in parts)


@check_type("any")
def _any(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    parts = _many(raw, where, problems, context)
    if parts is None:
        return None
    return lambda subject: any(part(subject) for part in parts)


@check_type("not")
def _not(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    inner = parse_check(raw, where, problems, context.inner())
    if inner is None:
        return None
    return lambda subject: not inner(subject)


@check_type("python")
def _python(raw: Any, where: str, problems: Problems, context: ParseContext) -> Check | None:
    registered = sorted(context.python_checks)
    if not isinstance(raw, str) or not raw:
        problems.add(where, f"must name a registered Python check, got {describe(raw)}")
        return None
    if raw not in context.python_checks:
        known = ", ".join(registered) if registered else "none"
        problems.add(
            where,
            f'no Python check "{raw}" is registered (settings.BRANCHPOINT_RUBRIC_CHECKS has: {known})',
            "unregistered_check",
        )
        return None

    def check(subject: Subject) -> bool:
        function = python_check(raw)
        try:
            return bool(function(subject))
        except Exception as error:  # a bug in one check fails that check, not the whole run
            subject.errors.append(f"{raw}: {type(error).__name__}: {error}")
            return False

    return check


# -- Python checks registered in settings -------------------------------------------------


def registered_python_checks() -> dict[str, str]:
    """``settings.BRANCHPOINT_RUBRIC_CHECKS``: check name → dotted path of a function (subject) -> bool."""
    return dict(getattr(settings, "BRANCHPOINT_RUBRIC_CHECKS", {}))


@cache
def _imported(name: str, dotted: str) -> Callable[[Subject], Any]:
    try:
        return import_string(dotted)
    except ImportError as error:
        raise ImproperlyConfigured(
            f'BRANCHPOINT_RUBRIC_CHECKS["{name}"] = "{dotted}" cannot be imported: {error}'
        ) from None


def python_check(name: str) -> Callable[[Subject], Any]:
    """The function registered as ``name`` (imported on first use, from settings only)."""
    registered = registered_python_checks()
    if name not in registered:
        raise ImproperlyConfigured(f'no Python check "{name}" in settings.BRANCHPOINT_RUBRIC_CHECKS')
    return _imported(name, registered[name])
