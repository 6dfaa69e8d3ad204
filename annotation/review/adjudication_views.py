"""The adjudicator's pages: the items still to adjudicate, and one item's final answer.

Thin views over ``annotation.review.adjudication`` (reads) and
``annotation.review.finals`` (writes). The item page is a plain form: per
field a radio per annotator plus "edit" (a JSON value), agreed fields
prefilled, disagreements first; buttons take one annotator's whole answer. A
refused save is redrawn with what was chosen and each problem at its field
(400), or with a reload link when someone saved first (409).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation import permissions
from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import ProjectConfig, project_config
from annotation.review.adjudication import (
    AdjudicationItem,
    adjudication_item,
    adjudication_queue,
    scheme_kinds,
)
from annotation.review.finals import final_save, gold_from_finals
from annotation.review.merging import EDITED, answer_fields, comparable
from annotation.review.views import MAX_VERSION, _reviewed_project
from annotation.schemes.answer_text import answer_text
from annotation.work.submissions import StaleVersion

EDIT = "__edit__"
MAX_EDIT_LENGTH = 100_000


class PageForm(forms.Form):
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)


@require_http_methods(["GET", "POST"])
@login_required
def adjudication_list(request: HttpRequest, name: str) -> HttpResponse:
    """GET: items with submitted work and no final answer. POST (managers): gold from the finals."""
    project = _reviewed_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    can_manage = permissions.can_manage(request.user, project)
    if request.method == "POST":
        if not can_manage:
            context = {"message": "Making gold items is for the project's managers.", "project": project}
            return render(request, "annotation/forbidden.html", context, status=403)
        made = gold_from_finals(project=project)
        messages.success(
            request, f"Made {made} item{'s' if made != 1 else ''} gold from their final answers."
        )
        return redirect("annotation:adjudication", name=project.name)
    form = PageForm(request.GET)
    page = (form.cleaned_data.get("page") if form.is_valid() else None) or 1
    items, has_next = adjudication_queue(project=project, page=page)
    context = {
        "project": project,
        "items": items,
        "page": page,
        "has_next": has_next,
        "can_manage": can_manage,
    }
    return render(request, "annotation/adjudication_list.html", context)


@dataclass(frozen=True)
class Option:
    value: str  # the radio's value: an annotator's username
    label: str  # who
    text: str  # their value in words
    checked: bool


@dataclass(frozen=True)
class FieldRow:
    index: int
    name: str
    agreed: bool
    options: list[Option]
    edit_checked: bool
    edit_text: str
    problem: str
    message: str  # a node field's message (role: text), to judge its ratings by


def _in_words(config: ProjectConfig, name: str, value: Any) -> str:
    """A field's value as the review page words it: a scheme's answer or a node's rating in its
    words; a path, a comparison or a span as compact JSON."""
    if value is None:
        return "(no answer)"
    scheme_name, _, rest = name.partition("/")
    try:
        scheme = config.scheme(scheme_name)
    except KeyError:
        return json.dumps(value, ensure_ascii=False)
    if not rest:
        return answer_text(scheme, value) or json.dumps(value, ensure_ascii=False)
    node_scheme = getattr(scheme, "node_scheme", None)
    if rest.startswith("node/") and node_scheme is not None:
        return answer_text(node_scheme, value) or json.dumps(value, ensure_ascii=False)
    if rest == "path" and isinstance(value, list):
        return " → ".join(str(node) for node in value)
    if isinstance(value, dict):
        value = {key: part for key, part in value.items() if key != "shown_order"}
    return json.dumps(value, ensure_ascii=False)


def _rows(
    item: AdjudicationItem, config: ProjectConfig, sent: Any = None, problems: dict[str, str] | None = None
) -> list[FieldRow]:
    """The form's rows: what is checked comes from what was sent, else the saved final, else the prefill."""
    problems = problems or {}
    final = item.final
    final_fields = answer_fields(scheme_kinds(config), final.answers) if final is not None else {}
    rows = []
    for index, vote in enumerate(item.votes):
        chosen, edit_text = "", ""
        if sent is not None:
            chosen, edit_text = sent.get(f"choice-{index}", ""), sent.get(f"edit-{index}", "")
        elif final is not None:
            saved = comparable(final_fields.get(vote.name))
            source = final.provenance.get(vote.name, "")
            if source not in vote.values:  # edited, or the rule's: the annotator who gave it, if any
                source = next((user for user, value in vote.values.items() if comparable(value) == saved), "")
            chosen = source or EDIT
            if not source:
                edit_text = json.dumps(final_fields.get(vote.name), ensure_ascii=False)
        elif vote.name in item.prefill.fields:
            top = comparable(item.prefill.fields[vote.name])
            chosen = next((user for user, value in vote.values.items() if comparable(value) == top), "")
        if not edit_text:
            edit_text = json.dumps(vote.top_value, ensure_ascii=False)
        options = [
            Option(user, user, _in_words(config, vote.name, value), chosen == user)
            for user, value in vote.values.items()
        ]
        rows.append(
            FieldRow(
                index,
                vote.name,
                vote.agreed,
                options,
                chosen == EDIT,
                edit_text,
                problems.get(vote.name, ""),
                _message_of(item, vote.name),
            )
        )
    return rows


def _message_of(item: AdjudicationItem, name: str) -> str:
    """The message a node's rating, or a decision point's comparison, is about ("" for others)."""
    _, _, rest = name.partition("/")
    part, _, node = rest.partition("/")
    return item.messages.get(node, "") if part in ("node", "comparison") else ""


def _choices(item: AdjudicationItem, data: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The form's choices as ``final_save`` takes them, and the edits that are not JSON."""
    choices: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for index, vote in enumerate(item.votes):
        chosen = data.get(f"choice-{index}", "")
        if chosen == EDIT:
            text = data.get(f"edit-{index}", "")
            try:
                if len(text) > MAX_EDIT_LENGTH:
                    raise ValueError
                choices[vote.name] = {"value": json.loads(text)}
            except ValueError:
                problems[vote.name] = "The edited value is not JSON (a string needs its quotes)."
        elif chosen:
            choices[vote.name] = {"from": chosen}
    return choices, problems


@require_http_methods(["GET", "POST"])
@login_required
def adjudication_page(request: HttpRequest, name: str, tree_id: int) -> HttpResponse:
    """GET: the item's fields side by side with the final answer so far. POST: save the final answer."""
    project = _reviewed_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    item = adjudication_item(project=project, tree_id=tree_id, viewer=request.user)
    if request.method == "GET":
        return _render(request, project, item)
    try:
        version = int(request.POST.get("version", ""))
        if not 0 <= version <= MAX_VERSION:
            raise ValueError
    except ValueError:
        return _render(
            request, project, item, sent=request.POST, message="The form did not read: reload the page."
        )
    take = request.POST.get("take") or None
    choices, problems = ({}, {}) if take else _choices(item, request.POST)
    if problems:
        return _render(request, project, item, sent=request.POST, problems=problems)
    try:
        final = final_save(
            project=project,
            tree_id=item.tree.pk,
            by=request.user,
            version=version,
            take=take,
            choices=choices,
        )
    except ProblemsError as refused:
        located = {}
        general = []
        for problem in refused.problems:
            field = _field_of(problem.path, item)
            if field:
                located.setdefault(field, f"{problem.message}.")
            else:
                general.append(str(problem))
        return _render(
            request, project, item, sent=request.POST, problems=located, message="; ".join(general) or None
        )
    except StaleVersion as stale:
        message = (
            f"Someone saved this item's final answer while you were choosing (it is now at version "
            f"{stale.current}): reload the page to see it, then choose again."
        )
        return _render(request, project, item, sent=request.POST, message=message, status=409, stale=True)
    messages.success(request, f"Saved the final answer to {item.tree.external_id} (version {final.version}).")
    return redirect("annotation:adjudicate-item", name=project.name, tree_id=item.tree.pk)


def _field_of(path: str, item: AdjudicationItem) -> str:
    """The field a problem is about: ``fields.<field>`` from the choices, or the field of a
    scheme's path (its first part), so that it shows beside the radios."""
    if path.startswith("fields."):
        return next((vote.name for vote in item.votes if path[len("fields.") :].startswith(vote.name)), "")
    scheme = path.split(".")[0]
    return next((vote.name for vote in item.votes if vote.name.partition("/")[0] == scheme), "")


def _render(
    request: HttpRequest,
    project: Project,
    item: AdjudicationItem,
    *,
    sent: Any = None,
    problems: dict[str, str] | None = None,
    message: str | None = None,
    status: int | None = None,
    stale: bool = False,
) -> HttpResponse:
    config = project_config(project)
    rows = _rows(item, config, sent, problems)
    if status is None:
        status = 400 if (problems or message) else 200
    context = {
        "project": project,
        "item": item,
        "rows": rows,
        "disagreements": sum(not row.agreed for row in rows),
        "message": message,
        "stale": stale,
        "edited": EDITED,
        "EDIT": EDIT,
        "version": sent.get("version", item.version) if sent is not None and not stale else item.version,
    }
    return render(request, "annotation/adjudicate.html", context, status=status)
