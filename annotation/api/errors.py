"""One JSON shape for every error the API returns: ``{"code", "message", ...}``.

Problems users can act on keep their location: a refused payload answers
``{"code": "invalid", "message", "errors": [{"code", "path", "message"}]}``
with a 400, whether the serializer or a scheme found it. Errors the
services raise map to their HTTP meaning here, so views never catch them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, TooManyFieldsSent
from django.http import Http404, UnreadablePostError
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, status
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, set_rollback
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.problems import Problem, ProblemsError, join
from annotation.review.services import ReviewRefused
from annotation.work.assignment import NoItemAvailable
from annotation.work.submissions import NotAssigned, StaleVersion

# A body listing 100,000 bad node ids helps nobody; the count is kept in the message.
MAX_LISTED_ERRORS = 100


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's ``EXCEPTION_HANDLER``; returns None (a server error) only for real bugs, which
    Django's ``handler500`` answers in the same shape (config/errors.py)."""
    response = _service_error(exc)
    if response is not None:
        set_rollback()
        return _in_json(response, context)
    response = drf_exception_handler(exc, context)  # Http404, PermissionDenied, APIException
    if response is None:
        return None
    response.data = _api_error_body(exc)
    return _in_json(response, context)


def _in_json(response: Response, context: dict[str, Any]) -> Response:
    """An error is JSON whatever the view renders otherwise (the schema's YAML, the docs' HTML)."""
    request = context.get("request")
    if request is not None:
        # DRF renders the response with the request's renderer (APIView.finalize_response).
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    return response


def _service_error(exc: Exception) -> Response | None:
    if isinstance(exc, RequestDataTooBig):
        # A multipart form's fields (not its files) over DATA_UPLOAD_MAX_MEMORY_SIZE.
        return Response(
            {"code": "too_large", "message": str(exc)}, status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        )
    if isinstance(exc, TooManyFieldsSent | UnreadablePostError):
        return Response({"code": "parse_error", "message": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, ProblemsError):
        return Response(invalid_body(exc.problems), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, StaleVersion):
        return Response(
            {"code": "stale_version", "message": str(exc), "current_version": exc.current},
            status=status.HTTP_409_CONFLICT,
        )
    if isinstance(exc, NotAssigned):
        # Never having held the item is a matter of rights; the rest are states it moved on to.
        code = status.HTTP_403_FORBIDDEN if exc.code == "not_assigned" else status.HTTP_409_CONFLICT
        return Response({"code": exc.code, "message": str(exc)}, status=code)
    if isinstance(exc, ReviewRefused):
        # As on the review page: not a reviewer here is a matter of rights; the rest (own work,
        # not submitted, a rejection without a comment) are refusals of this decision.
        code = status.HTTP_403_FORBIDDEN if exc.code == "forbidden" else status.HTTP_400_BAD_REQUEST
        return Response({"code": exc.code, "message": exc.message}, status=code)
    if isinstance(exc, NoItemAvailable):
        return Response(
            {"code": "no_items", "reason": exc.reason, "message": exc.message},
            status=status.HTTP_404_NOT_FOUND,
        )
    return None


def invalid_body(problems: list[Problem]) -> dict[str, Any]:
    listed = problems[:MAX_LISTED_ERRORS]
    first = str(problems[0]) if problems else "the request is not valid"
    others = len(problems) - 1
    more = f" (and {others} more problem{'s' if others > 1 else ''})" if others else ""
    return {
        "code": "invalid",
        "message": first + more,
        "errors": [problem.as_dict() for problem in listed],
    }


def _api_error_body(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, exceptions.ValidationError):
        return invalid_body(list(_flatten(exc.detail, "")))
    if isinstance(exc, Http404):
        return {"code": "not_found", "message": str(exc) or "not found"}
    if isinstance(exc, PermissionDenied):
        return {"code": "permission_denied", "message": str(exc) or "you may not do this"}
    if isinstance(exc, exceptions.APIException):
        detail = exc.detail
        codes = exc.get_codes()
        return {
            "code": codes if isinstance(codes, str) else exc.default_code,
            "message": str(detail) if not isinstance(detail, dict | list) else str(exc.default_detail),
        }
    return {"code": "error", "message": str(exc)}


def _flatten(detail: Any, path: str) -> Iterator[Problem]:
    """DRF's nested error details as located problems (``annotations``, ``version``, ...)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            # Errors about the body as a whole come under non_field_errors: they have no path.
            if key == "non_field_errors":
                yield from _flatten(value, path)
            else:
                yield from _flatten(value, join(path, key if isinstance(key, int) else str(key)))
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            if isinstance(value, dict | list):
                yield from _flatten(value, join(path, index))
            else:
                yield from _flatten(value, path)
    else:
        code = getattr(detail, "code", None) or "invalid"
        yield Problem(path, str(detail), code)


@extend_schema(exclude=True)
class EndpointNotFoundApi(APIView):
    """Any other path under the API: a JSON 404 rather than the site's HTML page."""

    permission_classes: list = []

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        raise NotFound("no such endpoint")
