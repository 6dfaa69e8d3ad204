"""The collection pages: the task picker, and one page per task (write, reply, review, rank).

Plain forms posting to these views, which call the same services as the API:
the picker hands out a task and goes to it; the task page acknowledges the
task when shown (renewing its lease; its script renews it while open) and
submits or skips it. Ranking is the one step that needs the page's script
(dragging, or moving with the keys).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation import permissions
from annotation.collection.availability import KINDS, LABEL_PROMPT, LABEL_REPLY, RANDOM, RANK, TASK_TYPES
from annotation.collection.errors import TaskRefused, WorkflowError
from annotation.collection.models import Task
from annotation.collection.moderation import report_create
from annotation.collection.selectors import task_get, task_view, tasks_open
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_ack, task_nack, task_next, tasks_available, workflow_config
from annotation.models import Project
from annotation.problems import Problem, ProblemsError
from annotation.projects import text_labels as label_vocabulary
from annotation.projects.selectors import project_visible_get
from trees.models import Message
from trees.storable import unstorable

# What each task type asks of a person, for the picker and the task page.
TITLES = {
    "initial_prompt": "Write a prompt",
    "label_initial_prompt": "Review a prompt",
    "assistant_reply": "Reply as the assistant",
    "label_assistant_reply": "Review an assistant reply",
    "prompter_reply": "Reply as the user",
    "label_prompter_reply": "Review a user reply",
    "rank_assistant_replies": "Rank assistant replies",
    "rank_prompter_replies": "Rank user replies",
}
# The steps of a five-point scale, as Open-Assistant's likert labels take them.
SCALE = (0.0, 0.25, 0.5, 0.75, 1.0)


def _sentence(message: str) -> str:
    """A service's refusal ("no tasks are waiting ...") as a sentence for the page."""
    return message[:1].upper() + message[1:] + "."


def _forbidden(request: HttpRequest, message: str, project: Project | None = None) -> HttpResponse:
    return render(request, "annotation/forbidden.html", {"message": message, "project": project}, status=403)


def _collect_project(request: HttpRequest, name: str) -> Project | HttpResponse:
    project = project_visible_get(user=request.user, name=name)
    if project.mode != Project.Mode.COLLECT:
        raise Http404("this project does not collect trees")
    if not permissions.can_collect(request.user, project):
        return _forbidden(request, "You are not an annotator in this project.", project)
    return project


@require_http_methods(["GET"])
@login_required
def picker(request: HttpRequest, name: str) -> HttpResponse:
    """The tasks waiting for this person, by type, each with its count; and their open tasks."""
    project = _collect_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    counts = tasks_available(project=project, user=request.user)
    rows = [
        {"type": task_type, "title": TITLES[task_type], "count": counts[task_type]} for task_type in TITLES
    ]
    held = list(tasks_open(project=project, user=request.user).select_related("message"))
    open_tasks = [(task, TITLES[task.type], _about(task)) for task in held]
    held_types = {task.type for task in held}
    for row in rows:
        row["held"] = row["type"] in held_types
    context = {"project": project, "rows": rows, "total": counts[RANDOM], "open_tasks": open_tasks}
    return render(request, "collection/picker.html", context)


# How much of a task's message the picker quotes to say which task it is.
ABOUT_CHARACTERS = 80


def _about(task: Task) -> str:
    """A few words of the message a held task is about, for "Resume: ..." on the picker; none
    for a prompt to write, or when the message was deleted since."""
    message = task.message
    if message is None or message.deleted:
        return ""
    text = " ".join(message.text.split())
    return text if len(text) <= ABOUT_CHARACTERS else text[: ABOUT_CHARACTERS - 1].rstrip() + "…"


@require_POST
@login_required
def next_task(request: HttpRequest, name: str) -> HttpResponse:
    """Hand out a task of the chosen type (or ``random``: "I'm feeling lucky") and go to it.

    A person who still holds an open task of that type goes back to it instead.
    """
    project = _collect_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    task_type = request.POST.get("type", RANDOM)
    if task_type not in TASK_TYPES:
        messages.error(request, f'There is no task type "{task_type}".')
        return redirect("collection:picker", name=project.name)
    held = tasks_open(project=project, user=request.user)
    if task_type != RANDOM:
        held = held.filter(type=task_type)
    task = held.first()
    if task is None:
        try:
            task = task_next(project=project, user=request.user, task_type=task_type)
        except WorkflowError as refused:
            messages.info(request, _sentence(refused.message))
            return redirect("collection:picker", name=project.name)
    return redirect("collection:task", name=project.name, task_id=task.pk)


@require_http_methods(["GET", "POST"])
@login_required
def task_page(request: HttpRequest, name: str, task_id: int) -> HttpResponse:
    """GET: the task, acknowledged (its lease renewed). POST: submit the form's answer."""
    project = _collect_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    task = task_get(project=project, user=request.user, task_id=task_id)
    errors: list[str] = []
    if request.method == "POST":
        data = _form_data(task.type, task.payload, request.POST)
        try:
            _check_storable(request)
            task_submit(project=project, task_id=task.pk, user=request.user, data=data)
        except ProblemsError as error:
            errors = [str(problem) for problem in error.problems]
        except TaskRefused as refused:
            messages.error(request, _sentence(refused.message))
            return redirect("collection:picker", name=project.name)
        else:
            messages.success(request, f"Thank you! {TITLES[task.type]}: done.")
            return redirect("collection:picker", name=project.name)
    elif task.status == task.Status.LEASED:
        try:
            task = task_ack(project=project, task_id=task.pk, user=request.user)
        except TaskRefused as refused:
            messages.error(request, _sentence(refused.message))
            return redirect("collection:picker", name=project.name)
    view = task_view(task, shown=permissions.DeletedText(request.user, project))
    context: dict[str, Any] = {
        "project": project,
        "view": view,
        "task": task,
        "title": TITLES[task.type],
        "category": KINDS[task.type].category,
        "errors": errors,
        "form": request.POST if request.method == "POST" else QueryDict(),
        # A reply is in its conversation's language unless its author says otherwise.
        "lang": request.POST.get("lang") or (view.conversation[-1].lang if view.conversation else "") or "",
        "open": task.status == task.Status.LEASED,
        "ack_url": reverse("collect-api:task-ack", kwargs={"name": project.name, "task_id": task.pk}),
        "lease_seconds": workflow_config(project).recent_tasks_span_sec,
    }
    if context["category"] in (LABEL_PROMPT, LABEL_REPLY):
        mandatory = set(task.payload["mandatory"])
        context["label_fields"] = [
            {"label": label, "required": label.name in mandatory, "steps": SCALE} for label in view.labels
        ]
    return render(request, "collection/task.html", context, status=400 if errors else 200)


@require_POST
@login_required
def skip_task(request: HttpRequest, name: str, task_id: int) -> HttpResponse:
    """Give the task back; it is not offered to this person again."""
    project = _collect_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    task = task_get(project=project, user=request.user, task_id=task_id)
    try:
        _check_storable(request)
        task_nack(project=project, task_id=task.pk, user=request.user, reason=request.POST.get("reason", ""))
    except ProblemsError as error:
        messages.error(request, str(error))
    except TaskRefused as refused:
        messages.error(request, _sentence(refused.message))
    else:
        messages.info(request, "Skipped. You will not be shown that one again.")
    return redirect("collection:picker", name=project.name)


@require_POST
@login_required
def report_message(request: HttpRequest, name: str, task_id: int) -> HttpResponse:
    """Report (red-flag) the message a task is about, and go back to the task."""
    project = _collect_project(request, name)
    if isinstance(project, HttpResponse):
        return project
    task = task_get(project=project, user=request.user, task_id=task_id)
    message = Message.objects.filter(pk=task.message_id).first() if task.message_id else None
    if message is None:
        raise Http404("this task is about no message")
    try:
        _check_storable(request)
        report_create(
            project=project, message=message, user=request.user, reason=request.POST.get("reason", "")
        )
    except ProblemsError as error:
        messages.error(request, str(error))
    except WorkflowError as refused:
        messages.error(request, _sentence(refused.message))
    else:
        messages.info(request, "Reported. Thank you: moderators will look at it.")
    return redirect("collection:task", name=project.name, task_id=task.pk)


def _check_storable(request: HttpRequest) -> None:
    """Refuse a form whose fields hold a character no database stores (a NUL: a form's fields
    are read here, not by a Django form, which would refuse it), with the field."""
    problems = [
        Problem(name, found.message, found.code)
        for name, values in request.POST.lists()
        for value in values
        if (found := unstorable(value))
    ]
    if problems:
        raise ProblemsError(problems)


def _form_data(task_type: str, payload: dict[str, Any], form: QueryDict) -> dict[str, Any]:
    """The service's payload from the page's form fields."""
    category = KINDS[task_type].category
    if category in (LABEL_PROMPT, LABEL_REPLY):
        values: dict[str, Any] = {}
        for name in payload.get("labels", []):
            raw = form.get(f"label-{name}", "")
            if label_vocabulary.LABELS[name].widget == "flag":
                values[name] = 1 if raw == "1" else 0  # an unticked box is a "no"
            elif raw != "":
                try:
                    values[name] = float(raw)
                except ValueError:
                    values[name] = raw  # reported by the service with its path
        return {"labels": values}
    if category == RANK:
        return {"ranking": form.getlist("ranking")}
    data = {"text": form.get("text", "")}
    if form.get("lang"):
        data["lang"] = form["lang"].strip()
    return data
