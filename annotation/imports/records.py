"""The record files annotation imports read: JSON documents (JSONL, or one JSON array),
plain or gzip, fed to an importer as they are read and written in batches.

Shared by the annotation import (``annotation.imports.annotations``) and the gold
import (``annotation.quality.gold_imports``), which read the same records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any, Protocol

from trees.formats.jsonstream import iter_documents
from trees.formats.records import FormatError, ImportIssue
from trees.services import open_source
from trees.validation import read_bounds

BATCH_RECORDS = 500


class RecordImporter(Protocol):
    def parse(self, line: int, document: Any) -> Any | None: ...
    def batch(self, records: list[Any]) -> None: ...


class RecordReport(Protocol):
    records_read: int
    errors: list[ImportIssue]

    def add_error(self, issue: ImportIssue) -> None: ...


def records_feed(
    source: IO[bytes],
    importer: RecordImporter,
    report: RecordReport,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Feed the JSON records of ``source`` (plain or gzip) to ``importer``: each parsed as it is
    read, then written in batches. What is wrong with the file itself — its JSON, its encoding,
    its compression, its size against the bounds (``trees.formats.bounds``) — goes to
    ``report`` as an issue, as the importer's own problems do. ``progress`` hears the bytes
    read after each batch (a job's progress bar)."""
    bounds = read_bounds()
    try:
        batch: list[Any] = []
        for line, document in iter_documents(open_source(source, bounds), bounds=bounds):
            report.records_read += 1
            record = importer.parse(line, document)
            if record is not None:
                batch.append(record)
            if len(batch) >= BATCH_RECORDS:
                importer.batch(batch)
                batch = []
                if progress is not None:
                    progress(_bytes_read(source))
        if batch:
            importer.batch(batch)
    except FormatError as error:
        # Why reading stopped comes first, however many problems came before it.
        report.errors.insert(0, error.issue)
    except UnicodeDecodeError as error:
        report.add_error(ImportIssue(None, "", f"the file is not UTF-8 text ({error.reason})"))


def _bytes_read(source: IO[bytes]) -> int:
    try:
        return source.tell()
    except (OSError, ValueError):
        return 0
