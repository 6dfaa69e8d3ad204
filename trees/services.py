"""Importing and exporting trees: the one place the admin, the commands and
the API go through."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.db import DatabaseError, transaction

from trees.audit import audit_record, audit_when_read
from trees.formats import get_format
from trees.formats.bounds import ReadBounds, decompressed
from trees.formats.records import FormatError, ImportIssue, TreeRecord
from trees.models import ConversationTree, Dataset
from trees.signals import trees_imported
from trees.store import existing_tree_ids, gc_paused, messages_html_refresh, tree_records, trees_store
from trees.validation import ImportLimits, ItemIds, check_limits, read_bounds

BATCH_TREES = 1000
MAX_REPORTED_ERRORS = 1000

Progress = Callable[[int, int], None]  # (items read, bytes read)


@dataclass
class ImportReport:
    dataset: str
    format: str
    items_read: int = 0
    trees_created: int = 0
    trees_replaced: int = 0
    messages: int = 0
    items_skipped: int = 0
    errors: list[ImportIssue] = field(default_factory=list)
    errors_not_shown: int = 0
    committed: bool = False

    @property
    def ok(self) -> bool:
        return self.committed

    def add_errors(self, issues: list[ImportIssue]) -> None:
        room = MAX_REPORTED_ERRORS - len(self.errors)
        self.errors.extend(issues[: max(room, 0)])
        self.errors_not_shown += max(len(issues) - max(room, 0), 0)

    def summary(self) -> str:
        if not self.committed:
            total = len(self.errors) + self.errors_not_shown
            return (
                f"nothing imported into {self.dataset}: {counted(total, 'error')} "
                f"in {counted(self.items_read, 'item')}"
            )
        parts = [f"{counted(self.trees_created, 'tree')} created"]
        if self.trees_replaced:
            parts.append(f"{self.trees_replaced:,} replaced")
        parts.append(counted(self.messages, "message"))
        if self.items_skipped:
            parts.append(f"{counted(self.items_skipped, 'invalid item')} skipped")
        return f"imported into {self.dataset}: " + ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "format": self.format,
            "committed": self.committed,
            "items_read": self.items_read,
            "trees_created": self.trees_created,
            "trees_replaced": self.trees_replaced,
            "messages": self.messages,
            "items_skipped": self.items_skipped,
            "errors": [issue.as_dict() | {"text": str(issue)} for issue in self.errors],
            "errors_not_shown": self.errors_not_shown,
            "summary": self.summary(),
        }


def counted(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


class _Rollback(Exception):
    pass


def open_source(source: IO[bytes], bounds: ReadBounds | None = None) -> IO[bytes]:
    """``source``, gunzipped if it starts with gzip's magic bytes: then read up to the
    bounds' ``max_decompressed_bytes`` (the settings' by default), past which reading it
    raises ``FormatError``."""
    buffered = source if hasattr(source, "peek") else io.BufferedReader(source)  # type: ignore[arg-type]
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return decompressed(buffered, (bounds or read_bounds()).max_decompressed_bytes)
    return buffered


def dataset_get_or_create(name: str) -> Dataset:
    """The dataset called ``name``; a new one's name is checked first (it goes
    into URLs), raising ``ValidationError`` as the admin's form would."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        Dataset._meta.get_field("name").run_validators(name)
        with transaction.atomic():
            dataset, created = Dataset.objects.get_or_create(name=name)
            if created:
                audit_record("dataset.create", target=dataset, scope=dataset.name)
    return dataset


@transaction.atomic
def dataset_create(*, name: str, description: str = "") -> Dataset:
    """A new, empty dataset (the name is checked by the caller's form or serializer)."""
    dataset = Dataset.objects.create(name=name, description=description)
    audit_record("dataset.create", target=dataset, scope=dataset.name)
    return dataset


@transaction.atomic
def dataset_update(*, dataset: Dataset, fields: list[str]) -> Dataset:
    """Save the ``fields`` of ``dataset`` that its form changed."""
    if fields:
        dataset.save(update_fields=[*fields, "updated_at"])
        audit_record("dataset.update", target=dataset, scope=dataset.name, details={"fields": fields})
    return dataset


def tree_import(
    *,
    dataset: Dataset,
    source: IO[bytes],
    format_name: str,
    options: dict[str, Any] | None = None,
    skip_invalid: bool = False,
    replace: bool = False,
    limits: ImportLimits | None = None,
    author_id: int | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Read ``source`` in ``format_name`` into ``dataset``, all or nothing.

    Every item is checked before anything is kept: when any item is bad the
    whole import is rolled back and the report lists every problem, unless
    ``skip_invalid`` asks to keep the good items. Items whose id the dataset
    already has are refused unless ``replace`` is given.
    """
    reader = get_format(format_name)
    limits = limits or ImportLimits.from_settings()
    bounds = read_bounds()
    report = ImportReport(dataset=dataset.name, format=format_name)
    stream = open_source(source, bounds)
    seen = ItemIds()
    batch: list[TreeRecord] = []
    replaced_ids: list[int] = []

    def flush() -> None:
        existing = existing_tree_ids(dataset, (tree.external_id for tree in batch))
        if existing and not replace:
            keep = []
            for tree in batch:
                if tree.external_id in existing:
                    report.add_errors(
                        [
                            ImportIssue(
                                tree.line,
                                "",
                                f'item "{tree.external_id}" already exists in dataset "{dataset.name}" '
                                "(import with replace to overwrite it)",
                            )
                        ]
                    )
                    report.items_skipped += 1
                else:
                    keep.append(tree)
            batch[:] = keep
        if report.errors and not skip_invalid:
            batch.clear()
            return
        replaced_ids.extend(existing[tree.external_id] for tree in batch if tree.external_id in existing)
        try:
            created, messages = trees_store(dataset, batch, existing=existing, author_id=author_id)
        except DatabaseError as error:
            # The checks above should leave nothing for the database to refuse;
            # if it still does (a character it cannot store, say), say where
            # instead of failing the request.
            first, last = batch[0].line, batch[-1].line
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            message = f"the database refused the items on lines {first} to {last}: {reason}"
            report.add_errors([ImportIssue(first, "", message)])
            raise _Rollback from None
        report.trees_created += created
        report.trees_replaced += len(batch) - created
        report.messages += messages
        batch.clear()

    try:
        with transaction.atomic(), gc_paused():
            try:
                for tree in reader.read(stream, max_depth=limits.max_depth, bounds=bounds, **(options or {})):
                    report.items_read += 1
                    if tree.ok:
                        check_limits(tree, limits)
                    seen.check(tree)
                    if not tree.ok:
                        report.add_errors(tree.issues)
                        report.items_skipped += 1
                        continue
                    # Once failing, batches are still checked for existing
                    # items (so every problem is listed) but not stored.
                    batch.append(tree)
                    if len(batch) >= BATCH_TREES:
                        flush()
                        if progress is not None:
                            progress(report.items_read, _bytes_read(source))
                if batch:
                    flush()
            except FormatError as error:
                # Why reading stopped comes first, however many problems came before it.
                report.errors.insert(0, error.issue)
                raise _Rollback from None
            except UnicodeDecodeError as error:
                report.add_errors([ImportIssue(None, "", f"the file is not UTF-8 text ({error.reason})")])
                raise _Rollback from None

            if report.errors and not skip_invalid:
                raise _Rollback
            if report.trees_created or replaced_ids:
                trees_imported.send(sender=Dataset, dataset=dataset, replaced=replaced_ids)
            audit_record(
                "trees.import",
                target=dataset,
                scope=dataset.name,
                details={
                    "format": format_name,
                    "items_read": report.items_read,
                    "trees_created": report.trees_created,
                    "trees_replaced": report.trees_replaced,
                    "messages": report.messages,
                    "items_skipped": report.items_skipped,
                    "replace": replace,
                    "skip_invalid": skip_invalid,
                },
            )
    except _Rollback:
        report.trees_created = report.trees_replaced = report.messages = 0
        return report
    report.committed = True
    if progress is not None:
        progress(report.items_read, _bytes_read(source))
    return report


def _bytes_read(source: IO[bytes]) -> int:
    try:
        return source.tell()
    except (OSError, ValueError):
        return 0


def trees_export(
    *,
    dataset: Dataset,
    format_name: str,
    options: dict[str, Any] | None = None,
    shown: Callable[[TreeRecord], TreeRecord] | None = None,
) -> Iterator[str]:
    """The dataset's trees in ``format_name``, as pieces of text to stream (logged when asked for).

    ``shown`` gets each tree's record before it is written and returns what its reader may see of
    it (the apps on top hide deleted messages' text from some readers); all of it when None.
    """
    writer = get_format(format_name)
    records = tree_records(ConversationTree.objects.filter(dataset=dataset))
    if shown is not None:
        records = map(shown, records)
    return audit_when_read(
        writer.write(records, **(options or {})),
        "trees.export",
        target=dataset,
        scope=dataset.name,
        details={"format": format_name, "options": dict(options or {})},
    )


def messages_render(*, batch_size: int = 2000) -> int:
    """Keep every message's HTML as the current renderer writes it (``trees.markdown``); returns
    how many messages were rendered again. Run after a renderer change (``RENDERER_VERSION``):
    until then pages render the older rows afresh on each view. Each batch commits on its own,
    so a long run can be stopped and started again."""
    count = 0
    while True:
        with transaction.atomic():
            done = messages_html_refresh(batch_size=batch_size)
        count += done
        if done < batch_size:
            break
    if count:
        audit_record("messages.render", details={"messages": count})
    return count
