"""Saving what annotators answer: drafts, submissions, skips.

Every write names the item version it was based on; a write based on an
older version is refused (``StaleVersion``) rather than silently overwriting
newer work from another tab or device. Payloads are checked by their scheme
before anything is written: any problem refuses the whole write.

One exception keeps the annotator's last change when a page is left with a save
under way: the annotate page names itself and numbers its drafts (``PageSave``),
and sends its last changes at once, based on the same version as the save under
way. The two may arrive in either order, or together. A draft is taken when its
version is current, or when every write since its version was an earlier draft of
the same page (each draft carries all the page's answers, so the later one holds
the earlier one's changes); an earlier draft arriving after a later one is refused
as stale. A write that waited for another's lock reads the answers it left.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.http import Http404
from django.utils import timezone

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.problems import Problems, ProblemsError
from annotation.projects.config import project_config
from annotation.projects.counts import annotator_submitted_change, project_counts_submitted
from annotation.quality.gold import item_gold_score
from annotation.work.assignment import EXPIRED, LEASED, SKIPPED, SUBMITTED
from annotation.work.signals import item_submitted
from annotation.work.suggestions import item_suggestions, suggestion_mark
from trees import sql
from trees.audit import audit_record
from trees.models import ConversationTree
from trees.selectors import tree_shape


class StaleVersion(Exception):
    """The write was based on an older version of the item."""

    def __init__(self, current: int):
        super().__init__(f"this item has changed since you loaded it (now version {current}); reload it")
        self.current = current


@dataclass(frozen=True)
class PageSave:
    """Which annotate page sent a draft (a random name it took on loading), and its draft's
    number on that page (counting up)."""

    page: str
    sequence: int

    def mark(self, version: int) -> str:
        """What the draft leaves on the assignment (``last_page_save``), with the version it made."""
        return f"{self.page}:{self.sequence}:{version}"

    def follows(self, assignment: Assignment) -> bool:
        """Whether the assignment's last write was an earlier draft of this page: a write of any
        other kind leaves no mark, or leaves a version other than the mark's."""
        page, sequence, version = [*assignment.last_page_save.split(":"), "", "", ""][:3]
        return (
            page == self.page
            and sequence.isdigit()
            and int(sequence) < self.sequence
            and version == str(assignment.version)
        )


class NotAssigned(Exception):
    """The user holds no assignment for this item (or lost it)."""

    def __init__(self, message: str, code: str = "not_assigned"):
        super().__init__(message)
        self.code = code


@dataclass
class ItemAnswers:
    """An annotator's item: their assignment and answers, by scheme."""

    assignment: Assignment
    annotations: dict[str, Annotation]

    @property
    def payloads(self) -> dict[str, Any]:
        return {scheme: annotation.payload for scheme, annotation in self.annotations.items()}


def item_answers(*, project: Project, tree: ConversationTree | int, user: AbstractBaseUser) -> ItemAnswers:
    """The user's assignment for ``tree``, with the tree, and their answers (one statement).

    Raises Http404 when the tree is no item of the project, NotAssigned when it
    is but the user holds no assignment for it.
    """
    assignment, answers = _work(project, tree, user, lock=False, with_answers=True)
    return ItemAnswers(assignment, {answer.scheme: answer for answer in answers})


def item_assignment(*, project: Project, tree: ConversationTree | int, user: AbstractBaseUser) -> Assignment:
    """The user's assignment for ``tree``, with the tree (one statement); raises as ``item_answers``."""
    return _work(project, tree, user, lock=False, with_answers=False)[0]


def draft_save(
    *,
    project: Project,
    tree: ConversationTree | int,
    user: AbstractBaseUser,
    answers: Mapping[str, Any],
    version: int,
    time_spent_ms: int = 0,
    page_save: PageSave | None = None,
    suggestions_taken: Collection[str] = (),
) -> Assignment:
    """Keep the answers as a draft and extend the lease. ``page_save``: the annotate page's
    name for itself and the draft's number, which lets its drafts arrive out of order.
    ``suggestions_taken``: the schemes whose answer the annotator copied from the judge's
    suggestion (``annotation.work.suggestions``)."""
    return _write(
        project,
        tree,
        user,
        answers,
        version,
        time_spent_ms,
        submit=False,
        page_save=page_save,
        taken=suggestions_taken,
    )


def item_submit(
    *,
    project: Project,
    tree: ConversationTree | int,
    user: AbstractBaseUser,
    answers: Mapping[str, Any],
    version: int,
    time_spent_ms: int = 0,
    suggestions_taken: Collection[str] = (),
) -> Assignment:
    """Submit the answers (every scheme with ``label_requirement`` must be answered); once
    committed, ``signals.item_submitted`` tells the groups above (adjudication's automatic rule,
    webhooks)."""
    return _write(project, tree, user, answers, version, time_spent_ms, submit=True, taken=suggestions_taken)


def _locked_assignment(project: Project, tree: ConversationTree | int, user: AbstractBaseUser) -> Assignment:
    """The user's assignment for the item, locked, with its tree (one statement).

    Raises Http404 when the tree is no item of the project, NotAssigned when it
    is but the user holds no assignment for it.
    """
    return _work(project, tree, user, lock=True, with_answers=False)[0]


def _work(
    project: Project, tree: ConversationTree | int, user: AbstractBaseUser, *, lock: bool, with_answers: bool
) -> tuple[Assignment, list[Annotation]]:
    """The user's assignment for the item with its tree, locked if ``lock``, and their answers to
    it ``with_answers`` (a row per answer, joined in the same statement): one statement, written
    out (``trees.sql``) as the loop reads or writes an item on every request."""
    tree_id = tree if isinstance(tree, int) else tree.pk
    assignment_columns, tree_columns = sql.columns(Assignment, "mine"), sql.columns(ConversationTree, "tree")
    answer_columns = sql.columns(Annotation, "answer")
    answers_join = (
        f", {answer_columns.sql} FROM {sql.table(Assignment)} mine "
        f"LEFT JOIN {sql.table(Annotation)} answer ON answer.project_id = mine.project_id "
        "AND answer.tree_id = mine.tree_id AND answer.user_id = mine.user_id "
        if with_answers
        else f" FROM {sql.table(Assignment)} mine "
    )
    rows = sql.fetch_all(
        f"SELECT {assignment_columns.sql}, {tree_columns.sql}{answers_join}"
        f"JOIN {sql.table(ConversationTree)} tree ON tree.id = mine.tree_id "
        "WHERE mine.project_id = %s AND mine.tree_id = %s AND mine.user_id = %s"
        + (sql.lock(of="mine") if lock else ""),
        [project.pk, tree_id, user.pk],
    )
    if not rows:
        # Only on this error path: tell "no such item" from "not yours".
        if not ProjectItem.objects.filter(project=project, tree_id=tree_id).exists():
            raise Http404("no such item in this project")
        raise NotAssigned("this item is not assigned to you; ask for the next item")
    assignment = assignment_columns.load(rows[0])
    assignment.tree = tree_columns.load(rows[0], assignment_columns.width)
    start = assignment_columns.width + tree_columns.width
    answers = [answer_columns.load(row, start) for row in rows if with_answers and row[start] is not None]
    return assignment, answers


def _reactivate(project: Project, assignment: Assignment, now: datetime) -> None:
    """Take back an item whose lease ran out, if nobody has taken its place since."""
    if assignment.kind != Assignment.Kind.WORK:
        assignment.status = LEASED  # gold checks and training take no place in the overlap
        return
    overlap = project_config(project).assignment.annotations_per_item
    updated = ProjectItem.objects.filter(
        project=project, tree_id=assignment.tree_id, active_count__lt=overlap
    ).places_change(overlap=overlap, active=1)
    if not updated:
        raise NotAssigned(
            "your time on this item ran out and others have taken it; ask for the next item", "lease_expired"
        )
    assignment.status = LEASED


@transaction.atomic
@sql.together()  # its closing writes (answers, assignment, item, log entry) are one statement
def _write(
    project: Project,
    tree: ConversationTree | int,
    user: AbstractBaseUser,
    answers: Mapping[str, Any],
    version: int,
    time_spent_ms: int,
    *,
    submit: bool,
    page_save: PageSave | None = None,
    taken: Collection[str] = (),
) -> Assignment:
    now = timezone.now()
    # Time on task is a measurement from the browser: never negative, never absurd (a day).
    time_spent_ms = min(max(int(time_spent_ms or 0), 0), 86_400_000)
    config = project_config(project)
    assignment, answers_before = _work(project, tree, user, lock=True, with_answers=True)
    tree = assignment.tree
    if assignment.version != version:
        if page_save is None or version > assignment.version or not page_save.follows(assignment):
            raise StaleVersion(assignment.version)
        # The page's earlier draft was written since: perhaps while this write waited for its
        # lock, and on PostgreSQL the statement above then read the answers as they were before
        # it (only the locked row is read again). A new statement sees what it wrote.
        answers_before = list(Annotation.objects.filter(project=project, tree_id=tree.pk, user=user))
    if assignment.status == SKIPPED:
        raise NotAssigned("you skipped this item", "skipped")
    if assignment.kind == Assignment.Kind.TRAINING and assignment.status == SUBMITTED:
        # Its expected answers were shown on submitting: a change now would only copy them.
        raise NotAssigned(
            "you submitted this training item and have seen its answers; ask for the next item",
            "already_submitted",
        )

    existing = {answer.scheme: answer for answer in answers_before}
    problems = Problems()
    if not isinstance(answers, Mapping):
        problems.add("annotations", "must be an object of scheme name: answer")
        problems.raise_if_any()
    names = {scheme.name for scheme in config.schemes}
    shape = None
    normalized: dict[str, Any] = {}
    refused: set[str] = set()
    cleared: set[str] = set()
    for name, payload in answers.items():
        if name not in names:
            # Paths are relative to the answers, like the schemes' own problems.
            problems.add(
                str(name),
                f"no scheme of that name (expected {', '.join(sorted(names))})",
                "unknown_scheme",
            )
            continue
        scheme = config.scheme(name)
        if payload is None:
            if scheme.annotation_type != "tree_annotation":
                cleared.add(name)  # null takes the answer back
                continue
            payload = {}  # a tree answer keeps its shown orders: only its answers go
        if scheme.annotation_type in ("tree_annotation", "span", "rubric") and shape is None:
            # One query for the shape, with the texts if any scheme answered here quotes them.
            with_texts = any(config.scheme(other).reads_text for other in answers if other in names)
            shape = tree_shape(tree, with_texts=with_texts)
        previous = existing[name].payload if name in existing else None
        value = scheme.validate(payload, name, problems, shape, previous)
        if value is not None:
            normalized[name] = value
        else:
            refused.add(name)
    if submit:
        merged = {name: a.payload for name, a in existing.items() if name not in cleared} | normalized
        for scheme in config.schemes:
            # An answer refused above is reported for what is wrong with it, not as missing.
            if scheme.required and scheme.name not in refused and scheme.is_empty(merged.get(scheme.name)):
                problems.add(scheme.name, "is required before submitting", "required")
    problems.raise_if_any()

    if assignment.status == EXPIRED:
        _reactivate(project, assignment, now)
    # Once the item is submitted, every answer to it is (a later draft corrects it).
    finished = submit or assignment.status == SUBMITTED
    # A project with suggestions: which schemes the judge answered (one query), so that each
    # answer written says whether a suggestion was visible when it was made.
    suggested = item_suggestions(project=project, tree_id=tree.pk, config=config)
    status = Annotation.Status.SUBMITTED if finished else Annotation.Status.DRAFT
    changed, created = [], []
    for name, payload in normalized.items():
        annotation = existing.get(name)
        if annotation is None:
            created.append(
                Annotation(
                    project=project,
                    tree=tree,
                    user=user,
                    scheme=name,
                    payload=payload,
                    status=status,
                    created_at=now,
                    updated_at=now,
                    submitted_at=now if finished else None,
                )
            )
            annotation, previous = created[-1], None
        else:
            previous = annotation.payload
            annotation.payload = payload
            changed.append(annotation)
        if suggested:
            annotation.suggestion = suggestion_mark(
                show=config.suggestions.show,
                suggested=name in suggested,
                taken=name in taken,
                seen=assignment.submitted_at is not None,
                changed=payload != previous,
                before=annotation.suggestion,
            )
    # Answers not sent this time keep their payload but follow the item's status.
    for annotation in existing.values():
        if annotation.scheme not in normalized and annotation.scheme not in cleared:
            changed.append(annotation)
    for annotation in changed:
        annotation.version += 1
        annotation.updated_at = now
        if annotation.status != Annotation.Status.SUBMITTED or submit:
            annotation.status = status
        if submit:
            annotation.submitted_at = now
    if cleared:
        Annotation.objects.filter(project=project, tree=tree, user=user, scheme__in=cleared).delete()
    sql.insert(created)
    for annotation in changed:  # one per scheme, and schemes are few
        sql.update(annotation, ["payload", "status", "version", "updated_at", "submitted_at", "suggestion"])

    if finished and assignment.kind != Assignment.Kind.WORK:
        # A gold check or training item is scored with the answers, in this transaction (quality.gold).
        answers = {name: a.payload for name, a in existing.items() if name not in cleared} | normalized
        assignment.gold_score = item_gold_score(
            project=project, tree_id=tree.pk, answers=answers, config=config
        )
    newly_submitted = submit and assignment.status != SUBMITTED
    # Review: work sent back is pending review again once resubmitted, and accepted work that
    # changes is no longer what was accepted (the decisions stay in Review).
    if assignment.review_status == Assignment.ReviewStatus.ACCEPTED or (submit and assignment.review_status):
        assignment.review_status = Assignment.ReviewStatus.UNREVIEWED
    assignment.version += 1
    assignment.updated_at = now
    assignment.time_spent_ms += time_spent_ms
    assignment.last_page_save = page_save.mark(assignment.version) if page_save else ""
    if submit:
        assignment.status = SUBMITTED
        assignment.submitted_at = now
        assignment.lease_expires_at = None
    else:
        lease = timedelta(minutes=config.assignment.lease_minutes)
        if assignment.status == LEASED:
            assignment.lease_expires_at = now + lease
    sql.update(
        assignment,
        [
            "status",
            "version",
            "updated_at",
            "submitted_at",
            "lease_expires_at",
            "time_spent_ms",
            "review_status",
            "gold_score",
            "last_page_save",
        ],
    )
    if newly_submitted and assignment.kind != Assignment.Kind.TRAINING:
        annotator_submitted_change(project.pk, user.pk, 1)
    if newly_submitted and assignment.kind == Assignment.Kind.WORK:

        def counted(rows: list[tuple[Any, ...]]) -> None:
            for submitted_count, is_gold in rows:
                if not is_gold:
                    project_counts_submitted(project.pk, submitted_count)

        sql.write(
            f"UPDATE {sql.table(ProjectItem)} SET submitted_count = submitted_count + 1 "
            "WHERE project_id = %s AND tree_id = %s RETURNING submitted_count, is_gold",
            [project.pk, tree.pk],
            counted,
        )
        _announce_submission(project, tree, user, assignment.version)
    action = "annotation.submit" if submit else "annotation.create" if created else "annotation.update"
    details = {"schemes": sorted(normalized), "cleared": sorted(cleared), "version": assignment.version}
    audit_record(action, target=tree, scope=project.name, details=details, actor=user)
    return assignment


@transaction.atomic
def item_skip(
    *, project: Project, tree: ConversationTree | int, user: AbstractBaseUser, version: int | None = None
) -> Assignment:
    """Give the item up: it goes back to others and never comes back to this user."""
    now = timezone.now()
    assignment = _locked_assignment(project, tree, user)
    tree = assignment.tree
    if version is not None and assignment.version != version:
        raise StaleVersion(assignment.version)
    if assignment.status == SUBMITTED:
        raise NotAssigned("you already submitted this item", "already_submitted")
    if assignment.status == SKIPPED:
        return assignment
    if assignment.kind == Assignment.Kind.TRAINING:
        raise NotAssigned("training items cannot be skipped: answer it to go on", "training")
    if assignment.status == LEASED and assignment.kind == Assignment.Kind.WORK:
        overlap = project_config(project).assignment.annotations_per_item
        ProjectItem.objects.filter(project=project, tree=tree).places_change(overlap=overlap, active=-1)
    assignment.status = SKIPPED
    assignment.version += 1
    assignment.updated_at = now
    assignment.lease_expires_at = None
    assignment.save(update_fields=["status", "version", "updated_at", "lease_expires_at"])
    Annotation.objects.filter(project=project, tree=tree, user=user).update(
        status=Annotation.Status.SKIPPED, updated_at=now, version=F("version") + 1
    )
    details = {"version": assignment.version}
    audit_record("annotation.skip", target=tree, scope=project.name, details=details, actor=user)
    return assignment


def _announce_submission(
    project: Project, tree: ConversationTree, user: AbstractBaseUser, version: int
) -> None:
    """Send ``item_submitted`` once the submission commits: no query here (the loop's counts
    are pinned); what hears it decides whether anyone is told."""
    transaction.on_commit(
        lambda: item_submitted.send(
            sender=project, tree_id=tree.pk, external_id=tree.external_id, user=user, version=version
        ),
        robust=True,
    )


__all__ = [
    "ItemAnswers",
    "NotAssigned",
    "PageSave",
    "ProblemsError",
    "StaleVersion",
    "draft_save",
    "item_answers",
    "item_assignment",
    "item_skip",
    "item_submit",
]
