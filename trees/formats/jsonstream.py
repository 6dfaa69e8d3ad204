"""Read JSON items one at a time from a JSON array, a single object or JSONL.

Files of 100,000 trees must not be loaded whole, and every error must name a
line. JSONL is read as bytes, line by line, and handed to orjson; a JSON array
is decoded one element at a time from a sliding text buffer that keeps count
of the lines it has passed.

What one item may take is bounded (``trees.formats.bounds``): a line, an array
element or a whole document longer than ``max_line_bytes`` stops the file; an item
that nests deeper than its limit, or holds text no database can store (a NUL, a lone
surrogate: ``trees.storable``), is an ``ImportIssue`` on its line, and reading goes on.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import orjson

from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds, line_too_long
from trees.formats.records import FormatError, ImportIssue
from trees.storable import (
    json_problems,
    may_hold_nul,
    may_hold_unstorable,
    may_nest_deeper,
    nesting_depth,
    repaired,
)

_CHUNK = 1 << 20
_NOT_WHITESPACE = re.compile(r"[^ \t\r\n]")
_BOM = codecs.BOM_UTF8
_decoder = json.JSONDecoder()
_stdlib_encoder = json.JSONEncoder(ensure_ascii=False)
# orjson reads integers beyond 64 bits as floats. Such a number needs at least
# 19 digits in a row, so data with a run that long goes to the standard
# library, which keeps it exact. Translating every digit to "0" and everything
# else to " " finds a run at memory speed.
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def decode(data: bytes | str) -> Any:
    """Parse one JSON text: orjson when it gives the same result, else the standard library.

    The standard library also takes over when orjson refuses something, so
    error messages are the standard library's, and nesting deeper than
    orjson's 1,024 levels still parses.
    """
    return _decoded(data)[0]


def _decoded(data: bytes | str) -> tuple[Any, bool]:
    """``decode``, and whether orjson read it: then it holds no lone surrogate (orjson refuses
    one), which spares looking for one."""
    raw = data.encode() if isinstance(data, str) else data
    if raw.translate(_DIGITS).find(_LONG_RUN) < 0:
        try:
            return orjson.loads(raw), True
        except orjson.JSONDecodeError:
            pass
    return json.loads(data), False


def encode(value: Any) -> str:
    """JSON text of ``value`` (non-ASCII characters kept as they are)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits
        return _stdlib_encoder.encode(value)


def decode_stored(data: bytes | str) -> Any:
    """A JSON column's text as the database gave it back, each lone surrogate an older version
    stored (SQLite could keep one, escaped) replaced by U+FFFD: a stored row never breaks a
    reader (``trees.storable``)."""
    value = decode(data)
    return repaired(value) if may_hold_unstorable(data) else value


_nesting_lock = threading.Lock()
_nesting_users = 0
_default_limit = sys.getrecursionlimit()


@contextmanager
def allowed_nesting(depth: int) -> Iterator[None]:
    """Let the standard library's decoder descend ``depth`` levels while reading.

    Its C decoder counts each nested array or object against the recursion
    limit (1,000 by default), so a 10,000-deep conversation would not parse.
    The limit is raised to what the import's depth limit needs (deeper input
    then fails cleanly with a RecursionError) and put back when the last
    reader in the process is done, so the rest of the program keeps the
    usual guard against runaway recursion.
    """
    global _nesting_users
    needed = depth + 200
    with _nesting_lock:
        _nesting_users += 1
        if sys.getrecursionlimit() < needed:
            sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        with _nesting_lock:
            _nesting_users -= 1
            if _nesting_users == 0:
                sys.setrecursionlimit(_default_limit)


def _malformed(message: str, line: int, column: int) -> ImportIssue:
    return ImportIssue(line, "", f"malformed JSON at column {column}: {message}")


@dataclass(frozen=True)
class _Reading:
    """What bounds one file's reading: the longest line, and how deep an item may nest (with
    the setting that says so, for the message)."""

    max_line_bytes: int
    max_nesting: int
    nesting_setting: str
    exact: bool  # the depth counted, not only guarded

    def too_deep(self, line: int) -> ImportIssue:
        return ImportIssue(
            line,
            "",
            f"nests arrays and objects more than {self.max_nesting:,} levels deep ({self.nesting_setting})",
        )

    def checked(
        self,
        line: int,
        value: Any,
        raw: bytes | str,
        start: int = 0,
        end: int | None = None,
        *,
        by_orjson: bool = False,
    ) -> Any:
        """``value`` decoded from ``raw[start:end]`` (by orjson: then it can hold a NUL but no
        lone surrogate), or the ImportIssue saying what in it cannot be stored or nests too
        deeply."""
        exact = self.exact
        if not (may_hold_nul(raw, start, end) if by_orjson else may_hold_unstorable(raw, start, end)):
            # Only the depth is in question: count it, without the places a report would need.
            if not exact or not may_nest_deeper(raw, self.max_nesting, start, end):
                return value
            if nesting_depth(value, stop_above=self.max_nesting) <= self.max_nesting:
                return value
        max_depth = self.max_nesting if exact else None
        problems = json_problems(value, max_depth=max_depth, depth_setting=self.nesting_setting)
        if not problems:
            return value
        first = problems[0]
        if first.code == "too_deep":
            return self.too_deep(line)  # at the document's line: its path would be a long one
        more = len(problems) - 1
        others = f" (and {more:,} more place{'s' if more > 1 else ''})" if more else ""
        return ImportIssue(line, first.path, first.message + others)


def iter_documents(
    stream: IO[bytes],
    *,
    max_nesting: int | None = None,
    bounds: ReadBounds = DEFAULT_BOUNDS,
    nesting_setting: str = "BRANCHPOINT_MAX_JSON_DEPTH",
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each item; a broken JSONL line, or an item holding what
    cannot be stored or nesting too deeply, yields ``(line, ImportIssue)``.

    Items nest at most the bounds' ``max_json_depth`` levels, counted. A tree format gives
    its own ``max_nesting`` (``nesting_setting`` names where it comes from): then the
    decoder only guards it, and the format's readers check what they keep — each node's
    fields by type, its metadata by ``trees.validation.check_limits`` — which spares
    counting every level of every tree.

    Raises ``FormatError`` when the file cannot be read past an error (a
    broken JSON array or object, a line longer than the bounds allow), ``UnicodeDecodeError``
    when a JSON array or object is not UTF-8.
    """
    exact = max_nesting is None
    if max_nesting is None:
        max_nesting = bounds.max_json_depth
    reading = _Reading(bounds.max_line_bytes, max_nesting, nesting_setting, exact)
    with allowed_nesting(max_nesting):
        yield from _iter_documents(stream, reading)


def _iter_documents(stream: IO[bytes], reading: _Reading) -> Iterator[tuple[int, Any]]:
    head = stream.read(_CHUNK)
    if head.startswith(_BOM):
        head = head[len(_BOM) :]
    stripped = head.lstrip(b" \t\r\n")
    if not stripped:
        return
    # Start from the first line with something on it, indentation included,
    # so that columns count from the start of the line.
    blank = len(head) - len(stripped)
    start = head.rfind(b"\n", 0, blank) + 1
    first_line = 1 + head.count(b"\n", 0, start)
    head = head[start:]
    if stripped[:1] != b"[" and b"\n" not in head:
        # Telling JSONL from a single object needs the whole first line,
        # which may be longer than a chunk.
        # Bounded: a file of one endless line (a gzip bomb, say) stops at the limit.
        parts = [head]
        size = len(head)
        while size <= reading.max_line_bytes and (more := stream.read(_CHUNK)):
            parts.append(more)
            size += len(more)
            if b"\n" in more:
                break
        else:
            if size > reading.max_line_bytes:
                raise line_too_long(first_line, reading.max_line_bytes)
        head = b"".join(parts)
    if stripped[:1] == b"[":
        yield from _iter_array(_TextChunks(stream, head), first_line, blank - start + 1, reading)
    elif _looks_like_jsonl(head):
        yield from _iter_lines(stream, head, first_line, reading)
    else:
        yield from _iter_whole(_TextChunks(stream, head), first_line, reading)


def _looks_like_jsonl(head: bytes) -> bool:
    """True when one of the first two non-blank lines is a JSON value by itself."""
    lines = [line for line in head.split(b"\n", 8)[:8] if line.strip()]
    for candidate in lines[:2]:
        try:
            decode(candidate)
        except (ValueError, RecursionError):
            continue
        return True
    return False


def _iter_lines(
    stream: IO[bytes], head: bytes, first_line: int, reading: _Reading
) -> Iterator[tuple[int, Any]]:
    limit = reading.max_line_bytes
    lines = head.split(b"\n")
    tail = lines.pop()  # the start of a line that goes on in the stream
    line_number = first_line
    for text in lines:
        if len(text) > limit:
            raise line_too_long(line_number, limit)
        if text.strip():
            yield _decode_line(text, line_number, reading)
        line_number += 1
    if len(tail) > limit:
        raise line_too_long(line_number, limit)
    # Never more than a line's limit at once (and one byte to know it was passed).
    readline = stream.readline
    while text := readline(limit + 1 - len(tail)):
        if tail:
            text, tail = tail + text, b""
        if len(text) > limit and not text.endswith(b"\n"):
            raise line_too_long(line_number, limit)
        if text.strip():
            yield _decode_line(text, line_number, reading)
        line_number += 1
    if tail.strip():
        yield _decode_line(tail, line_number, reading)


def _decode_line(text: bytes, line_number: int, reading: _Reading) -> tuple[int, Any]:
    try:
        value, by_orjson = _decoded(text)
        return line_number, reading.checked(line_number, value, text, by_orjson=by_orjson)
    except json.JSONDecodeError as error:
        return line_number, _malformed(error.msg, line_number, error.colno)
    except UnicodeDecodeError as error:
        return line_number, ImportIssue(
            line_number, "", f"not UTF-8 text ({error.reason} at byte {error.start + 1})"
        )
    except ValueError:  # a number too long to convert
        return line_number, _unreadable_number(line_number)
    except RecursionError:
        return line_number, reading.too_deep(line_number)


def _unreadable_number(line: int) -> ImportIssue:
    return ImportIssue(line, "", f"a number has more than {sys.get_int_max_str_digits():,} digits")


class _TextChunks:
    """UTF-8 text from a byte stream, a chunk at a time (a character may span chunks)."""

    def __init__(self, stream: IO[bytes], head: bytes):
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._pending: bytes | None = head

    def read(self, size: int = _CHUNK) -> str:
        if self._pending is not None:
            data, self._pending = self._pending, None
        else:
            data = self._stream.read(size)
        if not data:
            return self._decoder.decode(b"", final=True)
        return self._decoder.decode(data)

    def read_all(self, limit: int, first_line: int) -> str:
        """The rest of the text, refused once longer than ``limit`` bytes."""
        parts = []
        size = 0
        while piece := self.read():
            parts.append(piece)
            size += len(piece)
            if size > limit:
                raise line_too_long(first_line, limit, "JSON document")
        return "".join(parts)


def _iter_whole(chunks: _TextChunks, first_line: int, reading: _Reading) -> Iterator[tuple[int, Any]]:
    text = chunks.read_all(reading.max_line_bytes, first_line)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(_malformed(error.msg, first_line + error.lineno - 1, error.colno)) from None
    except ValueError:
        raise FormatError(_unreadable_number(first_line)) from None
    except RecursionError:
        raise FormatError(reading.too_deep(first_line)) from None
    yield first_line, reading.checked(first_line, value, text)


class _ArrayCursor:
    """A sliding window over the text that knows the line of any offset in it."""

    def __init__(self, read: Callable[[int], str], first_line: int):
        self._read = read
        self.buffer = read(_CHUNK)
        self.eof = False
        self._counted_offset = 0
        self._counted_line = first_line
        # Where the line holding buffer[0] begins: negative once the start of
        # a long line (a minified array, say) has been dropped.
        self._line_start = 0

    def fill(self, size: int = _CHUNK) -> bool:
        more = self._read(size)
        if not more:
            self.eof = True
            return False
        self.buffer += more
        return True

    def line_of(self, offset: int) -> int:
        # Offsets are mostly asked for in increasing order, so counting on
        # from the last one reads the file once.
        if offset < self._counted_offset:
            return self._counted_line - self.buffer.count("\n", offset, self._counted_offset)
        self._counted_line += self.buffer.count("\n", self._counted_offset, offset)
        self._counted_offset = offset
        return self._counted_line

    def column_of(self, offset: int) -> int:
        start = self.buffer.rfind("\n", 0, offset) + 1
        return offset - (start or self._line_start) + 1

    def drop_before(self, offset: int) -> int:
        """Forget ``buffer[:offset]``; returns the new offset of the same place."""
        self.line_of(offset)
        newline = self.buffer.rfind("\n", 0, offset)
        self._line_start = newline + 1 - offset if newline >= 0 else self._line_start - offset
        self.buffer = self.buffer[offset:]
        self._counted_offset = 0
        return 0

    def fail(self, message: str, offset: int) -> FormatError:
        return FormatError(_malformed(message, self.line_of(offset), self.column_of(offset)))


def _iter_array(
    chunks: _TextChunks, first_line: int, position: int, reading: _Reading
) -> Iterator[tuple[int, Any]]:
    """Elements of the array whose opening bracket ends just before ``position``."""
    cursor = _ArrayCursor(chunks.read, first_line)
    limit = reading.max_line_bytes
    expect_value = True  # after "[" or ","
    first = True
    while True:
        if position > _CHUNK:
            position = cursor.drop_before(position)
        # Skip whitespace, reading more when the buffer runs out (and forgetting what was
        # skipped, however much of it there is).
        while True:
            found = _NOT_WHITESPACE.search(cursor.buffer, position)
            if found is not None:
                position = found.start()
                break
            position = cursor.drop_before(len(cursor.buffer))
            if cursor.eof or not cursor.fill():
                break
        buffer = cursor.buffer
        if position >= len(buffer):
            raise cursor.fail("the array is not closed with ']'", len(buffer))
        char = buffer[position]
        if char == "]" and (first or not expect_value):
            return
        if not expect_value:
            if char != ",":
                raise cursor.fail("expected ',' or ']' after an array element", position)
            position += 1
            expect_value = True
            continue
        while True:
            try:
                value, end = _decoder.raw_decode(cursor.buffer, position)
            except json.JSONDecodeError as error:
                # The element may only be cut off by the end of the buffer: read as much again
                # as it has so far, so that a long element is decoded a few times, not once a chunk.
                pending = len(cursor.buffer) - position
                if pending > limit:
                    raise line_too_long(cursor.line_of(position), limit, "array element") from None
                if not cursor.eof and cursor.fill(max(_CHUNK, min(pending, limit + 1 - pending))):
                    continue
                raise cursor.fail(error.msg, error.pos) from None
            except ValueError:
                raise FormatError(_unreadable_number(cursor.line_of(position))) from None
            except RecursionError:
                raise FormatError(reading.too_deep(cursor.line_of(position))) from None
            if end == len(cursor.buffer) and not cursor.eof and cursor.fill():
                # A number at the very end of the buffer may go on in the next chunk.
                continue
            break
        line = cursor.line_of(position)
        if end - position > limit:
            raise line_too_long(line, limit, "array element")
        yield line, reading.checked(line, value, cursor.buffer, position, end)
        position = end
        expect_value = False
        first = False
