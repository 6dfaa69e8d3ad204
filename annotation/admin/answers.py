"""The admin of what annotators answered: annotations, assignments and review decisions, read-only.

They change through the pages (with their version checks and lease counts) or
through an import; a free edit in a form would bypass both.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from annotation.imports.annotations import AnnotationImportReport, annotations_import
from annotation.imports.tasks import ANNOTATIONS_IMPORT, annotations_import_job
from annotation.models import Annotation, Assignment, Project, Review
from trees.admin import changelist_url
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue


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
        "suggestion",
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
            if form.is_valid() and form.cleaned_data["file"].size > settings.BRANCHPOINT_JOB_THRESHOLD_BYTES:
                job = import_job_from_form(form, request)
                messages.info(request, f"Job {job.pk} imports the file: its progress is below.")
                return HttpResponseRedirect(reverse("admin:jobs_job_changelist"))
            if form.is_valid():
                report = import_from_form(form)
                if report.committed:
                    messages.success(request, report.summary())
                    project = form.cleaned_data["project"]
                    return HttpResponseRedirect(changelist_url(Annotation, project__id__exact=project.pk))
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


IMPORT_URL_NAME = "annotation_annotation_import"


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


def import_job_from_form(form: AnnotationImportForm, request: HttpRequest) -> Job:
    """A job importing the form's file (one above ``BRANCHPOINT_JOB_THRESHOLD_BYTES``)."""
    upload = form.cleaned_data["file"]
    upload.seek(0)
    return job_enqueue(
        kind=ANNOTATIONS_IMPORT,
        task=annotations_import_job,
        created_by=request.user,
        via="admin",
        project_name=form.cleaned_data["project"].name,
        source=upload.file,
        total=upload.size,
    )
