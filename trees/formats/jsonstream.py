"""Read JSON items one at a time from a JSON array, a single object or JSONL.

Files of 100,000 trees must not be loaded whole, and every error must name a
line. JSONL is read as bytes, line by line, and handed to orjson; a JSON array
is decoded one element at a time from a sliding text buffer that keeps count
of the lines it has passed.
"""

from __future__ import annotations

import codecs
import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import orjson

from trees.formats.records import FormatError, ImportIssue

_CHUNK = 1 << 20
_WHITESPACE = " \t\r\n"
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
    raw = data.encode() if isinstance(data, str) else data
    if raw.translate(_DIGITS).find(_LONG_RUN) < 0:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def encode(value: Any) -> str:
    """JSON text of ``value`` (non-ASCII characters kept as they are)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers beyond 64 bits
        return _stdlib_encoder.encode(value)


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


def _too_deep(line: int) -> ImportIssue:
    return ImportIssue(line, "", "nesting deeper than the depth limit allows")


def iter_documents(stream: IO[bytes], *, max_nesting: int = 1000) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each item; a broken JSONL line yields ``(line, ImportIssue)``.

    Raises ``FormatError`` when the file cannot be read past an error (a
    broken JSON array or object), ``UnicodeDecodeError`` when a JSON array
    or object is not UTF-8.
    """
    with allowed_nesting(max_nesting):
        yield from _iter_documents(stream)


def _iter_documents(stream: IO[bytes]) -> Iterator[tuple[int, Any]]:
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
        parts = [head]
        while more := stream.read(_CHUNK):
            parts.append(more)
            if b"\n" in more:
                break
        head = b"".join(parts)
    if stripped[:1] == b"[":
        yield from _iter_array(_TextChunks(stream, head), first_line, blank - start + 1)
    elif _looks_like_jsonl(head):
        yield from _iter_lines(stream, head, first_line)
    else:
        yield from _iter_whole(_TextChunks(stream, head), first_line)


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


def _iter_lines(stream: IO[bytes], head: bytes, first_line: int) -> Iterator[tuple[int, Any]]:
    lines = head.split(b"\n")
    tail = lines.pop()  # the start of a line that goes on in the stream
    line_number = first_line
    for text in lines:
        if text.strip():
            yield _decode_line(text, line_number)
        line_number += 1
    for text in stream:
        if tail:
            text, tail = tail + text, b""
        if text.strip():
            yield _decode_line(text, line_number)
        line_number += 1
    if tail.strip():
        yield _decode_line(tail, line_number)


def _decode_line(text: bytes, line_number: int) -> tuple[int, Any]:
    try:
        return line_number, decode(text)
    except json.JSONDecodeError as error:
        return line_number, _malformed(error.msg, line_number, error.colno)
    except UnicodeDecodeError as error:
        return line_number, ImportIssue(
            line_number, "", f"not UTF-8 text ({error.reason} at byte {error.start + 1})"
        )
    except RecursionError:
        return line_number, _too_deep(line_number)


class _TextChunks:
    """UTF-8 text from a byte stream, a chunk at a time (a character may span chunks)."""

    def __init__(self, stream: IO[bytes], head: bytes):
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self._pending: bytes | None = head

    def read(self) -> str:
        if self._pending is not None:
            data, self._pending = self._pending, None
        else:
            data = self._stream.read(_CHUNK)
        if not data:
            return self._decoder.decode(b"", final=True)
        return self._decoder.decode(data)

    def read_all(self) -> str:
        parts = []
        while piece := self.read():
            parts.append(piece)
        return "".join(parts)


def _iter_whole(chunks: _TextChunks, first_line: int) -> Iterator[tuple[int, Any]]:
    text = chunks.read_all()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(_malformed(error.msg, first_line + error.lineno - 1, error.colno)) from None
    except RecursionError:
        raise FormatError(_too_deep(first_line)) from None
    yield first_line, value


class _ArrayCursor:
    """A sliding window over the text that knows the line of any offset in it."""

    def __init__(self, read: Callable[[], str], first_line: int):
        self._read = read
        self.buffer = read()
        self.eof = False
        self._counted_offset = 0
        self._counted_line = first_line
        # Where the line holding buffer[0] begins: negative once the start of
        # a long line (a minified array, say) has been dropped.
        self._line_start = 0

    def fill(self) -> bool:
        more = self._read()
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


def _iter_array(chunks: _TextChunks, first_line: int, position: int) -> Iterator[tuple[int, Any]]:
    """Elements of the array whose opening bracket ends just before ``position``."""
    cursor = _ArrayCursor(chunks.read, first_line)
    expect_value = True  # after "[" or ","
    first = True
    while True:
        if position > _CHUNK:
            position = cursor.drop_before(position)
        # Skip whitespace, reading more when the buffer runs out.
        while True:
            buffer = cursor.buffer
            while position < len(buffer) and buffer[position] in _WHITESPACE:
                position += 1
            if position < len(buffer) or cursor.eof or not cursor.fill():
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
                # The element may only be cut off by the end of the buffer.
                if not cursor.eof and cursor.fill():
                    continue
                raise cursor.fail(error.msg, error.pos) from None
            except RecursionError:
                raise FormatError(_too_deep(cursor.line_of(position))) from None
            if end == len(cursor.buffer) and not cursor.eof and cursor.fill():
                # A number at the very end of the buffer may go on in the next chunk.
                continue
            break
        yield cursor.line_of(position), value
        position = end
        expect_value = False
        first = False
