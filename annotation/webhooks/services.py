"""Managing webhooks, and replaying deliveries: each change audited."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Project
from annotation.problems import Problem, ProblemsError
from annotation.webhooks.events import EVENTS
from annotation.webhooks.models import Delivery, Webhook
from annotation.webhooks.sending import url_problem
from trees.audit import audit_record

MIN_SECRET_LENGTH = 16


def _checked(url: str | None, secret: str | None, events: Iterable[str] | None) -> None:
    problems = []
    if url is not None and (problem := url_problem(url)):
        problems.append(Problem("url", problem, "invalid"))
    if secret is not None and len(secret) < MIN_SECRET_LENGTH:
        problems.append(Problem("secret", f"must be at least {MIN_SECRET_LENGTH} characters", "invalid"))
    for index, event in enumerate(events or []):
        if event not in EVENTS:
            problems.append(Problem(f"events[{index}]", f'"{event}" is not an event ({", ".join(EVENTS)})'))
    if events is not None and not list(events):
        problems.append(Problem("events", "name at least one event", "required"))
    if problems:
        raise ProblemsError(problems)


@transaction.atomic
def webhook_create(
    *, project: Project, url: str, secret: str, events: list[str], active: bool = True
) -> Webhook:
    """A webhook sending ``events`` of ``project`` to ``url``; raises ProblemsError."""
    _checked(url, secret, events)
    webhook = Webhook.objects.create(
        project=project, url=url, secret=secret, events=sorted(set(events)), active=active
    )
    audit_record(
        "webhook.create", target=webhook, scope=project.name, details={"url": url, "events": webhook.events}
    )
    return webhook


@transaction.atomic
def webhook_update(*, webhook: Webhook, **changes: Any) -> Webhook:
    """Change ``url``, ``secret``, ``events`` or ``active``; raises ProblemsError."""
    _checked(changes.get("url"), changes.get("secret"), changes.get("events"))
    if "events" in changes:
        changes["events"] = sorted(set(changes["events"]))
    for field, value in changes.items():
        setattr(webhook, field, value)
    webhook.save()
    shown = sorted(changes)  # the secret's value is never logged
    audit_record("webhook.update", target=webhook, scope=webhook.project.name, details={"changed": shown})
    return webhook


@transaction.atomic
def webhook_delete(*, webhook: Webhook) -> None:
    """Delete the webhook and its deliveries."""
    audit_record("webhook.delete", target=webhook, scope=webhook.project.name, details={"url": webhook.url})
    webhook.delete()


@transaction.atomic
def deliveries_replay(*, deliveries: QuerySet[Delivery]) -> list[int]:
    """Send ``deliveries`` again from the first attempt, whatever became of them; their ids."""
    rows = list(deliveries.select_related("webhook__project"))
    ids = [delivery.pk for delivery in rows]
    Delivery.objects.filter(pk__in=ids).update(
        status=Delivery.Status.PENDING, attempts=0, next_attempt_at=timezone.now(), last_error=""
    )
    for project_name in sorted({delivery.webhook.project.name for delivery in rows}):
        mine = [d.pk for d in rows if d.webhook.project.name == project_name]
        audit_record("webhook.replay", scope=project_name, details={"deliveries": mine})
    return ids
