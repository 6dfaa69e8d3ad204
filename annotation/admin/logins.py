"""Failed and successful logins in the admin (django-axes' records, config/lockout.py).

Read-only: *Access attempts* (per account, address and browser, with the count of
failures; the ones at the limit are locked), *Access failures* (every failed login,
with whether it locked) and *Access logs* (every login and logout). Deleting an
access attempt unlocks its account and address, and is logged as ``login.unlock``;
the two logs cannot be deleted here (``manage.py axes_reset_logs`` ages them out).
Registered here rather than by axes (``AXES_ENABLE_ADMIN = False``) so that the
unlock leaves its audit entry and nothing can be edited.
"""

from __future__ import annotations

from typing import Any

from axes.admin import AccessAttemptAdmin, AccessFailureLogAdmin, AccessLogAdmin
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.http import HttpRequest

from trees.admin import AuditedDeletes


@admin.register(AccessAttempt)
class LoginAttemptAdmin(AuditedDeletes, AccessAttemptAdmin):
    audit_delete_action = "login.unlock"

    def audit_scope(self, attempt: AccessAttempt) -> str:
        return attempt.username or attempt.ip_address or ""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnly:
    """A record of what happened: shown, never changed or removed through the admin."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AccessFailureLog)
class LoginFailureAdmin(ReadOnly, AccessFailureLogAdmin):
    pass


@admin.register(AccessLog)
class LoginLogAdmin(ReadOnly, AccessLogAdmin):
    pass
