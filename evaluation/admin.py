"""The admin for rubrics (YAML checked on the form, versions read-only) and their results.

Saving a rubric goes through ``rubric_save`` like ``create_rubric``: a changed
YAML is a new version, and results keep the version they were computed
with. The "evaluate" action runs ``project_evaluate`` on a chosen project,
as the ``evaluate`` command and the API do. Agreement snapshots are kept
figures, read-only here, with a link to each project's agreement page and an
action that recomputes them (as any reader does once answers change).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from annotation.models import Project
from annotation.problems import ProblemsError
from evaluation.agreement.project import agreement_refresh
from evaluation.models import AgreementSnapshot, EvaluationResult, Rubric, RubricVersion
from evaluation.rubrics import RubricSpec, parse_rubric
from evaluation.services import NoVersion, project_evaluate, rubric_save
from trees.admin import AuditedDeletes


class RubricForm(forms.ModelForm):
    class Meta:
        model = Rubric
        fields = ("yaml",)
        widgets = {"yaml": forms.Textarea(attrs={"rows": 30, "cols": 100, "class": "vLargeTextField"})}

    spec: RubricSpec | None = None

    def clean_yaml(self) -> str:
        """Every problem of the YAML, each with its key path, as the field's errors."""
        text = self.cleaned_data["yaml"]
        try:
            self.spec = parse_rubric(text)
        except ProblemsError as error:
            raise ValidationError([str(problem) for problem in error.problems], code="rubric") from None
        if self.instance.pk is not None and self.spec.name != self.instance.name:
            raise ValidationError(
                f'name: "{self.spec.name}" is not this rubric\'s name: a rubric keeps its name '
                f'("{self.instance.name}")',
                code="rubric",
            )
        if self.instance.pk is None and Rubric.objects.filter(name=self.spec.name).exists():
            raise ValidationError(
                f'name: a rubric named "{self.spec.name}" already exists: edit it to make a new version',
                code="rubric",
            )
        return text


class RubricVersionInline(admin.TabularInline):
    """The versions, newest first; never edited (results point at them)."""

    model = RubricVersion
    fields = ("number", "created_at", "created_by", "summary")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-number",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="criteria, gates, outcomes")
    def summary(self, version: RubricVersion) -> str:
        spec = version.spec
        criteria, gates = len(spec.get("criteria", [])), len(spec.get("gates", []))
        return (
            f"{criteria} criteri{'on' if criteria == 1 else 'a'}, {gates} gate{'' if gates == 1 else 's'}, "
            f"outcomes: {', '.join(o['name'] for o in spec.get('outcomes', []))}"
        )


class EvaluateForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.order_by("name"))


@admin.register(Rubric)
class RubricAdmin(AuditedDeletes, admin.ModelAdmin):
    form = RubricForm
    list_display = ("name", "title", "current_version", "updated_at")
    search_fields = ("name", "title")
    readonly_fields = ("name", "title", "created_at", "updated_at")
    inlines = [RubricVersionInline]
    actions = ["evaluate"]
    audit_delete_action = "rubric.delete"

    def audit_scope(self, rubric: Rubric) -> str:
        return rubric.name

    def get_fields(self, request: HttpRequest, obj: Rubric | None = None) -> tuple[str, ...]:
        return ("yaml",) if obj is None else ("name", "title", "yaml", "created_at", "updated_at")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Rubric]:
        return super().get_queryset(request).prefetch_related("versions")

    @admin.display(description="version")
    def current_version(self, rubric: Rubric) -> str:
        numbers = [version.number for version in rubric.versions.all()]
        return f"v{max(numbers)}" if numbers else "-"

    def save_model(self, request: HttpRequest, obj: Rubric, form: RubricForm, change: bool) -> None:
        saved = rubric_save(yaml_text=obj.yaml, user=request.user, name=obj.name if change else None)
        # The admin goes on with ``obj`` (its log entry, the inlines): make it the saved rubric.
        for field in Rubric._meta.concrete_fields:
            setattr(obj, field.attname, getattr(saved.rubric, field.attname))
        obj._state.adding, obj._state.db = False, saved.rubric._state.db
        if saved.changed and change:
            messages.info(request, f"Saved as version {saved.version.number}; results keep their versions.")
        for warning in saved.spec.warnings:
            messages.warning(request, warning)

    @admin.action(description="Evaluate on a project (automatic checks)", permissions=["change"])
    def evaluate(self, request: HttpRequest, queryset: QuerySet[Rubric]) -> HttpResponse | None:
        """Ask for the project, then run the selected rubrics' automatic checks over its items."""
        form = EvaluateForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            project = form.cleaned_data["project"]
            last = None
            for rubric in queryset:
                try:
                    summary = project_evaluate(project=project, rubric=rubric)
                except NoVersion as error:
                    self.message_user(request, str(error), messages.ERROR)
                    continue
                self.message_user(request, summary.line(project.name), messages.SUCCESS)
                last = rubric
            if last is not None:
                return HttpResponseRedirect(reverse("evaluation:report", args=[project.name, last.name]))
            return None
        context = {
            **self.admin_site.each_context(request),
            "title": "Evaluate on a project",
            "rubrics": queryset,
            "form": form,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/evaluation/rubric/evaluate.html", context)


@admin.register(EvaluationResult)
class EvaluationResultAdmin(AuditedDeletes, admin.ModelAdmin):
    """Results are computed, never edited: read-only, filtered like a report."""

    audit_delete_action = "evaluation.result_delete"

    def audit_scope(self, result: EvaluationResult) -> str:
        return result.project.name

    list_display = ("tree", "node", "source", "score", "outcome", "version", "project", "computed_at")
    list_filter = (
        ("project", admin.RelatedOnlyFieldListFilter),
        ("rubric_version__rubric", admin.RelatedOnlyFieldListFilter),
        "source",
        "outcome",
    )
    list_select_related = ("tree", "project", "rubric_version__rubric")
    search_fields = ("tree__external_id__exact",)
    search_help_text = "An item id, exactly."
    show_full_result_count = False
    fields = (
        "project",
        "tree",
        "node",
        "rubric_version",
        "source",
        "score",
        "outcome",
        "details",
        "explanation_text",
        "votes",
        "model_name",
        "computed_at",
    )
    readonly_fields = fields

    @admin.display(description="version", ordering="rubric_version")
    def version(self, result: EvaluationResult) -> str:
        return str(result.rubric_version)

    @admin.display(description="explanation")
    def explanation_text(self, result: EvaluationResult) -> str:
        return format_html('<pre class="evaluation-explanation">{}</pre>', result.explanation)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AgreementSnapshot)
class AgreementSnapshotAdmin(admin.ModelAdmin):
    """Each project's kept agreement figures: when, from how many answers, and the page that shows them."""

    list_display = ("project", "answers", "computed_at", "seconds", "page")
    list_select_related = ("project",)
    fields = ("project", "page", "answers", "computed_at", "seconds", "stamp")
    readonly_fields = fields
    actions = ["recompute"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AgreementSnapshot]:
        # The figures can be large: the list needs only their answer count.
        return super().get_queryset(request).defer("figures").annotate(answers=F("figures__annotations"))

    @admin.display(description="answers")
    def answers(self, snapshot: AgreementSnapshot) -> str:
        return f"{snapshot.answers:,}" if isinstance(snapshot.answers, int) else "-"

    @admin.display(description="agreement page")
    def page(self, snapshot: AgreementSnapshot) -> str:
        url = reverse("evaluation:agreement", args=[snapshot.project.name])
        return format_html('<a href="{}">Agreement in {}</a>', url, snapshot.project)

    @admin.action(description="Recompute agreement now", permissions=["view"])
    def recompute(self, request: HttpRequest, queryset: QuerySet[AgreementSnapshot]) -> None:
        for snapshot in queryset:
            figures = agreement_refresh(snapshot.project).figures
            self.message_user(
                request,
                f"{snapshot.project.name}: recomputed from {figures['annotations']:,} answers "
                f"in {figures['seconds']:.2f} s",
                messages.SUCCESS,
            )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
