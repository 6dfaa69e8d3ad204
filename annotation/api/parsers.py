"""Request parsers: any body a client can send is a 400 or a 413 at worst, never a 500.

Bodies have a size limit, checked against ``Content-Length`` before a byte is
read and again while reading (a body is never trusted to be as long as it
says): imports (views with ``accepts_uploads``) may send up to
``BRANCHPOINT_MAX_UPLOAD_BYTES``, everything else up to Django's
``DATA_UPLOAD_MAX_MEMORY_SIZE``. Over it, the answer is a 413
``{"code": "too_large", "message"}``.
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from rest_framework import exceptions, parsers, status
from rest_framework.exceptions import ParseError

from annotation.problems import Problem, ProblemsError, join

NUL_MESSAGE = "contains a NUL character (\\u0000), which cannot be stored"
NUL_CODE = "null_characters_not_allowed"


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
    """JSON bodies, read through the size limit; refused when nested too deeply to decode or
    when a string holds a NUL character.

    Not a subclass of DRF's JSON parser on purpose: DRF hands its own JSON
    parser the whole body read at once through ``request.body``, which caps
    every JSON body at ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (imports included) and
    skips the limit's own reading. Python's decoder raises RecursionError
    (not ValueError) on a few thousand nested brackets; DRF would let that
    through as a server error. PostgreSQL stores no NUL (``\\u0000``) in text
    or JSON and would fail the write, so such a body is refused here, with the
    place of each one.
    """

    media_type = "application/json"
    renderer_class = parsers.JSONParser.renderer_class

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        raw = _limited(stream, parser_context).read()
        try:
            data = parsers.JSONParser().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply") from None
        # JSON spells NUL only as an escape: in UTF-8 without one, there is nothing to look for.
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        if b"\\u0000" in raw or codecs.lookup(encoding).name != "utf-8":
            problems = list(nul_characters(data))
            if problems:
                raise ProblemsError(problems)
        return data


def nul_characters(document: Any) -> Iterator[Problem]:
    """Where ``document`` has a string (or a key) holding a NUL character; iterative, as bodies
    may nest thousands of levels deep (a conversation tree)."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value:
                yield Problem(path, NUL_MESSAGE, NUL_CODE)
        elif isinstance(value, dict):
            for key, child in reversed(value.items()):
                if "\x00" in key:
                    yield Problem(path, f"a key {NUL_MESSAGE}", NUL_CODE)
                else:
                    stack.append((join(path, key), child))
        elif isinstance(value, list):
            stack.extend((join(path, index), child) for index, child in reversed(list(enumerate(value))))


class MultiPartParser(parsers.MultiPartParser):
    """File uploads (imports), with the size limit; files past Django's
    ``FILE_UPLOAD_MAX_MEMORY_SIZE`` go to a temporary file, not to memory."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return super().parse(_limited(stream, parser_context), media_type, parser_context)


def query_text(request: Any, name: str) -> str | None:
    """The query parameter ``name`` as text, refused (400) when it holds a NUL character, which
    PostgreSQL cannot compare with text."""
    value = request.query_params.get(name)
    if value is not None and "\x00" in value:
        raise ProblemsError([Problem(name, NUL_MESSAGE, NUL_CODE)])
    return value
