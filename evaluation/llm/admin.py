"""Model endpoints in the admin: settings with a write-only key, a "Test connection" action
and button, and the ledger of every request (read-only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet, Sum
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from evaluation.llm.keys import key_description
from evaluation.llm.models import ModelCall, ModelEndpoint
from evaluation.llm.services import (
    FIELDS,
    KEEP,
    endpoint_create,
    endpoint_delete,
    endpoint_test,
    endpoint_update,
)
from trees.admin import AuditedDeletes


class EndpointForm(forms.ModelForm):
    base_url = forms.URLField(
        label="Base URL",
        max_length=500,
        assume_scheme="https",
        help_text=ModelEndpoint._meta.get_field("base_url").help_text,
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and never shown again. Left empty, a stored key is kept.",
    )
    clear_api_key = forms.BooleanField(label="Remove the stored key", required=False)

    class Meta:
        model = ModelEndpoint
        fields = [
            "name",
            "base_url",
            "model",
            "api_key",
            "clear_api_key",
            "api_key_env",
            "timeout_seconds",
            "max_retries",
            "max_concurrency",
            "requests_per_minute",
            "input_price_per_1k",
            "output_price_per_1k",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("api_key") and data.get("api_key_env"):
            self.add_error("api_key", "give the key, or the variable to read it from, not both")
        if data.get("api_key") and data.get("clear_api_key"):
            self.add_error("clear_api_key", "a new key was given: it replaces the stored one")
        return data


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(AuditedDeletes, admin.ModelAdmin):
    form = EndpointForm
    list_display = (
        "name",
        "model",
        "base_url",
        "key",
        "requests_per_minute",
        "max_concurrency",
        "calls",
        "spent",
    )
    search_fields = ("name", "model", "base_url")
    readonly_fields = ("key_status", "usage")
    actions = ("test_connection",)
    change_form_template = "admin/llm/modelendpoint/change_form.html"
    audit_delete_action = "endpoint.delete"

    def get_queryset(self, request: HttpRequest) -> QuerySet[ModelEndpoint]:
        return super().get_queryset(request).annotate(call_count=Count("calls"), cost_sum=Sum("calls__cost"))

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        return [
            (None, {"fields": ["name", "base_url", "model"]}),
            (
                "API key",
                {"fields": (["key_status"] if obj else []) + ["api_key", "clear_api_key", "api_key_env"]},
            ),
            (
                "Limits",
                {"fields": ["timeout_seconds", "max_retries", "max_concurrency", "requests_per_minute"]},
            ),
            ("Prices (optional)", {"fields": ["input_price_per_1k", "output_price_per_1k"]}),
        ] + ([("Usage", {"fields": ["usage"]})] if obj else [])

    @admin.display(description="key")
    def key(self, obj: ModelEndpoint) -> str:
        if obj.api_key_env:
            return f"${obj.api_key_env}"
        return "stored" if obj.api_key_encrypted else "none"

    @admin.display(description="how it gets its key")
    def key_status(self, obj: ModelEndpoint) -> str:
        return key_description(obj)

    @admin.display(description="requests")
    def calls(self, obj: ModelEndpoint) -> int:
        return obj.call_count

    @admin.display(description="spent")
    def spent(self, obj: ModelEndpoint) -> str:
        return f"{obj.cost_sum:.4f}" if obj.cost_sum is not None else "—"

    @admin.display(description="usage")
    def usage(self, obj: ModelEndpoint) -> str:
        totals = obj.calls.aggregate(
            requests=Count("id"),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
            cost=Sum("cost"),
        )
        failed = obj.calls.filter(status=ModelCall.Status.ERROR).count()
        cost = f", {totals['cost']:.4f} spent" if totals["cost"] is not None else ""
        return (
            f"{totals['requests']:,} requests ({failed:,} failed), {totals['prompt'] or 0:,} prompt and "
            f"{totals['completion'] or 0:,} completion tokens{cost}"
        )

    def save_model(self, request: HttpRequest, obj: ModelEndpoint, form: Any, change: bool) -> None:
        data = form.cleaned_data
        settings = {name: data[name] for name in FIELDS if name in data}
        api_key: Any = data.get("api_key") or (
            "" if data.get("clear_api_key") or data.get("api_key_env") else KEEP
        )
        try:
            if change:
                endpoint_update(
                    endpoint=ModelEndpoint.objects.get(pk=obj.pk), changes=settings, api_key=api_key
                )
            else:
                obj.pk = endpoint_create(api_key=data.get("api_key") or None, **settings).pk
        except ValidationError as error:
            raise ValidationError(error.messages) from None

    def delete_model(self, request: HttpRequest, obj: ModelEndpoint) -> None:
        endpoint_delete(endpoint=obj)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<int:pk>/test/",
                self.admin_site.admin_view(self.test_view),
                name="llm_modelendpoint_test",
            ),
            *super().get_urls(),
        ]

    def test_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The change page's "Test connection" button (a POST)."""
        endpoint = get_object_or_404(ModelEndpoint, pk=pk)
        if request.method != "POST" or not self.has_view_permission(request, endpoint):
            return HttpResponseRedirect(reverse("admin:llm_modelendpoint_change", args=[pk]))
        self._report(request, endpoint_test(endpoint=endpoint))
        return HttpResponseRedirect(reverse("admin:llm_modelendpoint_change", args=[pk]))

    @admin.action(description="Test the connection of the selected endpoints", permissions=["view"])
    def test_connection(self, request: HttpRequest, queryset: QuerySet[ModelEndpoint]) -> None:
        for endpoint in queryset:
            self._report(request, endpoint_test(endpoint=endpoint))

    def _report(self, request: HttpRequest, result: Any) -> None:
        self.message_user(request, result.message, messages.SUCCESS if result.ok else messages.ERROR)


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    """The ledger: every request to a model, read-only."""

    list_display = (
        "created_at",
        "endpoint_name",
        "purpose",
        "subject",
        "status",
        "prompt_tokens",
        "completion_tokens",
        "cost",
        "duration_ms",
        "job_id",
    )
    list_filter = ("purpose", "status", "endpoint_name")
    search_fields = ("subject", "error")
    readonly_fields = [field.name for field in ModelCall._meta.fields]
    date_hierarchy = "created_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


from evaluation.llm import admin_judges  # noqa: E402, F401  (judges and their verdicts)
