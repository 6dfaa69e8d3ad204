"""The page a login gets while its account or its address is locked out (django-axes).

Axes counts failed logins (settings: AXES_FAILURE_LIMIT, AXES_COOLOFF_MINUTES,
AXES_LOCKOUT_PARAMETERS) at both login forms — the site's and the admin's — and
calls ``lockout_response`` instead of the form once the limit is reached. The
page says what happened, for how long, and what to do, in the look of the form
that was used; its status is 429 (Too Many Requests).
"""

from __future__ import annotations

from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

LOCKED_OUT_STATUS = 429


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None, credentials: dict[str, Any] | None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the lockout page, the admin's look for the admin's login."""
    cool_off = get_cool_off(request)
    context: dict[str, Any] = {
        "failure_limit": get_failure_limit(request, credentials),
        "cool_off_minutes": round(cool_off.total_seconds() / 60) if cool_off else None,
    }
    if request.path.startswith(reverse("admin:index")):
        context |= admin.site.each_context(request) | {"title": "Login paused"}
        return render(request, "admin/locked_out.html", context, status=LOCKED_OUT_STATUS)
    return render(request, "registration/locked_out.html", context, status=LOCKED_OUT_STATUS)
