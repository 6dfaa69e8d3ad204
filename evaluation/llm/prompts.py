"""What a judge is asked and how its answer is read: the built-in prompts, the templates'
placeholders, and the strict readers of the JSON each kind asks for (pure: no ORM).

A template is text with ``$name`` placeholders (Python's ``string.Template``, so the JSON
braces in it need no escaping; ``$$`` is a dollar sign). A judge's own ``prompt_template``
replaces the built-in one and may use the same placeholders; one it does not know is an
error named before any request goes out.

Rubric judges get one request per judged unit (the conversation, the path, or each
assistant message, as the rubric's target says) asking every criterion and gate at once:
one request is cheaper than one per criterion, and the criteria read the same
conversation. The answer must be exactly::

    {"criteria": {"<key>": {"holds": true, "reason": "one line"}, ...}}

with every key of the rubric, no other key, ``holds`` a JSON boolean and ``reason`` a
non-empty string (whitespace inside it is folded to single spaces).

Comparison judges get one request per order of a pair of sibling replies::

    {"label": "<one of the scheme's labels>", "reason": "one line"}

Anything else — no JSON, a missing or unknown key, a label not on the list — is a
``Malformed`` answer: the run asks again, and records it as a failure with the raw text
once the judge's ``max_attempts`` are used up. An answer wrapped in one Markdown code
fence (```json ... ```) is read inside the fence; nothing else is repaired.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

REASON_CHARS = 500

RUBRIC_SYSTEM = (
    "You are a careful evaluator of conversations between a user and an AI assistant. "
    "You answer only with the JSON object you are asked for, with no text around it."
)
RUBRIC_TEMPLATE = """\
Judge $subject against each question of the rubric "$rubric".
$description
The conversation:

$conversation

The questions, each answered yes (true) or no (false):

$criteria

Answer with one JSON object and nothing else, with an entry for every key above:

$answer_shape

"holds" is true or false; "reason" is one short line saying why."""

COMPARISON_SYSTEM = (
    "You are a careful evaluator comparing two replies of an AI assistant to the same "
    "conversation. You answer only with the JSON object you are asked for."
)
COMPARISON_TEMPLATE = """\
The conversation so far:

$conversation

Response A:
$response_a

Response B:
$response_b

$description
Compare Response A with Response B and choose one label, which says how Response A stands \
against Response B (the labels run from preferring A to preferring B): $labels.

Answer with one JSON object and nothing else:

{"label": "<one of: $labels>", "reason": "<one short line>"}"""

RUBRIC_PLACES = frozenset({"subject", "rubric", "description", "conversation", "criteria", "answer_shape"})
COMPARISON_PLACES = frozenset({"conversation", "response_a", "response_b", "labels", "description"})
PLACES = {"rubric": RUBRIC_PLACES, "comparison": COMPARISON_PLACES}
BUILT_IN = {
    "rubric": (RUBRIC_SYSTEM, RUBRIC_TEMPLATE),
    "comparison": (COMPARISON_SYSTEM, COMPARISON_TEMPLATE),
}


class Malformed(ValueError):
    """A judge's answer that cannot be read as the JSON asked for; says why."""


class TemplateError(ValueError):
    """A prompt template with a placeholder the judge's kind does not fill."""


def template_check(kind: str, template: str) -> None:
    """Raise ``TemplateError`` naming each placeholder ``template`` uses that ``kind`` lacks."""
    if not template:
        return
    known = PLACES[kind]
    used, invalid = set(), []
    for match in Template.pattern.finditer(template):
        if match.group("invalid") is not None:
            invalid.append(match.start())
        elif match.group("named") or match.group("braced"):
            used.add(match.group("named") or match.group("braced"))
    if invalid:
        raise TemplateError(f"a lone $ at character {invalid[0]} (write $$ for a dollar sign)")
    unknown = sorted(used - known)
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        filled = ", ".join("$" + name for name in sorted(known))
        raise TemplateError(
            f"unknown placeholder{plural} {', '.join('$' + name for name in unknown)} "
            f"(a {kind} judge fills {filled})"
        )


def messages_render(
    kind: str, system_prompt: str, template: str, values: Mapping[str, str]
) -> list[dict[str, str]]:
    """The chat messages of one question: the judge's system prompt and template, or the
    built-in ones for its kind, with ``values`` put in."""
    built_in_system, built_in_template = BUILT_IN[kind]
    text = Template(template or built_in_template).substitute(values)
    return [
        {"role": "system", "content": system_prompt or built_in_system},
        {"role": "user", "content": text},
    ]


def transcript(lines: Sequence[tuple[str, str]]) -> str:
    """``(role, text)`` pairs as the prompts quote them: "[user]" then the text, a blank line between."""
    return "\n\n".join(f"[{role}]\n{text}" for role, text in lines)


def rubric_values(
    *, rubric: str, description: str, subject: str, conversation: str, questions: Sequence[tuple[str, str]]
) -> dict[str, str]:
    """The placeholders of a rubric question; ``questions`` are ``(key, question)``."""
    shape = {"criteria": {key: {"holds": True, "reason": "..."} for key, _ in questions}}
    return {
        "rubric": rubric,
        "description": f"{description}\n" if description else "",
        "subject": subject,
        "conversation": conversation,
        "criteria": "\n".join(f"- {key}: {question}" for key, question in questions),
        "answer_shape": json.dumps(shape, indent=2),
    }


def comparison_values(
    *, conversation: str, response_a: str, response_b: str, labels: Sequence[str], description: str
) -> dict[str, str]:
    return {
        "conversation": conversation,
        "response_a": response_a,
        "response_b": response_b,
        "labels": ", ".join(labels),
        "description": f"{description}\n" if description else "",
    }


_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(?P<body>.*)\n\s*```$", re.DOTALL)


def _json_object(text: str) -> dict[str, Any]:
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group("body").strip()
    if not stripped:
        raise Malformed("the answer is empty")
    try:
        value = json.loads(stripped)
    except ValueError as error:
        raise Malformed(f"not JSON ({error.msg} at character {error.pos})") from None
    if not isinstance(value, dict):
        raise Malformed(f"not a JSON object but {type(value).__name__}")
    return value


def _reason(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Malformed(f"{where}: reason must be a non-empty string")
    return " ".join(value.split())[:REASON_CHARS]


def _exact_keys(value: Mapping[str, Any], expected: Sequence[str], where: str) -> None:
    missing = [key for key in expected if key not in value]
    unknown = sorted(key for key in value if key not in expected)
    if missing:
        raise Malformed(f"{where}: missing {', '.join(missing)}")
    if unknown:
        raise Malformed(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")


@dataclass(frozen=True)
class CriterionAnswer:
    holds: bool
    reason: str


def rubric_answer_read(text: str, keys: Sequence[str]) -> dict[str, CriterionAnswer]:
    """The answer to every one of ``keys``, read strictly (see the module docstring)."""
    value = _json_object(text)
    _exact_keys(value, ["criteria"], "the answer")
    criteria = value["criteria"]
    if not isinstance(criteria, dict):
        raise Malformed("criteria must be an object of key: {holds, reason}")
    _exact_keys(criteria, keys, "criteria")
    answers = {}
    for key in keys:
        entry = criteria[key]
        where = f"criteria.{key}"
        if not isinstance(entry, dict):
            raise Malformed(f"{where} must be an object {{holds, reason}}")
        _exact_keys(entry, ["holds", "reason"], where)
        if not isinstance(entry["holds"], bool):
            raise Malformed(f"{where}.holds must be true or false, got {json.dumps(entry['holds'])}")
        answers[key] = CriterionAnswer(entry["holds"], _reason(entry["reason"], where))
    return answers


@dataclass(frozen=True)
class LabelAnswer:
    label: str
    reason: str


def comparison_answer_read(text: str, labels: Sequence[str]) -> LabelAnswer:
    """The label chosen (exactly one of ``labels``) and why."""
    value = _json_object(text)
    _exact_keys(value, ["label", "reason"], "the answer")
    label = value["label"]
    if not isinstance(label, str) or label not in labels:
        raise Malformed(f"label {json.dumps(label)} is not one of {', '.join(labels)}")
    return LabelAnswer(label, _reason(value["reason"], "the answer"))


def label_mirror(labels: Sequence[str]) -> dict[str, str]:
    """Each label as it reads with A and B swapped: labels run from preferring A to preferring
    B, so the i-th from the start is the i-th from the end (Better ↔ Worse, Same ↔ Same)."""
    return dict(zip(labels, reversed(labels), strict=True))


def label_tie(labels: Sequence[str]) -> str | None:
    """The label that prefers neither reply: the middle one of an odd number (None for an even one)."""
    return labels[len(labels) // 2] if len(labels) % 2 else None
