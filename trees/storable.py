"""What text the databases can store, found in any JSON value before it is written, and
mended in what an older version wrote.

Two kinds of character cannot be stored: NUL (``\\u0000``), which PostgreSQL refuses in
text and JSON, and a lone UTF-16 surrogate (``\\ud800`` to ``\\udfff`` without its pair),
which is not Unicode text at all — it cannot be encoded as UTF-8, so psycopg cannot send
it, and orjson, Django's responses and every reader after them fail on it. Python's
``json`` reads both from their JSON escapes, and YAML from its own, so every boundary
where such text can arrive (API bodies, uploaded and command-line files, admin forms,
YAML) refuses it, naming the place: ``json_problems`` finds them, with values nested
deeper than a limit, in one iterative walk (bodies may nest thousands of levels).

SQLite keeps JSON as text with surrogates escaped, so versions before these checks could
store a lone surrogate in a JSON column there. Reading it back, ``repaired`` replaces
each with U+FFFD (the replacement character), so that a stored row never breaks a page,
an answer or an export.

Pure functions over plain data: no Django here (the formats use them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

NUL_CODE = "null_characters_not_allowed"
SURROGATE_CODE = "surrogate_characters_not_allowed"
DEPTH_CODE = "too_deep"
NUL_MESSAGE = "contains a NUL character (\\u0000), which cannot be stored"
REPLACEMENT = "\ufffd"

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# JSON can only spell either as an escape (a raw NUL is not JSON, and a surrogate is not
# UTF-8): a text without one of these holds neither. A surrogate pair (a character beyond
# the first plane, as json.dumps writes an emoji) also matches; the walk then tells.
_ESCAPE = r"\\u(?:0000|[dD][89abcdefABCDEF])"
_ESCAPED_BYTES = re.compile(_ESCAPE.encode())
_ESCAPED_TEXT = re.compile(_ESCAPE)
# After this many, a walk stops: a body of a million bad strings needs no million problems.
MAX_PROBLEMS = 1000


@dataclass(frozen=True, slots=True)
class TextProblem:
    """A place in a JSON value (``annotations.note.text``, ``items[3]``) and what is wrong there."""

    path: str
    message: str
    code: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class Unstorable(NamedTuple):
    code: str
    message: str
    index: int  # of the first such character in the text


def unstorable(text: str) -> Unstorable | None:
    """What makes ``text`` unstorable (the first character no database can store), or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    if char == "\x00":
        return Unstorable(NUL_CODE, NUL_MESSAGE, found.start())
    return Unstorable(
        SURROGATE_CODE,
        f"contains a lone UTF-16 surrogate (\\u{ord(char):04x}), which is not text and cannot be stored",
        found.start(),
    )


def may_hold_unstorable(raw: bytes | str, start: int = 0, end: int | None = None) -> bool:
    """False when the JSON text ``raw[start:end]`` cannot spell an unstorable character: a
    fast test that spares the walk for nearly every document."""
    end = len(raw) if end is None else end
    if isinstance(raw, bytes):
        # A plain search first: most text has no escape at all, and it is the faster scan.
        return raw.find(b"\\u", start, end) >= 0 and _ESCAPED_BYTES.search(raw, start, end) is not None
    return raw.find("\\u", start, end) >= 0 and _ESCAPED_TEXT.search(raw, start, end) is not None


def may_hold_nul(raw: bytes | str, start: int = 0, end: int | None = None) -> bool:
    """False when the JSON text ``raw[start:end]`` cannot spell a NUL (what is left to look for
    in text orjson read, which refuses lone surrogates)."""
    end = len(raw) if end is None else end
    return raw.find(b"\\u0000" if isinstance(raw, bytes) else "\\u0000", start, end) >= 0


def may_nest_deeper(raw: bytes | str, depth: int, start: int = 0, end: int | None = None) -> bool:
    """False when the JSON text ``raw[start:end]`` has too few brackets to nest deeper than
    ``depth``."""
    if (len(raw) if end is None else end) - start <= depth:
        return False  # fewer characters than levels
    if isinstance(raw, bytes):
        return raw.count(b"[", start, end) + raw.count(b"{", start, end) > depth
    return raw.count("[", start, end) + raw.count("{", start, end) > depth


def join(path: str, key: str | int) -> str:
    """``path`` one step further: ``a.b``, ``a[0]`` (as ``annotation.problems`` writes paths)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def json_problems(
    document: Any, *, max_depth: int | None = None, depth_setting: str = "", path: str = ""
) -> list[TextProblem]:
    """Where ``document`` has a string or key no database can store, and where it nests more
    than ``max_depth`` arrays and objects (a document ``[]`` is one deep; ``depth_setting``
    names where the limit comes from); iterative.

    A key that cannot be stored is reported at the object that holds it. Stops after
    ``MAX_PROBLEMS``.
    """
    too_deep = f"nests arrays and objects more than {max_depth or 0:,} levels deep" + (
        f" ({depth_setting})" if depth_setting else ""
    )
    problems: list[TextProblem] = []
    stack: list[tuple[str, Any, int]] = [(path, document, 0)]
    while stack and len(problems) < MAX_PROBLEMS:
        where, value, depth = stack.pop()
        if isinstance(value, str):
            if found := unstorable(value):
                problems.append(TextProblem(where, found.message, found.code))
            continue
        if not isinstance(value, dict | list):
            continue
        depth += 1
        if max_depth is not None and depth > max_depth:
            problems.append(TextProblem(where, too_deep, DEPTH_CODE))
            continue
        if isinstance(value, dict):
            children = []
            for key, child in value.items():
                if isinstance(key, str) and (found := unstorable(key)):
                    problems.append(TextProblem(where, f"a key {found.message}", found.code))
                    continue
                if isinstance(child, str | dict | list):
                    children.append((join(where, key), child, depth))
            stack.extend(reversed(children))
        else:
            stack.extend(
                (join(where, index), child, depth)
                for index, child in reversed(list(enumerate(value)))
                if isinstance(child, str | dict | list)
            )
    return problems


def nesting_depth(document: Any, *, stop_above: int | None = None) -> int:
    """How many arrays and objects deep ``document`` nests (a scalar: 0); iterative, a level at
    a time. Counting stops once past ``stop_above``."""
    level = [document] if isinstance(document, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if stop_above is not None and depth > stop_above:
            return depth
        below: list[Any] = []
        for value in level:
            below += [
                child
                for child in (value.values() if type(value) is dict else value)
                if type(child) is dict or type(child) is list
            ]
        level = below
    return depth


def repaired(value: Any) -> Any:
    """``value`` with each lone surrogate in its strings and keys replaced by U+FFFD, changed
    in place where it is a list or an object (a value just decoded); iterative."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            for index, child in enumerate(current):
                if isinstance(child, str):
                    if _SURROGATE.search(child):
                        current[index] = _SURROGATE.sub(REPLACEMENT, child)
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(current, dict):
            if any(isinstance(key, str) and _SURROGATE.search(key) for key in current):
                items = list(current.items())
                current.clear()
                for key, child in items:
                    current[_SURROGATE.sub(REPLACEMENT, key) if isinstance(key, str) else key] = child
            for key, child in current.items():
                if isinstance(child, str):
                    if _SURROGATE.search(child):
                        current[key] = _SURROGATE.sub(REPLACEMENT, child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value


def repaired_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub(REPLACEMENT, text)
