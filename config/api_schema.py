"""The OpenAPI schema's view: YAML by default, JSON on ``?format=json`` or an Accept header.

The API turns DRF's ``?format=`` override off (``URL_FORMAT_OVERRIDE``: there it names an
export's file format), but integrators and code generators fetch ``/api/schema/?format=json``
as drf-spectacular documents it, so the schema alone reads it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.views import SpectacularAPIView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request


class FormatParameterNegotiation(DefaultContentNegotiation):
    """Picks the renderer named by ``?format=`` (yaml or json) when one is given."""

    def select_renderer(
        self, request: Request, renderers: list[Any], format_suffix: str | None = None
    ) -> Any:
        named = request.query_params.get("format")
        return super().select_renderer(request, renderers, format_suffix=format_suffix or named)


class SchemaView(SpectacularAPIView):
    content_negotiation_class = FormatParameterNegotiation
