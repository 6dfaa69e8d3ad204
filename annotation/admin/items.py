"""The admin of a project's items: marking gold items with their expected answers."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from annotation.models import ProjectItem
from annotation.problems import ProblemsError
from annotation.quality.gold import gold_answers_normalize, gold_item_set, gold_items_mark
from annotation.review.finals import gold_from_finals


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
    actions = ["mark_gold", "unmark_gold", "gold_from_finals"]

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

    @admin.action(permissions=["change"], description="Make the selected items gold from their final answers")
    def gold_from_finals(self, request: HttpRequest, queryset: QuerySet[ProjectItem]) -> None:
        """The adjudicated final answers become the expected ones (annotation.review.finals)."""
        made = 0
        by_project: dict[Any, list[int]] = {}
        for item in queryset.select_related("project"):
            by_project.setdefault(item.project, []).append(item.tree_id)
        for project, tree_ids in by_project.items():
            made += gold_from_finals(project=project, tree_ids=tree_ids)
        self.message_user(
            request, f"{made:,} item{'s' if made != 1 else ''} made gold from their final answers."
        )
        if made < queryset.count():
            self.message_user(
                request,
                "Items without a final answer were left as they were: adjudicate them first.",
                messages.WARNING,
            )
