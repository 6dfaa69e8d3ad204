"""Importing gold items: expected answers read from a file onto the project's items.

Records are the ones ``import_annotations`` reads — ``{"id", "annotations"}``,
with ``user``, ``status`` and ``updated_at`` allowed and unused — so an
expert's work exported with ``export_annotations --format potato --user
EXPERT`` loads as it is (``user=`` keeps one person's records from a file of
several). Each record may add an ``explanation``, shown to annotators after
they answer the item in training. Potato's gold files read too: the answers
may be under ``gold_label``, ``correct_answers`` or ``expected_answer`` and
given as bare values (``"positive"`` for a radio).

Every answer is checked by its scheme against the item's tree, and every
problem is listed with its line and path (``line 3: annotations.sentiment:
"positve" is not one of the labels ...``); the import is all or nothing.
Each item named becomes gold, its expected answers and explanation
replaced by the record's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from django.db import transaction

from annotation.imports.records import records_feed
from annotation.models import Project, ProjectItem
from annotation.problems import Problems, describe
from annotation.projects.config import ProjectConfig, project_config
from annotation.projects.counts import project_counts_forget
from annotation.projects.selectors import project_items_by_external_id
from annotation.quality.gold import gold_answers_check, needs_shape
from trees.audit import audit_record
from trees.formats.records import ImportIssue
from trees.selectors import tree_shapes_by_id
from trees.services import counted

MAX_REPORTED_ERRORS = 1000
ANSWER_KEYS = ("annotations", "gold_label", "correct_answers", "expected_answer")
RECORD_KEYS = ("id", *ANSWER_KEYS, "explanation", "user", "status", "updated_at")


@dataclass
class GoldImportReport:
    project: str
    records_read: int = 0
    items: int = 0
    skipped: int = 0  # records of other people than the one asked for
    errors: list[ImportIssue] = field(default_factory=list)
    errors_not_shown: int = 0
    committed: bool = False

    def add_error(self, issue: ImportIssue) -> None:
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(issue)
        else:
            self.errors_not_shown += 1

    @property
    def error_count(self) -> int:
        return len(self.errors) + self.errors_not_shown

    def summary(self) -> str:
        if not self.committed:
            return (
                f"nothing imported into {self.project}: {counted(self.error_count, 'error')} "
                f"in {counted(self.records_read, 'record')}"
            )
        text = f"{counted(self.items, 'gold item')} imported into {self.project}"
        if self.skipped:
            text += f"; {counted(self.skipped, 'record')} of other annotators skipped"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "committed": self.committed,
            "records_read": self.records_read,
            "items": self.items,
            "skipped": self.skipped,
            "errors": [issue.as_dict() | {"text": str(issue)} for issue in self.errors],
            "errors_not_shown": self.errors_not_shown,
            "summary": self.summary(),
        }


@dataclass
class _Record:
    line: int
    item: str
    answers: Any
    answers_key: str
    explanation: str


class _Rollback(Exception):
    pass


def gold_import(*, project: Project, source: IO[bytes], user: str | None = None) -> GoldImportReport:
    """Read gold records from ``source`` into ``project``, all or nothing; ``user`` keeps only
    the records naming that annotator."""
    report = GoldImportReport(project=project.name)
    importer = _GoldImporter(project, project_config(project), report, user)
    try:
        with transaction.atomic():
            records_feed(source, importer, report)
            if not report.errors and not report.items:
                report.add_error(ImportIssue(None, "", "no gold records in the file"))
            if report.errors:
                raise _Rollback
            details = {"items": report.items, "records_read": report.records_read, "skipped": report.skipped}
            audit_record("gold.import", target=project, scope=project.name, details=details)
    except _Rollback:
        report.items = 0
        return report
    report.committed = True
    return report


class _GoldImporter:
    """Checks records and, while none has failed, writes them a batch at a time."""

    def __init__(self, project: Project, config: ProjectConfig, report: GoldImportReport, user: str | None):
        self.project = project
        self.config = config
        self.report = report
        self.user = user
        self.with_shape, self.with_texts = needs_shape(config)
        self.seen: dict[str, int] = {}

    def fail(self, line: int, path: str, message: str) -> None:
        self.report.add_error(ImportIssue(line, path, message))

    def parse(self, line: int, document: Any) -> _Record | None:
        if isinstance(document, ImportIssue):
            self.report.add_error(document)
            return None
        if not isinstance(document, Mapping):
            self.fail(
                line, "", f"a record must be an object with id and annotations, got {describe(document)}"
            )
            return None
        if self.user is not None and document.get("user") != self.user:
            self.report.skipped += 1
            return None
        before = self.report.error_count
        for key in document:
            if key not in RECORD_KEYS:
                self.fail(line, str(key), f"unknown key (expected {', '.join(RECORD_KEYS)})")
        item = document.get("id")
        if not isinstance(item, str) or not item:
            self.fail(line, "id", f"is required: the item id, a non-empty string (got {describe(item)})")
        given = [key for key in ANSWER_KEYS if key in document]
        if not given:
            self.fail(line, "annotations", "is required (an object of scheme name: expected answer)")
        elif len(given) > 1:
            self.fail(line, given[1], f"gives the answers again (they are under {given[0]} already)")
        explanation = document.get("explanation", "")
        if not isinstance(explanation, str):
            self.fail(line, "explanation", f"must be a string, got {describe(explanation)}")
        if isinstance(item, str) and item:
            first = self.seen.setdefault(item, line)
            if first != line:
                self.fail(line, "id", f'a second record for item "{item}" (the first is on line {first})')
        if self.report.error_count > before:
            return None
        return _Record(line, item, document[given[0]], given[0], explanation)

    def batch(self, records: list[_Record]) -> None:
        items = project_items_by_external_id(
            project=self.project, external_ids=(record.item for record in records)
        )
        shapes = (
            tree_shapes_by_id([tree_id for _, tree_id in items.values()], self.with_texts)
            if self.with_shape
            else {}
        )
        good = []
        for record in records:
            found = items.get(record.item)
            if found is None:
                self.fail(record.line, "id", f'no item "{record.item}" in project "{self.project.name}"')
                continue
            pk, tree_id = found
            problems = Problems()
            answers = gold_answers_check(
                config=self.config,
                answers=record.answers,
                shape=shapes.get(tree_id),
                problems=problems,
                path=record.answers_key,
            )
            if not answers and not problems:
                problems.add(record.answers_key, "gives no expected answer", "required")
            for problem in problems.items:
                self.fail(record.line, problem.path, problem.message)
            if not problems:
                good.append(
                    ProjectItem(
                        pk=pk, is_gold=True, gold_answers=answers, gold_explanation=record.explanation
                    )
                )
        if not self.report.errors and good:
            # Once anything has failed, later batches are still checked but no longer written.
            ProjectItem.objects.bulk_update(
                good, ["is_gold", "gold_answers", "gold_explanation"], batch_size=1000
            )
            project_counts_forget(self.project.pk)
            self.report.items += len(good)
