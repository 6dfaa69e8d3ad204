"""Request parsers: any body a client can send is a 400 or a 413 at worst, never a 500.

Bodies have a size limit, checked against ``Content-Length`` before a byte is
read and again while reading (a body is never trusted to be as long as it
says): imports (views with ``accepts_uploads``) may send up to
``BRANCHPOINT_MAX_UPLOAD_BYTES``, everything else up to Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE``. Over it, the answer is a 413
``{"code": "too_large", "message"}``.

A JSON body is the API's one door for text: a string or key holding what no
database can store (a NUL, a lone UTF-16 surrogate: ``trees.storable``) is
refused here with its place, as is a body nested more than
``BRANCHPOINT_MAX_JSON_DEPTH`` levels deep (imports aside: their trees nest as
deep as the import's limits allow, which the readers check).
"""

from __future__ import annotations

import codecs
import io
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, status
from rest_framework.exceptions import ParseError

from annotation.problems import Problem, ProblemsError
from trees.storable import json_problems, may_hold_unstorable, may_nest_deeper, nesting_depth, unstorable


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"

    def __init__(self, limit: int):
        super().__init__(f"the request body is over the limit of {limit:,} bytes", "too_large")


def body_limit(view: Any) -> int | None:
    """The most bytes a request to ``view`` may send (None: no limit)."""
    if getattr(view, "accepts_uploads", False):
        return settings.BRANCHPOINT_MAX_UPLOAD_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def check_content_length(meta: dict[str, Any], limit: int | None) -> None:
    """Refuse a body whose announced length is over ``limit``, before reading any of it."""
    if limit is None:
        return
    try:
        length = int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise ParseError("the Content-Length header is not a number") from None
    if length > limit:
        raise RequestTooLarge(limit)


class LimitedStream:
    """A body stream that raises RequestTooLarge once more than ``limit`` bytes were read."""

    def __init__(self, stream: Any, limit: int | None):
        self.stream = stream
        self.limit = limit
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        if self.limit is not None and (size is None or size < 0):
            # Never more than one byte past the limit: enough to know it was passed.
            size = self.limit - self.consumed + 1
        data = self.stream.read(size)
        self.consumed += len(data)
        if self.limit is not None and self.consumed > self.limit:
            raise RequestTooLarge(self.limit)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self.stream.readline(size)
        self.consumed += len(data)
        if self.limit is not None and self.consumed > self.limit:
            raise RequestTooLarge(self.limit)
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _limited(stream: Any, parser_context: Any) -> LimitedStream:
    context = parser_context or {}
    limit = body_limit(context.get("view"))
    request = context.get("request")
    if request is not None:
        check_content_length(request.META, limit)
    return LimitedStream(stream, limit)


class JSONParser(parsers.BaseParser):
    """JSON bodies, read through the size limit; refused when nested too deeply, or when a
    string or key holds text that cannot be stored.

    Not a subclass of DRF's JSON parser on purpose: DRF hands its own JSON
    parser the whole body read at once through ``request.body``, which caps
    every JSON body at ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (imports included) and
    skips the limit's own reading. Python's decoder raises RecursionError
    (not ValueError) on a few thousand nested brackets; DRF would let that
    through as a server error. PostgreSQL stores no NUL (``\\u0000``) in text
    or JSON, and a lone surrogate (``\\ud800``) is not UTF-8 at all: a body with
    either would fail the write (or, on SQLite, every reader after it), so it is
    refused here, with the place of each one.
    """

    media_type = "application/json"
    renderer_class = parsers.JSONParser.renderer_class

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = _limited(stream, parser_context).read()
        try:
            data = parsers.JSONParser().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply") from None
        problems = body_problems(raw, data, parser_context)
        if problems:
            raise ProblemsError(problems)
        return data


def body_problems(raw: bytes, data: Any, parser_context: Any) -> list[Problem]:
    """What in the body ``raw`` (decoded: ``data``) cannot be stored, and where it nests too
    deeply; nothing is walked when the bytes show there can be neither."""
    context = parser_context or {}
    uploads = getattr(context.get("view"), "accepts_uploads", False)
    max_depth = None if uploads else settings.BRANCHPOINT_MAX_JSON_DEPTH
    # JSON spells NUL and surrogates only as escapes: in UTF-8 without one, there is nothing to look for.
    encoding = context.get("encoding", settings.DEFAULT_CHARSET)
    unusual = codecs.lookup(encoding).name != "utf-8"
    if not (unusual or may_hold_unstorable(raw)):
        # Only the depth is in question: count it, without the places a report would need.
        if max_depth is None or not may_nest_deeper(raw, max_depth):
            return []
        if nesting_depth(data, stop_above=max_depth) <= max_depth:
            return []
    found = json_problems(data, max_depth=max_depth, depth_setting="BRANCHPOINT_MAX_JSON_DEPTH")
    return [Problem(problem.path, problem.message, problem.code) for problem in found]


class MultiPartParser(parsers.MultiPartParser):
    """File uploads (imports), with the size limit; files past Django's
    ``FILE_UPLOAD_MAX_MEMORY_SIZE`` go to a temporary file, not to memory."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return super().parse(_limited(stream, parser_context), media_type, parser_context)


def query_text(request: Any, name: str) -> str | None:
    """The query parameter ``name`` as text, refused (400) when it holds a character that cannot
    be stored (a NUL, which PostgreSQL cannot compare with text)."""
    value = request.query_params.get(name)
    if value is not None and (found := unstorable(value)):
        raise ProblemsError([Problem(name, found.message, found.code)])
    return value
