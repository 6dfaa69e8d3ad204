"""What a request gets when nothing else answered it: Django's error handlers.

Under ``/api/`` every error is the API's JSON shape (annotation/api/errors.py),
``{"code", "message"}`` — the schema and docs views, a path no endpoint
matches, a request Django refuses before any view (a bad Host, a body too
large) and a bug that escapes a view (a 500) alike. A 500 says nothing of
what went wrong: the traceback goes to the log (``django.request``), never to
the caller. Pages get the site's own HTML pages (templates/404.html, ...).

With DEBUG on, Django shows its debug pages instead of these (for developers:
they carry the traceback); production runs with DEBUG off.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def api_error(code: str, message: str, status: int) -> JsonResponse:
    """The API's error shape, for errors that happen outside DRF's views."""
    return JsonResponse({"code": code, "message": message}, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error("bad_request", "the request could not be read", 400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error("permission_denied", "you may not do this", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error("not_found", "no such endpoint", 404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return api_error(
            "server_error", "something went wrong on our side; it has been logged for the admins", 500
        )
    return defaults.server_error(request)
