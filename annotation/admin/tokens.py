"""The admin of API tokens: made through ``token_create`` (the secret shown once), revoked or deleted."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from annotation.api.tokens import token_create, tokens_revoke
from annotation.models import ApiToken
from trees.admin import AuditedDeletes


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ("user", "name", "expires_at")


@admin.register(ApiToken)
class ApiTokenAdmin(AuditedDeletes, admin.ModelAdmin):
    """Tokens for the REST API. Adding one shows its secret once, in a message; only its hash
    is kept. A token cannot be edited: revoke it and make another."""

    form = ApiTokenForm
    list_display = ("name", "user", "shown_prefix", "created_at", "last_used_at", "expires_at", "state")
    list_filter = (("user", admin.RelatedOnlyFieldListFilter),)
    list_select_related = ("user",)
    search_fields = ("name", "prefix", "user__username__exact")
    search_help_text = "A token's name or prefix, or a username exactly."
    autocomplete_fields = ("user",)
    actions = ["revoke"]
    audit_delete_action = "token.delete"

    def audit_scope(self, token: ApiToken) -> str:
        return token.user.get_username()

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("user", "name", "expires_at")
        return ("user", "name", "shown_prefix", "created_at", "last_used_at", "expires_at", "revoked_at")

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        return () if obj is None else self.get_fields(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The change page shows the token read-only; the revoke action needs this permission.
        return obj is None and super().has_change_permission(request, obj)

    @admin.display(description="token")
    def shown_prefix(self, token: ApiToken) -> str:
        return f"bp_{token.prefix}_…"

    @admin.display(description="state")
    def state(self, token: ApiToken) -> str:
        if token.revoked_at is not None:
            return "revoked"
        if token.expires_at is not None and token.expires_at <= timezone.now():
            return "expired"
        return "active"

    def save_model(self, request: HttpRequest, obj: ApiToken, form: ApiTokenForm, change: bool) -> None:
        made = token_create(user=obj.user, name=obj.name, expires_at=obj.expires_at)
        # The admin goes on with ``obj`` (its log entry, the redirect): make it the saved token.
        for field in ApiToken._meta.concrete_fields:
            setattr(obj, field.attname, getattr(made.token, field.attname))
        obj._state.adding, obj._state.db = False, made.token._state.db
        messages.warning(
            request,
            format_html(
                "The token for {}: <code>{}</code> — copy it now: it is not stored and will not be shown "
                "again. Send it as <code>Authorization: Bearer &lt;token&gt;</code>.",
                obj.user,
                made.secret,
            ),
        )

    @admin.action(permissions=["change"], description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = tokens_revoke(queryset)
        self.message_user(request, f"{count} token{'' if count == 1 else 's'} revoked.", messages.SUCCESS)
