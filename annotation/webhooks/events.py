"""The events webhooks are sent, and recording their deliveries.

Recording happens once the transaction of what caused the event commits
(``transaction.on_commit``, robust: an error is logged, never raised), so a
rolled-back change sends nothing and a delivery never fails or slows the
request beyond one statement for the project's active webhooks; sending happens
elsewhere (``sending``). An event's data is built only when a webhook wants it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from annotation.models import Project, Review
from annotation.review.signals import item_finalised
from annotation.webhooks.models import Delivery, Webhook
from annotation.work.signals import item_submitted
from trees import sql

logger = logging.getLogger(__name__)

ITEM_SUBMITTED = "item.submitted"
REVIEW_DECIDED = "review.decided"
ITEM_FINALISED = "item.finalised"
TREE_READY = "tree.ready_for_export"
EVALUATION_FINISHED = "evaluation.finished"
EVENTS = {
    ITEM_SUBMITTED: "an annotator submitted an item",
    REVIEW_DECIDED: "a reviewer accepted or rejected an annotator's work",
    ITEM_FINALISED: "an item's final answer was saved (adjudication)",
    TREE_READY: "a collected tree is ready for export (collection projects)",
    EVALUATION_FINISHED: "a rubric's automatic checks ran over the project",
}

Data = dict[str, Any] | Callable[[], dict[str, Any]]


def event_emit(*, project: Project | int, event: str, data: Data) -> None:
    """Record a delivery of ``event`` for each of the project's active webhooks that want it,
    once the current transaction commits (at once outside one). ``data`` may be a function,
    called only when some webhook wants the event."""
    if event not in EVENTS:
        raise ValueError(f'unknown webhook event "{event}"')
    project_id = project if isinstance(project, int) else project.pk
    transaction.on_commit(lambda: deliveries_record(project_id, event, data), robust=True)


def deliveries_record(project_id: int, event: str, data: Data) -> list[Delivery]:
    """The deliveries of ``event`` for the project's active webhooks that want it (one query
    when none does)."""
    # Written out (``trees.sql``): every submission asks, and most projects have no webhook.
    columns = sql.columns(Webhook, "hook")
    rows = sql.fetch_all(
        f"SELECT {columns.sql}, project.name FROM {sql.table(Webhook)} hook "
        f"JOIN {sql.table(Project)} project ON project.id = hook.project_id "
        "WHERE hook.project_id = %s AND hook.active = %s",
        [project_id, True],
    )
    webhooks = [webhook for webhook in map(columns.load, rows) if event in webhook.events]
    if not webhooks:
        return []
    body = data() if callable(data) else data
    now = timezone.now()
    payload = {
        "event": event,
        "project": rows[0][-1],
        "occurred_at": now.isoformat(),
        "data": body,
    }
    return Delivery.objects.bulk_create(
        [Delivery(webhook=webhook, event=event, payload=payload, next_attempt_at=now) for webhook in webhooks]
    )


# -- what is heard ----------------------------------------------------------------------------


@receiver(item_submitted)
def on_item_submitted(
    sender: Project, tree_id: int, external_id: str, user: Any, version: int, **kwargs: Any
) -> None:
    data = {"tree_id": tree_id, "item": external_id, "annotator": user.get_username(), "version": version}
    event_emit(project=sender, event=ITEM_SUBMITTED, data=data)


@receiver(post_save, sender=Review)
def on_review_saved(sender: type, instance: Review, created: bool, raw: bool = False, **kwargs: Any) -> None:
    if not created or raw:
        return
    review_id = instance.pk

    def data() -> dict[str, Any]:
        # Read after the commit, and only when a webhook wants it: the decision stays one query lighter.
        review = Review.objects.select_related("assignment__tree", "assignment__user", "reviewer").get(
            pk=review_id
        )
        return {
            "tree_id": review.assignment.tree_id,
            "item": review.assignment.tree.external_id,
            "annotator": review.assignment.user.get_username(),
            "reviewer": review.reviewer.get_username() if review.reviewer else None,
            "decision": review.decision,
            "comment": review.comment,
            "version": review.version,
        }

    event_emit(project=instance.assignment.project_id, event=REVIEW_DECIDED, data=data)


@receiver(item_finalised)
def on_item_finalised(sender: Project, tree_id: str, version: int, by: Any = None, **kwargs: Any) -> None:
    data = {"item": tree_id, "version": version, "by": by.get_username() if by is not None else None}
    event_emit(project=sender, event=ITEM_FINALISED, data=data)


def on_tree_finished(project_id: int, tree_id: int, external_id: str, state: str) -> None:
    """Collection's ``tree_finished``, connected in the wiring (``annotation.receivers``)."""
    data = {"tree_id": tree_id, "tree": external_id, "state": state}
    event_emit(project=project_id, event=TREE_READY, data=data)
