"""Request parsers: JSON only, and any JSON a client can send is a 400 at worst."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, also refusing documents nested too deeply to decode.

    Python's decoder raises RecursionError (not ValueError) on a few thousand
    nested brackets; DRF would let that through as a server error.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply") from None
