"""Webhooks in the admin: each project's subscriptions, and every delivery with its status,
attempts and last error; failed (or any) deliveries are replayed with an action."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation.problems import ProblemsError
from annotation.webhooks.events import EVENTS
from annotation.webhooks.models import Delivery, Webhook
from annotation.webhooks.sending import deliveries_send
from annotation.webhooks.services import deliveries_replay, webhook_create, webhook_delete, webhook_update
from trees.admin import AuditedDeletes


class WebhookForm(forms.ModelForm):
    # Declared, to say what a URL typed without its scheme means (https, as Django 6 will).
    url = forms.URLField(
        max_length=2000, assume_scheme="https", help_text=Webhook._meta.get_field("url").help_text
    )
    events = forms.MultipleChoiceField(choices=list(EVENTS.items()), widget=forms.CheckboxSelectMultiple)
    secret = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        required=False,
        help_text="At least 16 characters; left empty when changing a webhook, the secret is kept.",
    )

    class Meta:
        model = Webhook
        fields = ["project", "url", "secret", "events", "active"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if not self.instance.pk and not data.get("secret"):
            self.add_error("secret", "a new webhook needs a secret")
        return data


@admin.register(Webhook)
class WebhookAdmin(AuditedDeletes, admin.ModelAdmin):
    form = WebhookForm
    list_display = ("project", "url", "active", "events", "created_at")
    list_filter = ("active", "project")
    audit_delete_action = "webhook.delete"

    def audit_scope(self, obj: Any) -> str:
        return obj.project.name

    def save_model(self, request: HttpRequest, obj: Webhook, form: Any, change: bool) -> None:
        data = form.cleaned_data
        fields = {"url": data["url"], "events": data["events"], "active": data["active"]}
        if data.get("secret"):
            fields["secret"] = data["secret"]
        try:
            if change:
                webhook_update(webhook=Webhook.objects.get(pk=obj.pk), **fields)
            else:
                obj.pk = webhook_create(project=data["project"], **fields).pk
        except ProblemsError as error:
            # The form showed it valid; the service's own checks (the URL's host) may not.
            raise ValidationError(str(error)) from None

    def delete_model(self, request: HttpRequest, obj: Webhook) -> None:
        webhook_delete(webhook=obj)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "event",
        "webhook",
        "status",
        "attempts",
        "response_code",
        "last_error",
        "created_at",
    )
    list_filter = ("status", "event")
    list_select_related = ("webhook__project",)
    readonly_fields = [field.name for field in Delivery._meta.fields]
    actions = ("replay",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(
        description="Replay the selected deliveries (send them now, then retry as new)", permissions=["view"]
    )
    def replay(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        ids = deliveries_replay(deliveries=queryset)
        sent = deliveries_send(ids=ids, limit=len(ids))
        delivered = sum(1 for delivery in sent if delivery.status == Delivery.Status.DELIVERED)
        level = messages.SUCCESS if delivered == len(ids) else messages.WARNING
        self.message_user(
            request,
            f"Replayed {len(ids)} deliveries: {delivered} delivered; the rest are retried by send_webhooks.",
            level,
        )
