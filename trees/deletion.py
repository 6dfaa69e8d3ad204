"""Deleting a whole dataset in batches: no single giant transaction or lock.

A dataset of 1,000,000 messages deleted in one statement would hold its locks (and the
transaction's undo) for the whole time and lose everything on a failure near the end. Here
each batch of trees goes in a transaction of its own, through Django's collector (so what
refers to a tree, in apps above ``trees``, goes too or is set null as its model says), and
the dataset row last. A run stopped part-way leaves a smaller, consistent dataset; running it
again finishes the job. The caller passes a progress callback (a job reports it; the
command prints it). ``bench/scale.py --sections deletes`` measures it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models import PROTECT

from trees.audit import audit_record
from trees.models import ConversationTree, Dataset, Message

# Trees per transaction: at Open-Assistant's dozen messages a tree, about 10,000 messages.
BATCH_TREES = 1000

DeleteProgress = Callable[[int, int], None]  # (messages deleted so far, messages at the start)


class DatasetInUse(Exception):
    """The dataset is still used by what must not lose it (a project over it)."""


def dataset_delete(
    *, dataset: Dataset, progress: DeleteProgress | None = None, batch_trees: int = BATCH_TREES
) -> int:
    """Delete ``dataset`` with its trees and messages, ``batch_trees`` trees per transaction;
    returns how many messages went. Raises DatasetInUse, before deleting anything, when a
    protected reference (a project) still points at it."""
    users = _protected_users(dataset)
    if users:
        raise DatasetInUse(f"dataset {dataset.name!r} is used by {', '.join(users)}: delete those first")
    total = Message.objects.filter(tree__dataset=dataset).count()
    done = 0
    if progress is not None:
        progress(done, total)
    while True:
        with transaction.atomic():
            batch = list(
                ConversationTree.objects.filter(dataset=dataset)
                .order_by("pk")
                .values_list("pk", flat=True)[:batch_trees]
            )
            if not batch:
                break
            _, deleted = ConversationTree.objects.filter(pk__in=batch).delete()
        done += deleted.get(Message._meta.label, 0)
        if progress is not None:
            progress(done, total)
    with transaction.atomic():
        audit_record("dataset.delete", target=dataset, scope=dataset.name, details={"messages": done})
        dataset.delete()
    return done


def _protected_users(dataset: Dataset) -> list[str]:
    """What refers to ``dataset`` with on_delete=PROTECT, as "2 projects" (models named
    through the relation, so that ``trees`` imports nothing from the apps above it)."""
    found = []
    for relation in Dataset._meta.related_objects:
        if relation.on_delete is PROTECT:
            count = relation.related_model._base_manager.filter(**{relation.field.name: dataset}).count()
            if count:
                options = relation.related_model._meta
                found.append(f"{count} {options.verbose_name if count == 1 else options.verbose_name_plural}")
    return found
