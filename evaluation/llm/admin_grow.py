"""The datasets and projects admins' "Grow branches with a model" action: an intermediate
form (endpoint, which turns, N, sampling settings, system prompt, budget), then one job per
dataset (its trees) or project (its items' trees).

Datasets are ``trees``'s and projects ``annotation``'s, which must not import this app: the
action joins their admins from here (``grow_action_install``, called when this app's admin
loads).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse

from annotation.models import Project
from evaluation.llm.grow_requests import MAX_REPLIES, MAX_SYSTEM_PROMPT_CHARS, GrowInvalid, grow_request_parse
from evaluation.llm.grow_tasks import grow_enqueue
from evaluation.llm.models import ModelEndpoint
from trees.branches import LEAVES, NODES, UNANSWERED
from trees.models import Dataset

APPLY = "grow_apply"


class GrowForm(forms.Form):
    endpoint = forms.ModelChoiceField(ModelEndpoint.objects.all(), to_field_name="name")
    rule = forms.ChoiceField(
        choices=[
            (UNANSWERED, "every user turn without an assistant reply"),
            (LEAVES, "every user turn without any reply"),
            (NODES, "the turns named below"),
        ],
        initial=UNANSWERED,
    )
    nodes = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="Node ids, by spaces or commas."
    )
    n = forms.IntegerField(label="Replies per turn", min_value=1, max_value=MAX_REPLIES, initial=1)
    temperature = forms.FloatField(required=False, min_value=0, max_value=2)
    top_p = forms.FloatField(label="Top p", required=False, min_value=0, max_value=1)
    max_tokens = forms.IntegerField(label="Max tokens", required=False, min_value=1)
    seed = forms.IntegerField(required=False, min_value=0, help_text="Reply i is asked with seed + i.")
    system_prompt = forms.CharField(
        label="System prompt", required=False, max_length=MAX_SYSTEM_PROMPT_CHARS, widget=forms.Textarea
    )
    budget_tokens = forms.IntegerField(
        label="Budget (tokens)", required=False, min_value=1, help_text="Stop before exceeding it."
    )
    budget_cost = forms.DecimalField(
        label="Budget (cost)", required=False, min_value=0, help_text="At the endpoint's prices."
    )

    def grow_data(self) -> dict[str, Any]:
        data = {key: value for key, value in self.cleaned_data.items() if value not in (None, "")}
        data["endpoint"] = self.cleaned_data["endpoint"].name
        if data.get("rule") != NODES:
            data.pop("nodes", None)
        if "budget_cost" in data:
            data["budget_cost"] = str(data["budget_cost"])
        return data


@admin.action(description="Grow branches with a model (in a job)", permissions=["change"])
def grow_branches(
    modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Dataset] | QuerySet[Project]
) -> Any:
    """Show the form; once it is sent back valid, a job per selected dataset (or project) grows
    its trees."""
    form = GrowForm(request.POST if APPLY in request.POST else None)
    if form.is_bound and form.is_valid():
        try:
            grow = grow_request_parse(form.grow_data())
        except GrowInvalid as invalid:
            for key, why in invalid.problems:
                form.add_error(key if key in form.fields else None, why)
        else:
            jobs_url = reverse("admin:jobs_job_changelist")
            for chosen in queryset:
                where = {"project": chosen} if isinstance(chosen, Project) else {"dataset": chosen}
                job = grow_enqueue(request=grow, user=request.user, via="admin", **where)
                modeladmin.message_user(
                    request, f"{chosen.name}: job {job.pk} grows its branches (its progress: {jobs_url})"
                )
            return None
    if not form.is_bound and not ModelEndpoint.objects.exists():
        modeladmin.message_user(request, "Add a model endpoint first (Models in the loop).", messages.ERROR)
        return None
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": "Grow branches with a model",
        "opts": modeladmin.model._meta,
        "form": form,
        "chosen": list(queryset),
        "action": "grow_branches",
        "apply": APPLY,
        "selected": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),
    }
    return TemplateResponse(request, "admin/llm/grow_form.html", context)


def grow_action_install() -> None:
    """Add the action to the datasets and projects admins (once)."""
    from annotation.admin.projects import ProjectAdmin
    from trees.admin import DatasetAdmin

    for model_admin in (DatasetAdmin, ProjectAdmin):
        if grow_branches not in model_admin.actions:
            model_admin.actions = [*model_admin.actions, grow_branches]
