"""A collect project's trees in Open-Assistant's tree export (``trees.formats.oasst``).

By default: the trees in ``ready_for_export``, with their accepted messages
that are not deleted (a message left out takes its replies with it). Each
message carries, as Open-Assistant's export does:

* ``review_count``, and ``review_result`` only when it is true or the
  message had more than two reviews;
* ``rank`` among its exported siblings (0 = best; renumbered over the
  siblings exported, so a reply deleted after scoring leaves no gap);
* ``emojis`` — ``red_flag`` (reports) and ``_skip_reply``, ``_skip_labeling``,
  ``_skip_ranking`` (people who skipped it for good), when any;
* ``labels`` — ``{name: {value: mean, count: reviews}}`` over its reviews;
* ``synthetic``, ``model_name``.

Replies come best first, then unranked ones in the order they were written.
The file re-imports through the foundation's oasst importer unchanged.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db.models import Count

from annotation.collection.availability import KINDS, LABEL_PROMPT, LABEL_REPLY, RANK, REPLY
from annotation.collection.models import Report, Task
from annotation.models import Project
from annotation.projects.text_labels import labels_summary
from trees.audit import audit_when_read
from trees.formats import oasst
from trees.formats.records import MessageRecord, TreeRecord
from trees.models import ConversationTree
from trees.store import tree_records
from trees.vocabulary import READY_FOR_EXPORT, TREE_STATES

CHUNK = 200
SKIP_EMOJIS = {
    REPLY: "_skip_reply",
    LABEL_PROMPT: "_skip_labeling",
    LABEL_REPLY: "_skip_labeling",
    RANK: "_skip_ranking",
}
SYNTHETIC_CHOICES = ("include", "exclude")


@dataclass(frozen=True)
class ExportFilters:
    states: tuple[str, ...] = (READY_FOR_EXPORT,)
    langs: tuple[str, ...] = ()  # empty: every language
    include_deleted: bool = False
    synthetic: str = "include"  # or "exclude": leave out model-written messages (and their replies)
    accepted_only: bool = True

    def __post_init__(self) -> None:
        unknown = [state for state in self.states if state not in TREE_STATES]
        if unknown:
            raise ValueError(f"unknown tree state {unknown[0]!r} (expected one of {', '.join(TREE_STATES)})")
        if self.synthetic not in SYNTHETIC_CHOICES:
            raise ValueError(
                f"synthetic must be one of {', '.join(SYNTHETIC_CHOICES)}, got {self.synthetic!r}"
            )


def collected_records(
    *, project: Project, filters: ExportFilters | None = None, tree_ids: Sequence[int] | None = None
) -> Iterator[TreeRecord]:
    """The project's trees as records ready for the oasst writer, in tree order.

    Per ``CHUNK`` trees: the trees and messages (two queries), the reviews,
    the reports and the skips (one each).
    """
    filters = filters or ExportFilters()
    trees = ConversationTree.objects.filter(collected__project=project, state__in=filters.states)
    if filters.langs:
        trees = trees.filter(collected__lang__in=filters.langs)
    if tree_ids is not None:
        trees = trees.filter(pk__in=list(tree_ids))
    ids = list(trees.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        labels, emojis = _extras(chunk)
        for record in tree_records(ConversationTree.objects.filter(pk__in=chunk), chunk_size=CHUNK):
            shaped = _shape(record, filters, labels, emojis)
            if shaped is not None:
                yield shaped


def collected_export(
    *, project: Project, filters: ExportFilters | None = None, tree_ids: Sequence[int] | None = None
) -> Iterator[str]:
    """The project's trees (those of ``tree_ids``, if given) as oasst JSONL lines, streamed;
    logged when asked for."""
    filters = filters or ExportFilters()
    details: dict[str, Any] = {"filters": asdict(filters)}
    if tree_ids is not None:
        details["trees"] = len(tree_ids)
    lines = oasst.write(collected_records(project=project, filters=filters, tree_ids=tree_ids))
    return audit_when_read(lines, "collected.export", target=project, scope=project.name, details=details)


Key = tuple[str, str]  # (tree external id, message external id)


def _extras(tree_ids: list[int]) -> tuple[dict[Key, list[dict[str, float]]], dict[Key, Counter[str]]]:
    labels: dict[Key, list[dict[str, float]]] = defaultdict(list)
    for tree, message, result in (
        Task.objects.filter(
            tree_id__in=tree_ids, type__in=_types(LABEL_PROMPT, LABEL_REPLY), status=Task.Status.DONE
        )
        .order_by("done_at", "pk")
        .values_list("tree__external_id", "message__external_id", "result")
    ):
        labels[(tree, message)].append(result["labels"])
    emojis: dict[Key, Counter[str]] = defaultdict(Counter)
    for tree, message, count in (
        Report.objects.filter(message__tree_id__in=tree_ids)
        .values("message__tree__external_id", "message__external_id")
        .annotate(n=Count("pk"))
        .values_list("message__tree__external_id", "message__external_id", "n")
    ):
        emojis[(tree, message)]["red_flag"] += count
    for tree, message, task_type, count in (
        Task.objects.filter(tree_id__in=tree_ids, status=Task.Status.SKIPPED, dont_show_again=True)
        .exclude(message=None)
        .values("tree__external_id", "message__external_id", "type")
        .annotate(n=Count("pk"))
        .values_list("tree__external_id", "message__external_id", "type", "n")
    ):
        emojis[(tree, message)][SKIP_EMOJIS[KINDS[task_type].category]] += count
    return labels, emojis


def _types(*categories: str) -> list[str]:
    return [task_type for task_type, kind in KINDS.items() if kind.category in categories]


def _left_out(message: MessageRecord, filters: ExportFilters) -> bool:
    return (
        (filters.accepted_only and message.review_result is not True)
        or (message.deleted and not filters.include_deleted)
        or (message.synthetic and filters.synthetic == "exclude")
    )


def _shape(
    record: TreeRecord,
    filters: ExportFilters,
    labels: dict[Key, list[dict[str, float]]],
    emojis: dict[Key, Counter[str]],
) -> TreeRecord | None:
    """The record with what the filters leave out removed and Open-Assistant's fields filled in."""
    dropped: set[str] = set()
    kept: list[MessageRecord] = []
    for message in sorted(record.messages, key=lambda m: m.depth):
        if message.parent_id in dropped or _left_out(message, filters):
            dropped.add(message.external_id)
        else:
            kept.append(message)
    if not kept or kept[0].parent_id is not None:
        return None  # the prompt itself is left out
    siblings: dict[str | None, list[MessageRecord]] = defaultdict(list)
    for message in kept:
        siblings[message.parent_id].append(message)
    for group in siblings.values():
        _order_siblings(group)
    tree_id = record.external_id or ""
    for message in kept:
        key = (tree_id, message.external_id)
        if not (message.review_result or (message.review_count or 0) > 2):
            message.review_result = None
        metadata: dict[str, Any] = dict(message.metadata)
        if emojis.get(key):
            metadata["emojis"] = dict(sorted(emojis[key].items()))
        if labels.get(key):
            metadata["labels"] = labels_summary(labels[key])
        message.metadata = metadata
    record.messages = kept
    return record


def _order_siblings(group: Iterable[MessageRecord]) -> None:
    """Best first, unranked after in the order written; ranks renumbered 0..k-1 over the group."""
    ordered = sorted(group, key=lambda m: (m.rank is None, m.rank if m.rank is not None else 0, m.position))
    rank = 0
    for position, message in enumerate(ordered):
        message.position = position
        if message.rank is not None:
            message.rank = rank
            rank += 1
