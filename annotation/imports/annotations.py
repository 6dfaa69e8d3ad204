"""Importing annotations: the potato export format read back into a project.

Records are ``{"id", "user", "status", "annotations", "updated_at"}`` (JSONL,
or one JSON array of them), as ``export_annotations --format potato``
writes them (with ``suggestions``, each answer's suggestion mark, from a project
with suggestions: kept on the answers). Each record is checked the way a page submission is: every
answer through its scheme, against the item's tree, and a submitted record
must answer every required scheme. Every problem is listed with its line
and path (``line 3: annotations.response_quality.selected_path[1]: ...``),
and the import is all or nothing.

What an import writes, per record: the user's answers for that item
(``source=import``, the record's status and ``updated_at``), replacing any
answers they had there; their ``Assignment`` in the matching state
(submitted, skipped, or leased for a draft, as if just handed out); and the
item's counts, so that hand-out sees the imported work. People named who
have no account get one that cannot log in; everyone named becomes an
annotator of the project.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.imports.records import records_feed
from annotation.models import Annotation, Assignment, Membership, Project, ProjectItem
from annotation.problems import Problems, describe, join
from annotation.projects.config import ProjectConfig, project_config
from annotation.projects.counts import annotator_submitted_change, project_counts_forget
from annotation.projects.selectors import project_items_by_external_id
from annotation.projects.services import membership_add, user_get_or_create_unusable
from annotation.projects.usernames import username_key, username_look_alike, username_problem
from trees import sql
from trees.audit import audit_record
from trees.formats.records import ImportIssue
from trees.selectors import tree_shapes_by_id
from trees.services import counted
from trees.shapes import TreeShape

LEASED, SUBMITTED, SKIPPED = Assignment.Status.LEASED, Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED
MAX_REPORTED_ERRORS = 1000
MAX_NAMES_SHOWN = 20
RECORD_KEYS = ("id", "user", "status", "annotations", "updated_at")
# The marks an export writes in ``suggestions`` (annotation.exports.rows.suggestion_written):
# whether a judge's suggestion was visible when each answer was made; kept on import.
SUGGESTION_MARKS = {"none": "", **{mark: mark for mark in Annotation.Suggestion.values if mark}}
STATUSES = (Annotation.Status.SUBMITTED, Annotation.Status.DRAFT, Annotation.Status.SKIPPED)
# Schemes whose answers name nodes, and so are checked against the tree's shape.
TREE_TYPES = frozenset({"tree_annotation", "span"})
# What an assignment in each state adds to its item's (active_count, submitted_count).
COUNTS = {LEASED: (1, 0), SUBMITTED: (1, 1)}
ASSIGNMENT_STATUS = {
    Annotation.Status.SUBMITTED: SUBMITTED,
    Annotation.Status.SKIPPED: SKIPPED,
    Annotation.Status.DRAFT: LEASED,
}


@dataclass
class AnnotationImportReport:
    project: str
    records_read: int = 0
    records: int = 0
    annotations: int = 0
    replaced: int = 0
    users_created: list[str] = field(default_factory=list)
    users_added: list[str] = field(default_factory=list)
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
        parts = [f"imported into {self.project}: {counted(self.records, 'record')}, "]
        parts[0] += counted(self.annotations, "annotation")
        if self.replaced:
            parts.append(f"{counted(self.replaced, 'record')} replaced earlier answers")
        if self.users_created:
            parts.append(
                f"{counted(len(self.users_created), 'annotator')} created: {names(self.users_created)}"
            )
        if self.users_added:
            added = (
                "user added as an annotator" if len(self.users_added) == 1 else "users added as annotators"
            )
            parts.append(f"{len(self.users_added):,} {added}: {names(self.users_added)}")
        return "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "committed": self.committed,
            "records_read": self.records_read,
            "records": self.records,
            "annotations": self.annotations,
            "replaced": self.replaced,
            "users_created": self.users_created,
            "users_added": self.users_added,
            "errors": [issue.as_dict() | {"text": str(issue)} for issue in self.errors],
            "errors_not_shown": self.errors_not_shown,
            "summary": self.summary(),
        }


def names(usernames: list[str]) -> str:
    shown = ", ".join(usernames[:MAX_NAMES_SHOWN])
    more = len(usernames) - MAX_NAMES_SHOWN
    return f"{shown} and {more:,} more" if more > 0 else shown


@dataclass
class _Record:
    line: int
    item: str
    username: str
    status: str
    updated_at: datetime
    answers: dict[str, Any]
    tree_id: int = 0
    user: AbstractBaseUser | None = None
    # Each answer's suggestion mark (Annotation.Suggestion), as the record says.
    suggestions: dict[str, str] = field(default_factory=dict)


class _Rollback(Exception):
    pass


def annotations_import(
    *,
    project: Project,
    source: IO[bytes],
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> AnnotationImportReport:
    """Read potato-format records from ``source`` into ``project``, all or nothing.

    Every record is checked before anything is kept; when any is bad, nothing
    is written and the report lists every problem with its line. ``progress`` hears the
    bytes read as the batches are written.
    """
    now = now or timezone.now()
    report = AnnotationImportReport(project=project.name)
    importer = _Importer(project, project_config(project), report, now)
    try:
        with transaction.atomic():
            records_feed(source, importer, report, progress)
            if report.errors:
                raise _Rollback
            audit_record(
                "annotations.import",
                target=project,
                scope=project.name,
                details={
                    "records": report.records,
                    "annotations": report.annotations,
                    "replaced": report.replaced,
                    "users_created": report.users_created[:MAX_NAMES_SHOWN],
                    "users_added": report.users_added[:MAX_NAMES_SHOWN],
                },
            )
    except _Rollback:
        report.records = report.annotations = report.replaced = 0
        report.users_created, report.users_added = [], []
        return report
    report.committed = True
    return report


class _Importer:
    """Checks records and, while none has failed, writes them a batch at a time."""

    def __init__(
        self, project: Project, config: ProjectConfig, report: AnnotationImportReport, now: datetime
    ):
        self.project = project
        self.config = config
        self.report = report
        self.now = now
        self.scheme_names = [scheme.name for scheme in config.schemes]
        self.needs_shape = any(scheme.annotation_type in TREE_TYPES for scheme in config.schemes)
        self.needs_texts = any(scheme.reads_text for scheme in config.schemes)
        self.seen: dict[tuple[str, str], int] = {}
        self.users: dict[str, AbstractBaseUser] = {}
        user_model = get_user_model()
        self.username_field = user_model._meta.get_field(user_model.USERNAME_FIELD)
        self.usernames_checked: set[str] = set()
        self.new_usernames: dict[str, str] = {}  # key -> the file's first new username with it
        self.look_alikes: dict[str, str] = {}  # refused new username -> the one it looks like

    def fail(self, line: int, path: str, message: str) -> None:
        self.report.add_error(ImportIssue(line, path, message))

    # -- reading one record (no database) ---------------------------------------

    def parse(self, line: int, document: Any) -> _Record | None:
        if isinstance(document, ImportIssue):
            self.report.add_error(document)
            return None
        if not isinstance(document, Mapping):
            self.fail(
                line,
                "",
                f"a record must be an object with id, user, status and annotations, got {describe(document)}",
            )
            return None
        before = self.report.error_count
        for key in document:
            if key not in RECORD_KEYS and key != "suggestions":
                self.fail(line, str(key), f"unknown key (expected {', '.join(RECORD_KEYS)})")
        item = self._string(document, "id", line, "the item id")
        username = self._username(document, line)
        status = document.get("status", Annotation.Status.SUBMITTED)
        if status not in STATUSES:
            shown = f'"{status}"' if isinstance(status, str) else describe(status)
            self.fail(line, "status", f"{shown} is not one of {', '.join(STATUSES)}")
        updated_at = self._timestamp(document.get("updated_at"), line)
        answers = document.get("annotations")
        if answers is None:
            self.fail(line, "annotations", "is required (an object of scheme name: answer)")
        elif not isinstance(answers, Mapping):
            self.fail(
                line, "annotations", f"must be an object of scheme name: answer, got {describe(answers)}"
            )
        if item is not None and username is not None:
            first = self.seen.setdefault((item, username), line)
            if first != line:
                self.fail(
                    line,
                    "",
                    f'a second record of "{username}" for item "{item}" (the first is on line {first})',
                )
        suggestions = self._suggestions(document.get("suggestions", {}), line)
        if self.report.error_count > before:
            return None
        assert item is not None and username is not None and updated_at is not None
        return _Record(line, item, username, status, updated_at, dict(answers), suggestions=suggestions)

    def _suggestions(self, value: Any, line: int) -> dict[str, str]:
        """A record's ``suggestions``: scheme name: mark (an export of a project with suggestions)."""
        if not isinstance(value, Mapping):
            self.fail(line, "suggestions", f"must be an object of scheme name: mark, got {describe(value)}")
            return {}
        marks = {}
        for name, mark in value.items():
            if mark not in SUGGESTION_MARKS:
                shown = f'"{mark}"' if isinstance(mark, str) else describe(mark)
                self.fail(
                    line,
                    join("suggestions", str(name)),
                    f"{shown} is not one of {', '.join(SUGGESTION_MARKS)}",
                )
                continue
            marks[str(name)] = SUGGESTION_MARKS[mark]
        return marks

    def _string(self, document: Mapping[str, Any], key: str, line: int, what: str) -> str | None:
        value = document.get(key)
        if value is None:
            self.fail(line, key, f"is required ({what})")
            return None
        if not isinstance(value, str) or not value:
            self.fail(line, key, f"must be a non-empty string, got {describe(value)}")
            return None
        return value

    def _username(self, document: Mapping[str, Any], line: int) -> str | None:
        username = self._string(document, "user", line, "the annotator's username")
        if username is None:
            return None
        try:
            self.username_field.clean(username, None)
        except ValidationError as error:
            self.fail(line, "user", f'"{username}" is not a valid username: {" ".join(error.messages)}')
            return None
        return username

    def _timestamp(self, value: Any, line: int) -> datetime | None:
        if value is None:
            return self.now
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                pass
            else:
                return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
        shown = f'"{value}"' if isinstance(value, str) else describe(value)
        self.fail(line, "updated_at", f"{shown} is not an ISO 8601 date and time")
        return None

    # -- checking a batch against the project, then writing it ------------------

    def batch(self, records: list[_Record]) -> None:
        items = {
            external_id: tree_id
            for external_id, (_, tree_id) in project_items_by_external_id(
                project=self.project, external_ids=(record.item for record in records)
            ).items()
        }
        shapes = tree_shapes_by_id(list(items.values()), self.needs_texts) if self.needs_shape else {}
        good = []
        for record in records:
            tree_id = items.get(record.item)
            if tree_id is None:
                self.fail(record.line, "id", f'no item "{record.item}" in project "{self.project.name}"')
                continue
            record.tree_id = tree_id
            if self._answers_ok(record, shapes.get(tree_id)):
                good.append(record)
        good = self._usernames_ok(good)
        if not self.report.errors:
            # Once anything has failed, later batches are still checked (so
            # that every problem is listed) but no longer written.
            self._write(good)

    def _usernames_ok(self, records: list[_Record]) -> list[_Record]:
        """The records whose username is an account's, or a new one unlike any account's and
        any other new one of the file: a look-alike (``Root`` when ``root`` exists) is refused
        at its line, not mapped (``user_get_or_create_unusable``). One query per batch for the
        names, one per new name for its look-alikes."""
        fresh = {record.username for record in records} - self.usernames_checked
        if fresh:
            user_model = get_user_model()
            field = user_model.USERNAME_FIELD
            existing = set(user_model.objects.filter(**{f"{field}__in": fresh}).values_list(field, flat=True))
            for username in dict.fromkeys(record.username for record in records):  # the file's order
                if username not in fresh or username in existing:
                    continue
                other = username_look_alike(username) or self.new_usernames.setdefault(
                    username_key(username), username
                )
                if other != username:
                    self.look_alikes[username] = other
            self.usernames_checked |= fresh
        good = []
        for record in records:
            other = self.look_alikes.get(record.username)
            if other is None:
                good.append(record)
            else:
                self.fail(record.line, "user", username_problem(record.username, other))
        return good

    def _answers_ok(self, record: _Record, shape: TreeShape | None) -> bool:
        problems = Problems()
        for name, payload in record.answers.items():
            where = join("annotations", str(name))
            if name not in self.scheme_names:
                problems.add(
                    where, f"no scheme of that name (expected {', '.join(sorted(self.scheme_names))})"
                )
                continue
            scheme = self.config.scheme(name)
            value = scheme.validate(payload, where, problems, shape)
            if value is not None:
                record.answers[name] = value
        if record.status == Annotation.Status.SUBMITTED:
            for scheme in self.config.schemes:
                if scheme.required and scheme.is_empty(record.answers.get(scheme.name)):
                    problems.add(
                        join("annotations", scheme.name), "is required before submitting", "required"
                    )
        for problem in problems.items:
            self.fail(record.line, problem.path, problem.message)
        return not problems

    def _write(self, records: list[_Record]) -> None:
        if not records:
            return
        self._resolve_users(records)
        # Each record's (item, person) pair, probed on its own: the tables fill up as the import
        # writes, in a transaction no ANALYZE sees (trees.sql.each_key).
        pairs = {"tree_id": [r.tree_id for r in records], "user_id": [r.user.pk for r in records]}
        project = {"project_id": self.project.pk}
        assignments = {
            (assignment.tree_id, assignment.user_id): assignment
            for assignment in sql.each_key(Assignment, pairs, project, for_update=True)
        }
        existing: dict[tuple[int, int], dict[str, Annotation]] = {}
        for annotation in sql.each_key(Annotation, pairs, project):
            existing.setdefault((annotation.tree_id, annotation.user_id), {})[annotation.scheme] = annotation

        lease = timedelta(minutes=self.config.assignment.lease_minutes)
        created, changed, removed = [], [], []
        new_assignments, changed_assignments = [], []
        deltas: Counter[int] = Counter()
        deltas_submitted: Counter[int] = Counter()
        # Each annotator's submitted items (AnnotatorProgress): training aside, as progress counts them.
        people_submitted: Counter[int] = Counter()
        for record in records:
            key = (record.tree_id, record.user.pk)
            before = existing.get(key, {})
            assignment = assignments.get(key)
            if before or assignment is not None:
                self.report.replaced += 1
            submitted_at = record.updated_at if record.status == Annotation.Status.SUBMITTED else None
            for name, payload in record.answers.items():
                annotation = before.get(name)
                if annotation is None:
                    annotation = Annotation(
                        project=self.project,
                        tree_id=record.tree_id,
                        user=record.user,
                        scheme=name,
                        created_at=self.now,
                    )
                    created.append(annotation)
                else:
                    annotation.version += 1
                    changed.append(annotation)
                annotation.payload = payload
                annotation.status = record.status
                annotation.source = Annotation.Source.IMPORT
                annotation.suggestion = record.suggestions.get(name, "")
                annotation.updated_at = record.updated_at
                annotation.submitted_at = submitted_at
            removed.extend(a.pk for name, a in before.items() if name not in record.answers)
            self.report.annotations += len(record.answers)

            status = ASSIGNMENT_STATUS[record.status]
            if assignment is None:
                assignment = Assignment(
                    project=self.project, tree_id=record.tree_id, user=record.user, version=0
                )
                new_assignments.append(assignment)
            else:
                old_active, old_submitted = COUNTS.get(assignment.status, (0, 0))
                deltas[record.tree_id] -= old_active
                deltas_submitted[record.tree_id] -= old_submitted
                if assignment.kind != Assignment.Kind.TRAINING:
                    people_submitted[record.user.pk] -= assignment.status == SUBMITTED
                changed_assignments.append(assignment)
            active, submitted = COUNTS.get(status, (0, 0))
            deltas[record.tree_id] += active
            deltas_submitted[record.tree_id] += submitted
            if assignment.kind != Assignment.Kind.TRAINING:
                people_submitted[record.user.pk] += status == SUBMITTED
            assignment.status = status
            assignment.version += 1
            if status == LEASED:
                assignment.leased_at = self.now
            assignment.lease_expires_at = self.now + lease if status == LEASED else None
            assignment.submitted_at = submitted_at
            assignment.updated_at = record.updated_at

        if removed:
            Annotation.objects.filter(pk__in=removed).delete()
        Annotation.objects.bulk_create(created, batch_size=1000)
        Annotation.objects.bulk_update(
            changed,
            ["payload", "status", "source", "version", "updated_at", "submitted_at", "suggestion"],
            batch_size=1000,
        )
        Assignment.objects.bulk_create(new_assignments, batch_size=1000)
        Assignment.objects.bulk_update(
            changed_assignments,
            ["status", "version", "leased_at", "lease_expires_at", "submitted_at", "updated_at"],
            batch_size=1000,
        )
        self._update_counts(deltas, deltas_submitted)
        for user_id, change in people_submitted.items():
            annotator_submitted_change(self.project.pk, user_id, change)
        self.report.records += len(records)

    def _resolve_users(self, records: list[_Record]) -> None:
        """Find (or create, unusable) each named user, and make everyone an annotator of the project."""
        wanted = {record.username for record in records} - set(self.users)
        if wanted:
            user_model = get_user_model()
            for user in user_model.objects.filter(**{f"{user_model.USERNAME_FIELD}__in": wanted}):
                self.users[user.get_username()] = user
            for username in sorted(wanted - set(self.users)):
                self.users[username], _ = user_get_or_create_unusable(username)
                self.report.users_created.append(username)
            named = [self.users[username] for username in sorted(wanted)]
            annotators = set(
                Membership.objects.filter(
                    project=self.project, role=Membership.Role.ANNOTATOR, user__in=named
                ).values_list("user_id", flat=True)
            )
            for user in named:
                if user.pk not in annotators:
                    membership_add(project=self.project, user=user, role=Membership.Role.ANNOTATOR)
                    if user.get_username() not in self.report.users_created:
                        self.report.users_added.append(user.get_username())
        for record in records:
            record.user = self.users[record.username]

    def _update_counts(self, active: Counter[int], submitted: Counter[int]) -> None:
        """Apply the items' count changes: one UPDATE per distinct change, not per item."""
        groups: dict[tuple[int, int], list[int]] = {}
        for tree_id in set(active) | set(submitted):
            change = (active[tree_id], submitted[tree_id])
            if change != (0, 0):
                groups.setdefault(change, []).append(tree_id)
        overlap = project_config(self.project).assignment.annotations_per_item
        for (active_change, submitted_change), tree_ids in groups.items():
            ProjectItem.objects.filter(project=self.project, tree_id__in=tree_ids).places_change(
                overlap=overlap, active=active_change, submitted=submitted_change
            )
        project_counts_forget(self.project.pk)
