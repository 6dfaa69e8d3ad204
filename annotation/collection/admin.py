"""The admin of tree collection: trees with their states, tasks, messages, deletions, reports.

Read-only lists with actions that call the same services as the API and the
commands: halt and resume trees, retry their scoring, export them; soft-delete
a message with its replies and undo it. Each action checks, project by
project, that the admin may moderate it (``permissions.can_moderate``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.urls import reverse

from annotation import permissions
from annotation.collection.advance import scoring_retry
from annotation.collection.errors import WorkflowError
from annotation.collection.export import ExportFilters, collected_export
from annotation.collection.jobs import SCORING_RETRY, scoring_retry_job
from annotation.collection.models import CollectedTree, Deletion, ModeratedMessage, Report, Task
from annotation.collection.moderation import deletion_undo, message_delete, tree_halt, tree_resume
from annotation.models import Project
from trees.downloads import file_download, joined
from trees.formats.records import JSONL
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue
from trees.vocabulary import TREE_STATES


class ReadOnly(admin.ModelAdmin):
    """Rows change through the workflow's services (with their locks and counts), never a free edit."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _each(
    request: HttpRequest,
    objects: Iterable[Any],
    project_of: Callable[[Any], Project],
    act: Callable[[Any], str],
    name_of: Callable[[Any], str] = str,
) -> None:
    """Run ``act`` on each object the admin may moderate; report what happened, refusals included."""
    done = 0
    for obj in objects:
        project, name = project_of(obj), name_of(obj)
        if not permissions.can_moderate(request.user, project):
            messages.error(request, f"{name}: you may not moderate {project.name}")
            continue
        try:
            outcome = act(obj)
        except WorkflowError as refused:
            messages.error(request, f"{name}: {refused.message}")
        else:
            done += 1
            messages.success(request, f"{name}: {outcome}")
    if not done:
        messages.warning(request, "nothing was changed")


def _scoring_retry_enqueue(request: HttpRequest, project: Project, tree_ids: list[int]) -> Job:
    return job_enqueue(
        kind=SCORING_RETRY,
        task=scoring_retry_job,
        created_by=request.user,
        via="admin",
        project_name=project.name,
        params={"tree_ids": tree_ids},
        total=len(tree_ids),
        unit="trees",
    )


class TreeStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(state, state.replace("_", " ")) for state in TREE_STATES]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(tree__state=self.value()) if self.value() else queryset


@admin.register(CollectedTree)
class CollectedTreeAdmin(ReadOnly):
    list_display = (
        "tree",
        "project",
        "state",
        "lang",
        "goal_tree_size",
        "won_prompt_lottery_at",
        "created_at",
    )
    list_filter = ("project", TreeStateFilter, "lang")
    search_fields = ("tree__external_id",)
    list_select_related = ("tree", "project")
    actions = ("halt", "resume", "retry_scoring", "retry_scoring_in_a_job", "export_oasst")

    @admin.display(description="state", ordering="tree__state")
    def state(self, collected: CollectedTree) -> str:
        return collected.tree.state

    @admin.action(description="Halt the selected trees", permissions=["view"])
    def halt(self, request: HttpRequest, queryset: QuerySet[CollectedTree]) -> None:
        _each(
            request,
            queryset.select_related("tree", "project"),
            lambda collected: collected.project,
            lambda collected: (
                "now " + tree_halt(project=collected.project, tree_id=collected.pk).replace("_", " ")
            ),
        )

    @admin.action(description="Resume the selected (halted) trees", permissions=["view"])
    def resume(self, request: HttpRequest, queryset: QuerySet[CollectedTree]) -> None:
        _each(
            request,
            queryset.select_related("tree", "project"),
            lambda collected: collected.project,
            lambda collected: (
                "now " + tree_resume(project=collected.project, tree_id=collected.pk).replace("_", " ")
            ),
        )

    @admin.action(
        description="Retry the scoring of the selected trees (scoring failed)", permissions=["view"]
    )
    def retry_scoring(self, request: HttpRequest, queryset: QuerySet[CollectedTree]) -> None:
        by_project: dict[Project, list[int]] = {}
        for collected in queryset.select_related("project"):
            by_project.setdefault(collected.project, []).append(collected.pk)
        _each(
            request,
            by_project.items(),
            lambda item: item[0],
            lambda item: scoring_retry(project=item[0], tree_ids=item[1]).summary(),
            name_of=lambda item: item[0].name,
        )

    @admin.action(
        description="Retry the scoring of the selected trees in a job (many trees)", permissions=["view"]
    )
    def retry_scoring_in_a_job(self, request: HttpRequest, queryset: QuerySet[CollectedTree]) -> None:
        by_project: dict[Project, list[int]] = {}
        for collected in queryset.select_related("project"):
            by_project.setdefault(collected.project, []).append(collected.pk)
        _each(
            request,
            by_project.items(),
            lambda item: item[0],
            lambda item: (
                f"job {_scoring_retry_enqueue(request, *item).pk} retries the scoring "
                f"(its progress: {reverse('admin:jobs_job_changelist')})"
            ),
            name_of=lambda item: item[0].name,
        )

    @admin.action(
        description="Export the selected trees (Open-Assistant JSONL, every state)", permissions=["view"]
    )
    def export_oasst(self, request: HttpRequest, queryset: QuerySet[CollectedTree]) -> StreamingHttpResponse:
        chosen = list(queryset.values_list("project_id", "pk"))
        projects = {project.pk: project for project in Project.objects.filter(pk__in={p for p, _ in chosen})}
        every_state = ExportFilters(states=TREE_STATES)

        # Asked for now, while the request says who asks (for the audit log); read as the response streams.
        exports = [
            collected_export(
                project=project,
                filters=every_state,
                tree_ids=[pk for owner, pk in chosen if owner == project_id],
            )
            for project_id, project in projects.items()
        ]
        return file_download(joined(exports), kind=JSONL, filename="trees.oasst.jsonl")


@admin.register(Task)
class TaskAdmin(ReadOnly):
    list_display = (
        "pk",
        "type",
        "shown_status",
        "user",
        "project",
        "tree",
        "created_at",
        "expires_at",
        "done_at",
    )
    list_filter = ("project", "type", "status", "dont_show_again")
    search_fields = ("user__username", "tree__external_id", "message__external_id")
    list_select_related = ("user", "project", "tree")
    date_hierarchy = "created_at"

    @admin.display(description="status")
    def shown_status(self, task: Task) -> str:
        return task.shown_status


@admin.register(ModeratedMessage)
class ModeratedMessageAdmin(ReadOnly):
    """The messages of collected trees, with soft deletion (and its undo on the deletions' page)."""

    list_display = (
        "external_id",
        "tree",
        "role",
        "short_text",
        "review_count",
        "review_result",
        "rank",
        "deleted",
    )
    list_filter = ("deleted", "role", "review_result")
    search_fields = ("external_id", "tree__external_id", "text")
    list_select_related = ("tree",)
    actions = ("soft_delete",)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ModeratedMessage]:
        return super().get_queryset(request).filter(tree__collected__isnull=False)

    @admin.display(description="text")
    def short_text(self, message: ModeratedMessage) -> str:
        return message.text[:80]

    @admin.action(
        description="Delete the selected messages with their replies (undoable)", permissions=["view"]
    )
    def soft_delete(self, request: HttpRequest, queryset: QuerySet[ModeratedMessage]) -> None:
        def delete(message: ModeratedMessage) -> str:
            deletion = message_delete(
                project=message.tree.collected.project, message=message, by=request.user
            )
            return f"deleted with {len(deletion.message_ids) - 1} replies"

        _each(
            request,
            queryset.select_related("tree__collected__project"),
            lambda m: m.tree.collected.project,
            delete,
        )


@admin.register(Deletion)
class DeletionAdmin(ReadOnly):
    list_display = (
        "message",
        "tree",
        "project",
        "size",
        "by",
        "reason",
        "created_at",
        "undone_at",
        "undone_by",
    )
    list_filter = ("project",)
    list_select_related = ("message", "tree", "project", "by", "undone_by")
    actions = ("undo",)

    @admin.display(description="messages")
    def size(self, deletion: Deletion) -> int:
        return len(deletion.message_ids)

    @admin.action(description="Undo the selected deletions", permissions=["view"])
    def undo(self, request: HttpRequest, queryset: QuerySet[Deletion]) -> None:
        def undo(deletion: Deletion) -> str:
            deletion_undo(project=deletion.project, deletion=deletion, by=request.user)
            return f"{len(deletion.message_ids)} messages restored"

        _each(request, queryset, lambda deletion: deletion.project, undo)


@admin.register(Report)
class ReportAdmin(ReadOnly):
    list_display = ("message", "project", "user", "reason", "created_at")
    list_filter = ("project",)
    list_select_related = ("message", "project", "user")
