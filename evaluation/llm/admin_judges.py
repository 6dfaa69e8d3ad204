"""Judges in the admin: made and changed through the services (their account made with
them), the template checked on save, and "Run on a project…", which asks for the project
and a budget and starts the run as a job; the change page links the judge's report in each
project it answered in (``evaluation.judge_pages``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString

from annotation.models import Project
from evaluation.judge_pages import judge_report_admin_links
from evaluation.llm.judges import FIELDS, judge_create, judge_delete, judge_update
from evaluation.llm.judging import JudgeRunRefused
from evaluation.llm.models import Judge, JudgeVerdict
from evaluation.llm.prompts import TemplateError, template_check
from evaluation.llm.tasks import judge_run_enqueue


class JudgeForm(forms.ModelForm):
    class Meta:
        model = Judge
        fields = ["name", "kind", "endpoint", "system_prompt", "prompt_template", "sampling", "max_attempts"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("kind") and data.get("prompt_template"):
            try:
                template_check(data["kind"], data["prompt_template"])
            except TemplateError as error:
                self.add_error("prompt_template", str(error))
        return data


class JudgeRunForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.order_by("name"), to_field_name="name")
    scheme = forms.CharField(required=False, help_text="Only this scheme (empty: every one the judge fits).")
    redo = forms.BooleanField(required=False, help_text="Ask again about items already judged.")
    max_tokens = forms.IntegerField(
        required=False, min_value=1, help_text="Stop once the run has used this many tokens."
    )
    max_cost = forms.DecimalField(
        required=False,
        min_value=0,
        max_digits=14,
        decimal_places=6,
        help_text="Stop once the run has spent this much, at the endpoint's prices.",
    )


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    form = JudgeForm
    list_display = ("name", "kind", "endpoint", "account", "verdicts")
    list_filter = ("kind",)
    search_fields = ("name",)
    readonly_fields = ("account", "reports")
    actions = ("run_on_project",)
    audit_delete_action = "judge.delete"  # written by judge_delete, one entry per judge

    def get_queryset(self, request: HttpRequest) -> QuerySet[Judge]:
        return super().get_queryset(request).select_related("endpoint", "user").annotate(Count("verdicts"))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ("name", "account", "reports") if obj else ("account",)

    @admin.display(description="account")
    def account(self, obj: Judge) -> str:
        return obj.user.username if obj.pk else "judge:<name>"

    @admin.display(description="reports")
    def reports(self, obj: Judge) -> SafeString | str:
        return judge_report_admin_links(obj) if obj.pk else ""

    @admin.display(description="items judged")
    def verdicts(self, obj: Judge) -> int:
        return obj.verdicts__count

    def save_model(self, request: HttpRequest, obj: Judge, form: Any, change: bool) -> None:
        data = form.cleaned_data
        settings = {name: data[name] for name in FIELDS if name in data}
        try:
            if change:
                judge_update(judge=Judge.objects.get(pk=obj.pk), changes=settings)
            else:
                saved = judge_create(name=data["name"], **settings)
                obj.pk, obj.user_id = saved.pk, saved.user_id
        except ValidationError as error:
            raise ValidationError(error.messages) from None

    def delete_model(self, request: HttpRequest, obj: Judge) -> None:
        judge_delete(judge=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Judge]) -> None:
        for judge in queryset:
            judge_delete(judge=judge)

    @admin.action(description="Run the selected judges on a project…", permissions=["change"])
    def run_on_project(self, request: HttpRequest, queryset: QuerySet[Judge]) -> HttpResponse | None:
        """Ask for the project, the scheme, redo and a budget; then start one job per judge."""
        form = JudgeRunForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            options = form.cleaned_data
            started = 0
            for judge in queryset.select_related("endpoint"):
                try:
                    job = judge_run_enqueue(
                        judge=judge,
                        project=options["project"],
                        user=request.user,
                        via="admin",
                        scheme=options["scheme"] or "",
                        redo=options["redo"],
                        max_tokens=options["max_tokens"],
                        max_cost=options["max_cost"],
                    )
                except JudgeRunRefused as error:
                    self.message_user(request, str(error), messages.ERROR)
                    continue
                started += 1
                self.message_user(
                    request,
                    f"Judge {judge.name} runs on {options['project'].name} in job {job.pk}.",
                    messages.SUCCESS,
                )
            if started:
                return HttpResponseRedirect(reverse("admin:jobs_job_changelist"))
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Run judges on a project",
            "judges": queryset,
            "form": form,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/llm/judge/run.html", context)


@admin.register(JudgeVerdict)
class JudgeVerdictAdmin(admin.ModelAdmin):
    """What each judge made of each item: read-only (a run writes them)."""

    list_display = (
        "judge",
        "project",
        "tree",
        "scheme",
        "status",
        "prompt_tokens",
        "completion_tokens",
        "cost",
    )
    list_filter = (
        "status",
        ("judge", admin.RelatedOnlyFieldListFilter),
        ("project", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("judge", "project", "tree")
    search_fields = ("tree__external_id__exact",)
    readonly_fields = [field.name for field in JudgeVerdict._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
