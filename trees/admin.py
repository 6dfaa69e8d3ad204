"""The admin for datasets, trees and messages: the main management surface.

Thin on purpose: imports and exports go through ``trees.services`` exactly as
the ``import_trees`` and ``export_trees`` commands do, and every read that
needs more than one row's fields comes from ``trees.selectors``.

Trees and messages are read-only here. They come from imports (a correction
is a re-import with "replace"), and a tree's state belongs to the collection
workflow, whose transitions also settle leases and tasks: a free edit of
either in a form would bypass both.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from trees.admin_imports import TreeImportForm, import_from_form, import_job_from_form
from trees.audit import audit_record, audit_record_many
from trees.deletion import dataset_protected_by
from trees.downloads import export_action, file_download, joined
from trees.formats import FORMATS, get_format
from trees.jobs.services import job_enqueue
from trees.models import AuditEntry, ConversationTree, Dataset, Message
from trees.selectors import datasets_with_counts, tree_outline, trees_with_counts
from trees.services import (
    dataset_create,
    dataset_update,
    trees_export,
)
from trees.tasks import DATASET_DELETE, dataset_delete_job

# A tree page lists its messages inline up to this many; beyond, the page
# would grow with the tree, so it links to the message list instead.
INLINE_MESSAGE_LIMIT = 200
SHORT_TEXT_CHARS = 80


def changelist_url(model: type, **filters: Any) -> str:
    """The admin's list of ``model`` (any app's), filtered by ``filters``."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    return f"{url}?{urlencode(filters)}" if filters else url


class DeletesWholeTrees:
    """Deleting a dataset or a tree: a summary of what goes with it, by counts.

    Django's own confirmation page lists every related object, which for a
    dataset means every message. This one counts, per model, what the
    delete cascades to (found through the reverse relations, so this app
    needs to know nothing of the apps built on it) and lists what protects
    the objects (a project over a dataset). Messages cannot be deleted on
    their own (``MessageAdmin``); permission to delete the tree is what counts.
    """

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, set[str], Any]:
        objs = list(objs)
        model = self.model  # type: ignore[attr-defined]
        counts: dict[str, int] = {model._meta.verbose_name_plural: len(objs)}
        protected: list[str] = []
        if model is Dataset:
            trees = ConversationTree.objects.filter(dataset__in=objs)
            counts[ConversationTree._meta.verbose_name_plural] = trees.count()
            protected = _protecting(Dataset, objs)
        else:
            trees = ConversationTree.objects.filter(pk__in=[obj.pk for obj in objs])
        protected += _protecting(ConversationTree, trees)
        for relation in ConversationTree._meta.related_objects:
            if relation.on_delete is models.CASCADE:
                related = relation.related_model
                count = related._default_manager.filter(**{f"{relation.field.name}__in": trees}).count()
                if count:
                    counts[related._meta.verbose_name_plural] = count
        summary = [f"{model._meta.verbose_name}: {obj}" for obj in objs]
        summary += [
            f"{count:,} {name}" for name, count in counts.items() if name != model._meta.verbose_name_plural
        ]
        perms_needed = set() if self.has_delete_permission(request) else {model._meta.verbose_name}  # type: ignore[attr-defined]
        return summary, counts, perms_needed, protected


def _protecting(model: type[models.Model], objs: Any) -> list[str]:
    """Objects that refuse the delete of ``objs`` (``on_delete=PROTECT``), named."""
    found = []
    for relation in model._meta.related_objects:
        if relation.on_delete is models.PROTECT:
            related = relation.related_model
            for obj in related._default_manager.filter(**{f"{relation.field.name}__in": objs})[:20]:
                found.append(f"{related._meta.verbose_name}: {obj}")
    return found


# Deletes in the admin, logged


class AuditedDeletes:
    """Deleting through the admin leaves an audit entry per object, in the delete's transaction.

    For models whose only delete is the admin's own (no service deletes them):
    ``audit_delete_action`` names the action, ``audit_scope`` the scope.
    """

    audit_delete_action = ""

    def audit_scope(self, obj: Any) -> str:
        return ""

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            audit_record(self.audit_delete_action, target=obj, scope=self.audit_scope(obj))
            super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with transaction.atomic():
            audit_record_many(self.audit_delete_action, list(queryset), scope=self.audit_scope)
            super().delete_queryset(request, queryset)  # type: ignore[misc]


# Datasets: counts, import (its form: trees.admin_imports), export


def _export_filename(datasets: list[Dataset], format_name: str) -> str:
    # Dataset names are slugs, so they are safe in a file name as they are.
    stem = datasets[0].name if len(datasets) == 1 else f"{len(datasets)}-datasets"
    return f"{stem}.{format_name}.{get_format(format_name).FILE.extension}"


def export_response(datasets: list[Dataset], format_name: str) -> StreamingHttpResponse:
    """The datasets' trees in ``format_name``, one after another.

    Only formats whose files can be joined (JSONL) take several datasets at
    once. Item ids are only unique within a dataset: importing an export of
    several datasets into one may find repeated ids.
    """
    # Asked for now, while the request says who asks (for the audit log); read as the response streams.
    exports = [trees_export(dataset=dataset, format_name=format_name) for dataset in datasets]
    kind = get_format(format_name).FILE
    return file_download(joined(exports), kind=kind, filename=_export_filename(datasets, format_name))


def _export_action(format_name: str) -> Callable[..., StreamingHttpResponse | None]:
    kind = get_format(format_name).FILE
    return export_action(
        format_name=format_name,
        kind=kind,
        model=Dataset,
        noun="dataset",
        description=f"Export as {format_name} ({kind.extension.upper()})",
        respond=export_response,
    )


@admin.register(Dataset)
class DatasetAdmin(AuditedDeletes, DeletesWholeTrees, admin.ModelAdmin):
    list_display = ("name", "tree_count", "message_count", "created_at")
    search_fields = ("name",)
    fields = ("name", "description", "tree_count", "message_count", "created_at", "updated_at")
    readonly_fields = ("tree_count", "message_count", "created_at", "updated_at")
    actions = [*(_export_action(name) for name in FORMATS), "delete_in_a_job"]
    change_list_template = "admin/trees/dataset/change_list.html"
    audit_delete_action = "dataset.delete"

    @admin.action(
        description="Delete the selected datasets in a job (in batches: for large datasets)",
        permissions=["delete"],
    )
    def delete_in_a_job(self, request: HttpRequest, queryset: QuerySet[Dataset]) -> None:
        """The delete page's one transaction holds its locks for as long as a large dataset
        takes; a job deletes a batch of trees per transaction and shows its progress."""
        jobs_url = reverse("admin:jobs_job_changelist")
        for dataset in queryset:
            users = dataset_protected_by(dataset)
            if users:
                self.message_user(
                    request, f"{dataset.name}: used by {', '.join(users)}; delete those first", messages.ERROR
                )
                continue
            job = job_enqueue(
                kind=DATASET_DELETE,
                task=dataset_delete_job,
                created_by=request.user,
                via="admin",
                dataset_name=dataset.name,
                total=dataset.message_count,
                unit="messages",
            )
            self.message_user(request, f"{dataset.name}: job {job.pk} deletes it (its progress: {jobs_url})")

    def audit_scope(self, dataset: Dataset) -> str:
        return dataset.name

    def get_queryset(self, request: HttpRequest) -> QuerySet[Dataset]:
        return datasets_with_counts(super().get_queryset(request))

    def save_model(self, request: HttpRequest, obj: Dataset, form: forms.ModelForm, change: bool) -> None:
        if change:
            dataset_update(dataset=obj, fields=form.changed_data)
            return
        created = dataset_create(name=obj.name, description=obj.description)
        # The admin goes on with ``obj`` (its log entry, the redirect): make it the saved dataset.
        for field in Dataset._meta.concrete_fields:
            setattr(obj, field.attname, getattr(created, field.attname))
        obj._state.adding, obj._state.db = False, created._state.db

    @admin.display(description="trees", ordering="tree_count")
    def tree_count(self, dataset: Dataset) -> str:
        if dataset.pk is None:
            return "-"
        url = changelist_url(ConversationTree, dataset__id__exact=dataset.pk)
        return format_html('<a href="{}">{}</a>', url, f"{dataset.tree_count:,}")

    @admin.display(description="messages", ordering="message_count")
    def message_count(self, dataset: Dataset) -> str:
        return "-" if dataset.pk is None else f"{dataset.message_count:,}"

    def get_urls(self) -> list[URLPattern]:
        # Before the default patterns, whose "<path:object_id>/" would take "import/".
        return [
            path("import/", self.admin_site.admin_view(self.import_view), name="trees_dataset_import"),
            *super().get_urls(),
        ]

    def has_import_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("trees.add_conversationtree")

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        extra_context = {**(extra_context or {}), "can_import_trees": self.has_import_permission(request)}
        return super().changelist_view(request, extra_context)

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a file: on success a summary and the imported trees, otherwise every problem."""
        if not self.has_import_permission(request):
            raise PermissionDenied
        report = None
        if request.method == "POST":
            form = TreeImportForm(request.POST, request.FILES, user=request.user)
            if form.is_valid() and form.cleaned_data["file"].size > settings.BRANCHPOINT_JOB_THRESHOLD_BYTES:
                job = import_job_from_form(form, request)
                messages.info(request, f"Job {job.pk} imports the file: its progress is below.")
                return HttpResponseRedirect(reverse("admin:jobs_job_changelist"))
            if form.is_valid():
                report, dataset = import_from_form(form)
                if dataset is not None:
                    messages.success(request, report.summary())
                    if not report.errors:
                        return HttpResponseRedirect(
                            changelist_url(ConversationTree, dataset__id__exact=dataset.pk)
                        )
        else:
            form = TreeImportForm(user=request.user)
        context = {
            **self.admin_site.each_context(request),
            "title": "Import trees",
            "opts": self.opts,
            "has_view_permission": self.has_view_permission(request),
            "form": form,
            "report": report,
            "import_kind": "trees",
        }
        return TemplateResponse(request, "admin/import_form.html", context)


# Trees: read-only, with the whole tree drawn on the page


class MessageInline(admin.TabularInline):
    """The tree's messages as a table (only for trees up to ``INLINE_MESSAGE_LIMIT``)."""

    model = Message
    fk_name = "tree"
    fields = ("external_id", "parent_external_id", "role", "depth", "position", "short_text", "deleted")
    readonly_fields = fields
    ordering = ("depth", "position", "pk")
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[Message]:
        # The parent's id in the same query, without loading the parent's text.
        return super().get_queryset(request).annotate(parent_external=F("parent__external_id"))

    @admin.display(description="parent")
    def parent_external_id(self, message: Message) -> str:
        return message.parent_external or "-"

    @admin.display(description="text")
    def short_text(self, message: Message) -> str:
        return Truncator(message.text).chars(SHORT_TEXT_CHARS)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ConversationTree)
class ConversationTreeAdmin(AuditedDeletes, DeletesWholeTrees, admin.ModelAdmin):
    list_display = ("external_id", "dataset", "state", "message_count", "created_at")
    list_filter = ("dataset", "state")
    list_select_related = ("dataset",)
    # Case-sensitive prefix: no UPPER() around the column, and an exact id
    # (what people paste) matches too.
    search_fields = ("external_id__startswith",)
    search_help_text = "Tree ids starting with the text (case-sensitive)."
    fields = ("dataset", "external_id", "state", "metadata", "message_count", "created_at", "updated_at")
    readonly_fields = fields
    change_form_template = "admin/trees/conversationtree/change_form.html"
    audit_delete_action = "tree.delete"

    def audit_scope(self, tree: ConversationTree) -> str:
        return tree.dataset.name

    def get_queryset(self, request: HttpRequest) -> QuerySet[ConversationTree]:
        return trees_with_counts(super().get_queryset(request)).select_related("dataset")

    @admin.display(description="messages", ordering="message_count")
    def message_count(self, tree: ConversationTree) -> str:
        return f"{tree.message_count:,}"

    def get_inlines(self, request: HttpRequest, obj: ConversationTree | None) -> list[type]:
        if obj is not None and obj.message_count <= INLINE_MESSAGE_LIMIT:
            return [MessageInline]
        return []

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # trees come from imports

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # see the module docstring

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: ConversationTree | None = None,
    ) -> HttpResponse:
        if obj is not None:
            context["tree_outline"] = tree_outline(obj)
            if obj.message_count > INLINE_MESSAGE_LIMIT:
                context["message_count"] = obj.message_count
                context["message_list_url"] = changelist_url(Message, tree=obj.pk)
        return super().render_change_form(request, context, add, change, form_url, obj)


# Messages: read-only, found through their tree


class TreeListFilter(admin.SimpleListFilter):
    """Messages of one tree, chosen by a link from the tree's page.

    Offers no list of trees (there may be millions): it only shows, and lets
    one clear, the tree already chosen.
    """

    title = "tree"
    parameter_name = "tree"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[Any, str]]:
        value = self.value()
        if not value or not value.isdigit():
            return []
        return list(ConversationTree.objects.filter(pk=value).values_list("pk", "external_id"))

    def queryset(self, request: HttpRequest, queryset: QuerySet[Message]) -> QuerySet[Message]:
        value = self.value()
        if not value:
            return queryset
        return queryset.filter(tree_id=value) if value.isdigit() else queryset.none()


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ("tree", "external_id", "role", "short_text", "depth")
    list_display_links = ("external_id",)
    list_select_related = ("tree",)
    list_filter = (TreeListFilter, "role", "tree__dataset")
    search_fields = ("external_id__exact", "tree__external_id__exact")
    search_help_text = "A message id or a tree id, exactly."
    # Counting every message of a large table for "N total" costs more than the page.
    show_full_result_count = False
    fields = (
        "tree",
        "parent",
        "external_id",
        "role",
        "text",
        "lang",
        "depth",
        "position",
        "author",
        "synthetic",
        "model_name",
        "review_count",
        "review_result",
        "rank",
        "deleted",
        "metadata",
        "created_at",
    )
    readonly_fields = fields

    @admin.display(description="text")
    def short_text(self, message: Message) -> str:
        return Truncator(message.text).chars(SHORT_TEXT_CHARS)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # messages come from imports

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting one message would cut its replies off the tree.
        return False


# The audit log: read-only, searchable


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """Entries are written by the services and never edited, here or anywhere."""

    list_display = ("created_at", "actor_name", "via", "action", "target_link", "scope")
    list_display_links = ("created_at",)
    # Dates by "today", "past 7 days"...: a date hierarchy would read every entry's day for its links.
    list_filter = ("action", "via", "created_at")
    # Case-sensitive, as the trees' search: no UPPER() around the columns.
    search_fields = ("actor_name__exact", "scope__exact", "action__startswith", "target_repr__startswith")
    search_help_text = "A person or a scope (project, dataset) exactly, or how an action or a target starts."
    # The log only grows: counting all of it for "N total" would cost more than the page.
    show_full_result_count = False
    list_per_page = 100
    fields = (
        "created_at",
        "actor_name",
        "actor",
        "via",
        "action",
        "target_link",
        "target_type",
        "target_id",
        "scope",
        "details_json",
    )
    readonly_fields = fields

    @admin.display(description="target", ordering="target_repr")
    def target_link(self, entry: AuditEntry) -> str:
        url = _target_admin_url(entry)
        if url is None:
            return entry.target_repr or "-"
        return format_html('<a href="{}">{}</a>', url, entry.target_repr or entry.target_id)

    @admin.display(description="details")
    def details_json(self, entry: AuditEntry) -> str:
        return format_html("<pre>{}</pre>", json.dumps(entry.details, indent=2, ensure_ascii=False))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _target_admin_url(entry: AuditEntry) -> str | None:
    """The target's admin page, if it has one (the target may be gone since: the page says so)."""
    if not entry.target_type or not entry.target_id:
        return None
    try:
        model = apps.get_model(entry.target_type)
    except (LookupError, ValueError):
        return None
    if not admin.site.is_registered(model):
        return None
    try:
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}_change"
        return reverse(name, args=[entry.target_id])
    except NoReverseMatch:
        return None
