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

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import OuterRef, QuerySet
from django.forms import BaseInlineFormSet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from annotation import permissions
from annotation.collection.jobs import backlog_enqueue
from annotation.exports import EXPORTS, annotations_export, get_export
from annotation.models import Annotation, Membership, Project, ProjectItem
from annotation.problems import ProblemsError
from annotation.projects.config import ProjectConfig, parse_config
from annotation.projects.links import project_links
from annotation.projects.services import (
    membership_add,
    membership_remove,
    project_config_update,
    project_create,
    project_update,
)
from annotation.quality.report import project_quality
from trees.admin import AuditedDeletes, changelist_url
from trees.downloads import export_action, file_download, joined
from trees.selectors import count_of

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
    actions = [*(_export_action(name) for name in EXPORTS), "backlog_in_a_job"]
    change_form_template = "admin/annotation/project/change_form.html"
    audit_delete_action = "project.delete"

    def audit_scope(self, project: Project) -> str:
        return project.name

    def get_queryset(self, request: HttpRequest) -> QuerySet[Project]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                item_count=count_of(ProjectItem.objects.filter(project=OuterRef("pk")), "project"),
                submitted_count=count_of(
                    # Annotators' answers: a corpus's reference answers are nobody's work.
                    Annotation.objects.of_annotators().filter(
                        project=OuterRef("pk"), status=Annotation.Status.SUBMITTED
                    ),
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
        """Accuracy on gold items, flags and training, as the quality page has them (annotation.quality)."""
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
        url = changelist_url(Annotation, project__id__exact=project.pk, status__exact="submitted")
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

    @admin.action(
        description="Put the dataset's uncollected trees in the ranking backlog, in a job (collect projects)",
        permissions=["view"],
    )
    def backlog_in_a_job(self, request: HttpRequest, queryset: QuerySet[Project]) -> None:
        for project in queryset:
            if project.mode != Project.Mode.COLLECT:
                messages.error(request, f"{project.name}: does not collect trees; it has no ranking backlog")
            elif not permissions.can_moderate(request.user, project):
                messages.error(request, f"{project.name}: you may not moderate it")
            else:
                job = backlog_enqueue(project=project, user=request.user, via="admin")
                messages.success(
                    request,
                    f"{project.name}: job {job.pk} fills the ranking backlog "
                    f"(its progress: {reverse('admin:jobs_job_changelist')})",
                )

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


# Reviews: decisions are taken on the review pages (annotation.review.services), read here


# API tokens: made here (the secret shown once), revoked, never edited


# Project items: marking gold items and their expected answers (annotation.quality.gold)
