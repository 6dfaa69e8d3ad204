"""The admin for projects, their members, and the judgements made in them.

Thin on purpose, like the trees admin: a project's configuration is checked
by the same parser the services use and saved through ``project_create`` /
``project_config_update``; members are added and removed through
``membership_add`` / ``membership_remove``; exports and the import page call
``annotations_export`` and ``annotations_import``, as the commands do.

Annotations and assignments are read-only here: they change through the
pages (with their version checks and lease counts) or through an import,
and a free edit in a form would bypass both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.forms import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from annotation.config import ProjectConfig, parse_config
from annotation.exports import EXPORTS, annotations_export, get_export
from annotation.gold import gold_answers_normalize, gold_item_set, gold_items_mark
from annotation.imports import AnnotationImportReport, annotations_import
from annotation.links import project_links
from annotation.models import Annotation, ApiToken, Assignment, Membership, Project, ProjectItem, Review
from annotation.problems import ProblemsError
from annotation.projects import (
    membership_add,
    membership_remove,
    project_config_update,
    project_create,
    project_update,
)
from annotation.quality import project_quality
from annotation.tokens import token_create, tokens_revoke
from trees.admin import AuditedDeletes
from trees.downloads import export_action, file_download, joined

IMPORT_URL_NAME = "annotation_annotation_import"


def _changelist_url(model: type, **filters: Any) -> str:
    url = reverse(f"admin:annotation_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


def _count_of(queryset: QuerySet, group_by: str) -> Coalesce:
    """A correlated ``COUNT(*)``: one number per row in the same query, without multiplying rows."""
    counted = queryset.order_by().values(group_by).annotate(count=Count("pk")).values("count")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


# Projects: configuration checked on the form, members inline, exports as actions


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ("name", "title", "dataset", "mode", "config_yaml", "instructions")
        widgets = {"config_yaml": forms.Textarea(attrs={"rows": 24, "cols": 100, "class": "vLargeTextField"})}

    parsed_config: ProjectConfig | None = None

    def clean_config_yaml(self) -> str:
        """Every problem of the YAML, each with its key path, as the field's errors."""
        text = self.cleaned_data["config_yaml"]
        try:
            self.parsed_config = parse_config(text)
        except ProblemsError as error:
            raise ValidationError([str(problem) for problem in error.problems], code="config") from None
        return text


class MembershipInline(admin.TabularInline):
    """Members and their roles. A row is added or removed, not edited: a new role is a new row."""

    model = Membership
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    autocomplete_fields = ("user",)
    extra = 1

    def get_queryset(self, request: HttpRequest) -> QuerySet[Membership]:
        return super().get_queryset(request).select_related("user")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def export_response(projects: list[Project], format_name: str) -> StreamingHttpResponse:
    """The projects' submitted annotations in ``format_name``, one project after another."""
    # Asked for now, while the request says who asks (for the audit log); read as the response streams.
    exports = [annotations_export(project=project, format_name=format_name) for project in projects]
    stem = projects[0].name if len(projects) == 1 else f"{len(projects)}-projects"
    kind = get_export(format_name).FILE
    return file_download(joined(exports), kind=kind, filename=f"{stem}.{format_name}.{kind.extension}")


def _export_action(format_name: str) -> Callable[..., StreamingHttpResponse | None]:
    kind = get_export(format_name).FILE
    return export_action(
        format_name=format_name,
        kind=kind,
        model=Project,
        noun="project",
        description=f"Export submitted annotations as {format_name} ({kind.extension.upper()})",
        respond=export_response,
    )


@admin.register(Project)
class ProjectAdmin(AuditedDeletes, admin.ModelAdmin):
    form = ProjectForm
    list_display = ("name", "title", "dataset", "mode", "item_count", "submitted_count", "created_at")
    list_filter = ("mode",)
    list_select_related = ("dataset",)
    search_fields = ("name", "title")
    inlines = [MembershipInline]
    actions = [_export_action(name) for name in EXPORTS]
    change_form_template = "admin/annotation/project/change_form.html"
    audit_delete_action = "project.delete"

    def audit_scope(self, project: Project) -> str:
        return project.name

    def get_queryset(self, request: HttpRequest) -> QuerySet[Project]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                item_count=_count_of(ProjectItem.objects.filter(project=OuterRef("pk")), "project"),
                submitted_count=_count_of(
                    Annotation.objects.filter(project=OuterRef("pk"), status=Annotation.Status.SUBMITTED),
                    "project",
                ),
            )
        )

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Project | None = None,
    ) -> Any:
        # The links other apps register for a project's page (evaluation: rubric reports, agreement).
        context["project_links"] = project_links(request.user, obj) if obj is not None else []
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Project | None = None) -> tuple[str, ...]:
        # A project's answers name the nodes of its dataset's trees: it cannot move to another dataset.
        return ("dataset", "annotator_quality") if obj is not None else ()

    @admin.display(description="annotator quality")
    def annotator_quality(self, project: Project) -> str:
        """Accuracy on gold items, flags and training (annotation.quality), as the quality page has them."""
        report = project_quality(project=project)
        url = reverse("annotation:quality", kwargs={"name": project.name})
        rows = format_html_join(
            "",
            "<li>{}{}: {} on {} gold answer(s); training {}</li>",
            (
                (
                    annotator.username,
                    " (flagged)" if annotator.flagged else "",
                    f"{annotator.accuracy:.0%}" if annotator.accuracy is not None else "no accuracy yet",
                    annotator.gold_answered,
                    annotator.training,
                )
                for annotator in report.annotators
            ),
        )
        gold = len(report.gold_items)
        return format_html(
            '<p>{} gold item(s). <a href="{}">The quality page</a></p><ul>{}</ul>', gold, url, rows
        )

    @admin.display(description="items", ordering="item_count")
    def item_count(self, project: Project) -> str:
        return f"{project.item_count:,}"

    @admin.display(description="submitted answers", ordering="submitted_count")
    def submitted_count(self, project: Project) -> str:
        url = _changelist_url(Annotation, project__id__exact=project.pk, status__exact="submitted")
        return format_html('<a href="{}">{}</a>', url, f"{project.submitted_count:,}")

    def save_model(self, request: HttpRequest, obj: Project, form: ProjectForm, change: bool) -> None:
        if change:
            project_update(project=obj, fields=[name for name in form.changed_data if name != "config_yaml"])
            if "config_yaml" in form.changed_data:
                project_config_update(project=obj, config_yaml=obj.config_yaml)
        else:
            created = project_create(
                name=obj.name,
                dataset=obj.dataset,
                config_yaml=obj.config_yaml,
                title=obj.title,
                instructions=obj.instructions,
                mode=obj.mode,
            )
            # The admin goes on with ``obj`` (its log entry, the inlines): make it the saved project.
            for field in Project._meta.concrete_fields:
                setattr(obj, field.attname, getattr(created, field.attname))
            obj._state.adding, obj._state.db = False, created._state.db
        if form.parsed_config is not None and (not change or "config_yaml" in form.changed_data):
            self._config_warnings(request, form.parsed_config)

    def _config_warnings(self, request: HttpRequest, config: ProjectConfig) -> None:
        if config.ignored:
            messages.warning(
                request, f"Ignored (Potato settings Branchpoint does not use): {', '.join(config.ignored)}"
            )
        for note in config.notes:
            messages.warning(request, note)

    def save_formset(
        self, request: HttpRequest, form: ProjectForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        if formset.model is not Membership:
            super().save_formset(request, form, formset, change)
            return
        # Collect the rows' changes without saving them, then apply them through the services.
        formset.save(commit=False)
        project = form.instance
        for membership in formset.deleted_objects:
            membership_remove(project=project, user=membership.user, role=membership.role)
        for membership in formset.new_objects:
            membership_add(project=project, user=membership.user, role=membership.role)


# Annotations and assignments: read-only, with an import page


class AnnotationImportForm(forms.Form):
    """What ``import_annotations`` takes on the command line, as a form."""

    project = forms.ModelChoiceField(queryset=Project.objects.order_by("name"))
    file = forms.FileField(
        help_text="Records as export_annotations --format potato writes them: JSONL or a JSON array "
        "(a gzip file is read as such). All or nothing."
    )


def import_from_form(form: AnnotationImportForm) -> AnnotationImportReport:
    upload = form.cleaned_data["file"]
    upload.seek(0)
    return annotations_import(project=form.cleaned_data["project"], source=upload.file)


class ReadOnlyAdmin(admin.ModelAdmin):
    # Counting a large table for "N total" costs more than the page.
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting would leave the items' counts wrong


@admin.register(Annotation)
class AnnotationAdmin(ReadOnlyAdmin):
    list_display = ("tree", "user", "scheme", "status", "source", "project", "updated_at")
    list_filter = (
        ("project", admin.RelatedOnlyFieldListFilter),
        "status",
        "scheme",
        "source",
        ("user", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("project", "tree", "user")
    search_fields = ("tree__external_id__exact", "user__username__exact")
    search_help_text = "An item id or a username, exactly."
    fields = (
        "project",
        "tree",
        "user",
        "scheme",
        "status",
        "source",
        "version",
        "answer",
        "created_at",
        "updated_at",
        "submitted_at",
    )
    readonly_fields = fields
    change_list_template = "admin/annotation/annotation/change_list.html"

    @admin.display(description="answer")
    def answer(self, annotation: Annotation) -> str:
        return format_html("<pre>{}</pre>", json.dumps(annotation.payload, indent=2, ensure_ascii=False))

    def get_urls(self) -> list[URLPattern]:
        # Before the default patterns, whose "<path:object_id>/" would take "import/".
        return [
            path("import/", self.admin_site.admin_view(self.import_view), name=IMPORT_URL_NAME),
            *super().get_urls(),
        ]

    def has_import_permission(self, request: HttpRequest) -> bool:
        return request.user.is_staff and request.user.has_perm("annotation.add_annotation")

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        extra_context = {
            **(extra_context or {}),
            "can_import_annotations": self.has_import_permission(request),
        }
        return super().changelist_view(request, extra_context)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a file: on success a summary and the project's answers, otherwise every problem."""
        if not self.has_import_permission(request):
            raise PermissionDenied
        report = None
        if request.method == "POST":
            form = AnnotationImportForm(request.POST, request.FILES)
            if form.is_valid():
                report = import_from_form(form)
                if report.committed:
                    messages.success(request, report.summary())
                    project = form.cleaned_data["project"]
                    return HttpResponseRedirect(_changelist_url(Annotation, project__id__exact=project.pk))
        else:
            form = AnnotationImportForm(initial={"project": request.GET.get("project")})
        context = {
            **self.admin_site.each_context(request),
            "title": "Import annotations",
            "opts": self.opts,
            "has_view_permission": self.has_view_permission(request),
            "form": form,
            "report": report,
            "import_kind": "annotations",
        }
        return TemplateResponse(request, "admin/import_form.html", context)


class ReviewInline(admin.TabularInline):
    """The decisions on an annotator's work, newest first; taken on the review pages, not here."""

    model = Review
    fields = ("decision", "reviewer", "comment", "version", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Review]:
        return super().get_queryset(request).select_related("reviewer")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = (
        "tree",
        "user",
        "status",
        "review_status",
        "kind",
        "gold_score",
        "project",
        "version",
        "leased_at",
        "lease_expires_at",
        "submitted_at",
    )
    list_filter = (
        ("project", admin.RelatedOnlyFieldListFilter),
        "status",
        "review_status",
        "kind",
        ("user", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("project", "tree", "user")
    search_fields = ("tree__external_id__exact", "user__username__exact")
    search_help_text = "An item id or a username, exactly."
    fields = (
        "project",
        "tree",
        "user",
        "status",
        "review_status",
        "kind",
        "gold_score",
        "version",
        "leased_at",
        "lease_expires_at",
        "submitted_at",
        "updated_at",
        "time_spent_ms",
    )
    readonly_fields = fields
    inlines = [ReviewInline]


# Reviews: decisions are taken on the review pages (annotation.review), read here


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ("item", "annotator", "decision", "reviewer", "project", "version", "created_at")
    list_filter = (
        ("assignment__project", admin.RelatedOnlyFieldListFilter),
        "decision",
        ("reviewer", admin.RelatedOnlyFieldListFilter),
    )
    list_select_related = ("assignment__project", "assignment__tree", "assignment__user", "reviewer")
    search_fields = ("assignment__tree__external_id__exact", "assignment__user__username__exact")
    search_help_text = "An item id or an annotator's username, exactly."
    fields = ("assignment", "reviewer", "decision", "comment", "version", "created_at")
    readonly_fields = fields

    @admin.display(description="item", ordering="assignment__tree__external_id")
    def item(self, review: Review) -> str:
        return review.assignment.tree.external_id

    @admin.display(description="annotator", ordering="assignment__user__username")
    def annotator(self, review: Review) -> str:
        return review.assignment.user.get_username()

    @admin.display(description="project", ordering="assignment__project__name")
    def project(self, review: Review) -> Project:
        return review.assignment.project


# API tokens: made here (the secret shown once), revoked, never edited


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


# Project items: marking gold items and their expected answers (annotation.gold)


class GoldItemForm(forms.ModelForm):
    """An item's expected answers as JSON (payloads by scheme name), checked by the project's schemes."""

    class Meta:
        model = ProjectItem
        fields = ("is_gold", "gold_answers", "gold_explanation")
        widgets = {
            "gold_answers": forms.Textarea(attrs={"rows": 12, "cols": 100, "class": "vLargeTextField"})
        }
        labels = {"gold_answers": "Expected answers", "gold_explanation": "Explanation"}
        help_texts = {
            "gold_answers": 'Answers by scheme name, as annotators give them: {"sentiment": {"label": '
            '"positive"}} (or Potato\'s bare values: {"sentiment": "positive"}).',
            "gold_explanation": "Shown to annotators after they answer the item in training.",
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if "gold_answers" in cleaned:
            try:
                cleaned["gold_answers"] = gold_answers_normalize(
                    item=self.instance, answers=cleaned["gold_answers"], is_gold=cleaned.get("is_gold", False)
                )
            except ProblemsError as error:
                self.add_error("gold_answers", [str(problem) for problem in error.problems])
        return cleaned


@admin.register(ProjectItem)
class ProjectItemAdmin(admin.ModelAdmin):
    """A project's items. Only gold is edited here: the counts belong to hand-out, the items
    to the dataset (they are added and removed with its trees)."""

    form = GoldItemForm
    list_display = ("tree", "project", "is_gold", "has_answers", "active_count", "submitted_count")
    list_filter = (("project", admin.RelatedOnlyFieldListFilter), "is_gold")
    list_select_related = ("project", "tree")
    search_fields = ("tree__external_id__exact",)
    search_help_text = "An item id, exactly."
    show_full_result_count = False
    readonly_fields = ("project", "tree", "active_count", "submitted_count")
    fields = (*readonly_fields, "is_gold", "gold_answers", "gold_explanation")
    actions = ["mark_gold", "unmark_gold"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="expected answers", boolean=True)
    def has_answers(self, item: ProjectItem) -> bool:
        return bool(item.gold_answers)

    def save_model(self, request: HttpRequest, obj: ProjectItem, form: GoldItemForm, change: bool) -> None:
        gold_item_set(
            item=obj, answers=obj.gold_answers, explanation=obj.gold_explanation, is_gold=obj.is_gold
        )

    @admin.action(
        permissions=["change"], description="Mark the selected items gold (those with expected answers)"
    )
    def mark_gold(self, request: HttpRequest, queryset: QuerySet[ProjectItem]) -> None:
        changed, unanswered = gold_items_mark(items=queryset, is_gold=True)
        self.message_user(request, f"{changed:,} item{'s' if changed != 1 else ''} marked gold.")
        if unanswered:
            self.message_user(
                request,
                f"{unanswered:,} item{'s have' if unanswered != 1 else ' has'} no expected answers yet: "
                "open each to give them, or import them with manage.py import_gold.",
                messages.WARNING,
            )

    @admin.action(permissions=["change"], description="Unmark the selected gold items")
    def unmark_gold(self, request: HttpRequest, queryset: QuerySet[ProjectItem]) -> None:
        changed, _ = gold_items_mark(items=queryset, is_gold=False)
        self.message_user(request, f"{changed:,} item{'s' if changed != 1 else ''} no longer gold.")
