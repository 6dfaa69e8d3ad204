"""How much of a file a reader takes in at once, and how deep: bounds that keep reading
any file, however it was made, in memory that the bounds set and not the file.

- ``max_decompressed_bytes``: a gzip file is read as its decompressed bytes; past this
  many the file is refused (``CappedReader``). A few hundred kilobytes of gzip can
  decompress to gigabytes.
- ``max_line_bytes``: the longest line of a JSONL or CSV file, element of a JSON
  array, or JSON document read whole — what a reader holds to decode one item.
- ``max_json_depth``: the most levels of arrays and objects a JSON document may nest,
  a conversation tree's own nesting aside (the import's ``max_depth`` bounds that).

Each is a setting (``BRANCHPOINT_MAX_DECOMPRESSED_BYTES``, ``BRANCHPOINT_MAX_LINE_BYTES``,
``BRANCHPOINT_MAX_JSON_DEPTH``, read by ``trees.validation.read_bounds``); a file beyond
one is refused with an ``ImportIssue`` that says which line, why and which setting.
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from typing import IO

from trees.formats.records import FormatError, ImportIssue

MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 100


@dataclass(frozen=True)
class ReadBounds:
    max_line_bytes: int = MAX_LINE_BYTES
    max_json_depth: int = MAX_JSON_DEPTH
    max_decompressed_bytes: int | None = None  # None: no limit


DEFAULT_BOUNDS = ReadBounds()
# Where a tree file's nesting limit comes from.
TREE_NESTING = "BRANCHPOINT_MAX_DEPTH and BRANCHPOINT_MAX_JSON_DEPTH"


def tree_nesting(max_depth: int, bounds: ReadBounds) -> int:
    """How deep a file of nested trees may nest: two levels a tree level (the node and its
    list of children), and what any value in it may nest besides."""
    return 2 * max_depth + bounds.max_json_depth


def line_too_long(line: int | None, limit: int, what: str = "line", *, unit: str = "line") -> FormatError:
    """The error for a line (or array element, or document, or CSV row) longer than ``limit``."""
    return FormatError(
        ImportIssue(line, "", f"the {what} is longer than {limit:,} bytes (BRANCHPOINT_MAX_LINE_BYTES)", unit)
    )


class CappedReader(io.RawIOBase):
    """The decompressed bytes of a gzip file, refused past ``limit`` (FormatError); a damaged
    file is a FormatError too, whichever way zlib or gzip say so."""

    def __init__(self, inner: gzip.GzipFile, limit: int | None):
        self._inner = inner
        self._limit = limit
        self.consumed = 0
        self._newlines = 0  # before the current chunk: the line the limit was passed on

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        view = memoryview(buffer)
        if self._limit is not None:
            # One byte past the limit is enough to know it was passed.
            view = view[: max(min(len(view), self._limit - self.consumed + 1), 0)]
        try:
            count = self._inner.readinto(view)
        except (gzip.BadGzipFile, EOFError, zlib.error) as error:
            raise FormatError(ImportIssue(None, "", f"the gzip file is damaged ({error})")) from None
        self.consumed += count
        if self._limit is not None and self.consumed > self._limit:
            line = self._newlines + bytes(view[: count - 1]).count(b"\n") + 1
            raise FormatError(
                ImportIssue(
                    line,
                    "",
                    f"the file is over {self._limit:,} bytes once decompressed "
                    "(BRANCHPOINT_MAX_DECOMPRESSED_BYTES)",
                )
            )
        if self._limit is not None:
            self._newlines += bytes(view[:count]).count(b"\n")
        return count

    def close(self) -> None:
        self._inner.close()
        super().close()


def decompressed(stream: IO[bytes], limit: int | None) -> IO[bytes]:
    """The gzip file ``stream`` decompressed, read through ``CappedReader``, buffered."""
    return io.BufferedReader(CappedReader(gzip.GzipFile(fileobj=stream), limit), 1 << 16)  # type: ignore[return-value]
