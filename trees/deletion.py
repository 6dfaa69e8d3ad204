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

from django.db import connection, transaction
from django.db.models import DO_NOTHING, PROTECT, SET_NULL

from trees import sql
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
    users = dataset_protected_by(dataset)
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
            # A range, not a list of keys: constant parameters, and the batch is exactly these
            # trees (the dataset's first ones in key order, under this transaction).
            trees = ConversationTree.objects.filter(dataset=dataset, pk__range=(batch[0], batch[-1]))
            done += _messages_delete(dataset, batch[0], batch[-1])
            trees.delete()
        if progress is not None:
            progress(done, total)
    with transaction.atomic():
        audit_record("dataset.delete", target=dataset, scope=dataset.name, details={"messages": done})
        dataset.delete()
    return done


def _messages_delete(dataset: Dataset, first: int, last: int) -> int:
    """Delete the messages of the dataset's trees ``first`` to ``last`` in one statement;
    returns how many. What refers to a message is dealt with first, as its foreign key says
    (CASCADE: deleted through Django's collector; SET_NULL: set null), for all of the batch's
    messages at once: through the collector, the messages were read into memory and deleted a
    hundred at a time, with the rows referring to them looked up for each hundred."""
    messages = Message._base_manager.filter(tree__dataset=dataset, tree__pk__range=(first, last))
    for relation in Message._meta.related_objects:
        if relation.related_model is Message or relation.on_delete is DO_NOTHING:
            continue  # replies go in the same statement as their parents
        referring = relation.related_model._base_manager.filter(**{f"{relation.field.name}__in": messages})
        if relation.on_delete is SET_NULL:
            referring.update(**{relation.field.name: None})
        else:
            referring.delete()  # CASCADE (and PROTECT, which refuses) as Django does it
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {sql.table(Message)} WHERE tree_id IN (SELECT id FROM "
            f"{sql.table(ConversationTree)} WHERE dataset_id = %s AND id BETWEEN %s AND %s)",
            [dataset.pk, first, last],
        )
        return cursor.rowcount


def dataset_protected_by(dataset: Dataset) -> list[str]:
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
