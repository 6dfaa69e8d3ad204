"""Judges in the admin: made, changed and deleted through ``evaluation.llm.judges`` (audited),
each with its account; the change page links the judge's report in each project it answered
in (``evaluation.judge_pages``). Registered when ``evaluation.llm.admin`` imports it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from evaluation.judge_pages import judge_report_admin_links
from evaluation.llm.judges import FIELDS, judge_create, judge_delete, judge_update
from evaluation.llm.models import Judge


class JudgeForm(forms.ModelForm):
    class Meta:
        model = Judge
        fields = ["name", *FIELDS]


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    form = JudgeForm
    list_display = ("name", "kind", "endpoint", "account")
    list_filter = ("kind",)
    list_select_related = ("endpoint", "user")
    search_fields = ("name",)
    # Deletes go through judge_delete, which logs this action.
    audit_delete_action = "judge.delete"

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["name", *FIELDS] + (["account", "reports"] if obj else [])

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The name makes the account: it stays.
        return ["name", "account", "reports"] if obj else []

    @admin.display(description="account")
    def account(self, obj: Judge) -> str:
        return obj.user.username

    @admin.display(description="reports")
    def reports(self, obj: Judge) -> SafeString | str:
        return judge_report_admin_links(obj)

    def save_model(self, request: HttpRequest, obj: Judge, form: Any, change: bool) -> None:
        data = form.cleaned_data
        settings = {name: data[name] for name in FIELDS if name in data}
        if change:
            judge_update(judge=Judge.objects.get(pk=obj.pk), changes=settings)
        else:
            obj.pk = judge_create(name=data["name"], **settings).pk

    def delete_model(self, request: HttpRequest, obj: Judge) -> None:
        judge_delete(judge=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Judge]) -> None:
        for judge in queryset:
            judge_delete(judge=judge)
