"""Writes of the evaluation app: rubrics and their versions, results in bulk.

- ``rubric_save`` validates YAML and makes a new version when it changed.
- ``project_evaluate`` runs a rubric's automatic checks over every item of a
  project: trees are read in chunks (two queries per chunk, whatever their
  size), results are written per chunk by deleting the chunk's previous
  automatic rows of that version and inserting the new ones, so a second run
  leaves exactly what the first did.
- ``judgments_combine`` turns the judges' submitted answers into ``human``
  results (majority per criterion) and ``combined`` ones (the judges'
  majority where they answered, the automatic checks elsewhere), writing only
  what changed.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone

from annotation.models import Annotation, Project
from annotation.problems import Problem, ProblemsError
from annotation.projects.config import project_config
from annotation.webhooks.events import EVALUATION_FINISHED, event_emit
from evaluation.checks import registered_python_checks
from evaluation.judgments import majority, vote_note, votes_collect
from evaluation.models import EvaluationResult, Rubric, RubricVersion
from evaluation.rubrics import RubricSpec, parse_rubric
from evaluation.scoring import Evaluation, evaluate
from evaluation.subjects import Subject, TreeIndex, subject_for, subjects
from trees.audit import CURRENT, audit_record
from trees.formats.jsonstream import encode
from trees.models import ConversationTree
from trees.store import insert_rows, tree_records

AUTO = EvaluationResult.Source.AUTO
HUMAN = EvaluationResult.Source.HUMAN
COMBINED = EvaluationResult.Source.COMBINED


class NoVersion(Exception):
    """The rubric has no version yet (it was never saved through ``rubric_save``)."""


# -- rubrics ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RubricSaved:
    rubric: Rubric
    version: RubricVersion
    spec: RubricSpec
    created: bool  # a new rubric
    changed: bool  # a new version


@transaction.atomic
def rubric_save(
    *, yaml_text: str, user: AbstractBaseUser | None = None, name: str | None = None
) -> RubricSaved:
    """Create the rubric the YAML names, or give it a new version if the YAML changed.

    ``name``: the rubric being edited (the admin's form): the YAML must keep
    that name. Raises ProblemsError with every problem of the YAML.
    """
    spec = rubric_parse_storable(yaml_text)
    if name is not None and spec.name != name:
        raise ProblemsError(
            [Problem("name", f'"{spec.name}" is not this rubric\'s name: a rubric keeps its name ("{name}")')]
        )
    rubric, created = Rubric.objects.select_for_update().get_or_create(
        name=spec.name, defaults={"title": spec.title, "yaml": yaml_text}
    )
    latest = rubric.versions.order_by("-number").first()
    if latest is not None and latest.yaml == yaml_text:
        return RubricSaved(rubric, latest, spec, created, changed=False)
    author = user if user is not None and user.is_authenticated else None
    version = RubricVersion.objects.create(
        rubric=rubric,
        number=(latest.number + 1) if latest else 1,
        yaml=yaml_text,
        spec=spec.as_json(),
        created_by=author,
    )
    rubric.title, rubric.yaml = spec.title, yaml_text
    rubric.save(update_fields=["title", "yaml", "updated_at"])
    audit_record(
        "rubric.create" if created else "rubric.version",
        target=rubric,
        scope=rubric.name,
        details={"version": version.number, "criteria": len(spec.criteria)},
        actor=author if author is not None else CURRENT,
    )
    return RubricSaved(rubric, version, spec, created, changed=True)


def rubric_parse_storable(yaml_text: str) -> RubricSpec:
    """The rubric ``yaml_text`` defines, checked also against what its row can hold (a name
    of at most 100 characters, a title of at most 200); raises ProblemsError. Saves nothing:
    what ``rubric_save`` and a validation without saving both read."""
    spec = parse_rubric(yaml_text)
    problems = []
    for key in ("name", "title"):
        longest = Rubric._meta.get_field(key).max_length
        if len(getattr(spec, key)) > longest:
            problems.append(Problem(key, f"is too long (at most {longest} characters)", "max_length"))
    if problems:
        raise ProblemsError(problems)
    return spec


def rubric_version_current(rubric: Rubric) -> RubricVersion:
    version = rubric.versions.order_by("-number").first()
    if version is None:
        raise NoVersion(f"rubric {rubric.name} has no version yet: save it in the admin or create_rubric")
    return version


def rubric_spec(version: RubricVersion) -> RubricSpec:
    """The version's rubric, parsed once per process (versions never change)."""
    return _parsed(version.yaml, tuple(sorted(registered_python_checks())))


@lru_cache(maxsize=64)
def _parsed(yaml_text: str, python_checks: tuple[str, ...]) -> RubricSpec:
    return parse_rubric(yaml_text, python_checks=python_checks)


# -- automatic checks in bulk ----------------------------------------------------------------


@dataclass
class EvaluationSummary:
    version: RubricVersion
    items: int = 0
    results: int = 0
    outcomes: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def line(self, project_name: str) -> str:
        counts = ", ".join(f"{name} {self.outcomes.get(name, 0):,}" for name in self._names())
        rate = f", {self.items / self.seconds:,.0f} items/s" if self.seconds > 0 else ""
        what = f"{self.results:,} results" if self.results != self.items else f"{self.items:,} items"
        return (
            f"evaluated {what} of {project_name} with rubric {self.version.rubric.name} "
            f"v{self.version.number} in {self.seconds:.2f} s{rate}: {counts}"
        )

    def _names(self) -> list[str]:
        return [outcome["name"] for outcome in self.version.spec.get("outcomes", [])]


def automatic_verdicts(spec: RubricSpec, subject: Subject) -> tuple[dict[str, bool], dict[str, str]]:
    """Each criterion's and gate's automatic verdict, with notes for those no check decides."""
    verdicts: dict[str, bool] = {}
    notes: dict[str, str] = {}
    for item in spec.checks:
        if item.check is None:
            verdicts[item.key] = False
            notes[item.key] = "no automatic check: judged by people"
            continue
        errors = len(subject.errors)
        verdicts[item.key] = item.check(subject)
        if len(subject.errors) > errors:
            notes[item.key] = "the check failed with an error: " + "; ".join(subject.errors[errors:])
    return verdicts, notes


def project_evaluate(
    *,
    project: Project,
    rubric: Rubric,
    chunk_size: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> EvaluationSummary:
    """Run the current version's automatic checks over every item of ``project`` and store the results.

    ``progress(done, total)`` is called after each chunk. Human and combined
    results are brought up to date afterwards (``judgments_combine``).
    """
    started = time.perf_counter()
    version = rubric_version_current(rubric)
    spec = rubric_spec(version)
    summary = EvaluationSummary(version=version)
    trees = ConversationTree.objects.filter(project_items__project=project)
    # A project's trees all come from its dataset, where external ids are unique.
    tree_ids = dict(trees.values_list("external_id", "pk"))
    total = len(tree_ids)
    # Rows go in through the database's bulk path (trees.store.insert_rows): the
    # ORM's bulk_create would spend more time preparing values than checking.
    now = EvaluationResult._meta.get_field("computed_at").get_db_prep_value(timezone.now(), connection)
    with transaction.atomic():
        batch: list[tuple] = []
        batch_trees: list[int] = []
        for record in tree_records(trees, chunk_size=chunk_size):
            tree_id = tree_ids[record.external_id]
            batch_trees.append(tree_id)
            for unit, subject in subjects(record, spec.target):
                verdicts, notes = automatic_verdicts(spec, subject)
                result = evaluate(spec, verdicts, notes)
                summary.outcomes[result.outcome] += 1
                batch.append(
                    (
                        version.pk,
                        project.pk,
                        tree_id,
                        unit,
                        AUTO,
                        encode(result.details),
                        result.score,
                        result.outcome,
                        result.explanation,
                        "{}",
                        subject.model_name or "",
                        now,
                    )
                )
            if len(batch_trees) >= chunk_size:
                summary.results += _replace(version, project, batch_trees, batch)
                summary.items += len(batch_trees)
                batch, batch_trees = [], []
                if progress is not None:
                    progress(summary.items, total)
        if batch_trees:
            summary.results += _replace(version, project, batch_trees, batch)
            summary.items += len(batch_trees)
            if progress is not None:
                progress(summary.items, total)
        audit_record(
            "evaluation.run",
            target=rubric,
            scope=project.name,
            details={
                "version": version.number,
                "items": summary.items,
                "results": summary.results,
                "outcomes": dict(summary.outcomes),
            },
        )
    judgments_combine(project=project, rubric=rubric)
    summary.seconds = time.perf_counter() - started
    event_emit(
        project=project,
        event=EVALUATION_FINISHED,
        data={
            "rubric": rubric.name,
            "version": version.number,
            "items": summary.items,
            "results": summary.results,
            "outcomes": dict(summary.outcomes),
        },
    )
    return summary


def _row(
    version: RubricVersion,
    project: Project,
    tree_id: int,
    unit: str,
    source: str,
    result: Evaluation,
    votes: dict[str, Any],
    model_name: str | None,
    now: Any,
) -> EvaluationResult:
    return EvaluationResult(
        rubric_version=version,
        project=project,
        tree_id=tree_id,
        node=unit,
        source=source,
        details=result.details,
        score=result.score,
        outcome=result.outcome,
        explanation=result.explanation,
        votes=votes,
        model_name=model_name or "",
        computed_at=now,
    )


RESULT_COLUMNS = (
    "rubric_version_id",
    "project_id",
    "tree_id",
    "node",
    "source",
    "details",
    "score",
    "outcome",
    "explanation",
    "votes",
    "model_name",
    "computed_at",
)


def _replace(version: RubricVersion, project: Project, tree_ids: list[int], rows: list[tuple]) -> int:
    """The chunk's automatic results of this version, instead of whatever they were."""
    EvaluationResult.objects.filter(
        rubric_version=version, project=project, source=AUTO, tree_id__in=tree_ids
    ).delete()
    insert_rows(EvaluationResult, RESULT_COLUMNS, rows)
    return len(rows)


# -- people's judgements ----------------------------------------------------------------------


def rubric_scheme_names(project: Project, rubric: Rubric) -> list[str]:
    """The project's ``rubric`` schemes that judge with ``rubric``."""
    return [
        scheme.name
        for scheme in project_config(project).schemes
        if scheme.annotation_type == "rubric" and getattr(scheme, "rubric_name", None) == rubric.name
    ]


@dataclass(frozen=True)
class CombineSummary:
    units: int  # units with at least one judgement
    written: int  # rows inserted or changed
    deleted: int


def judgments_combine(*, project: Project, rubric: Rubric) -> CombineSummary:
    """Bring the ``human`` and ``combined`` results of the current version up to date.

    Reads the rubric's current version (one query), the stored human and
    combined rows (one), the submitted answers of the project's rubric
    schemes for ``rubric`` (one), and the judged trees for the automatic
    verdicts and model names (two queries per 1,000); writes only rows that
    changed, so a report that finds nothing new writes nothing. Nothing at all
    when the project has no rubric scheme for ``rubric``.
    """
    names = rubric_scheme_names(project, rubric)
    if not names:
        return CombineSummary(0, 0, 0)
    version = rubric.versions.order_by("-number").first()
    if version is None:
        return CombineSummary(0, 0, 0)
    spec = rubric_spec(version)
    stored = {
        (row.tree_id, row.node, row.source): row
        for row in EvaluationResult.objects.filter(
            project=project, rubric_version=version, source__in=[HUMAN, COMBINED]
        )
    }
    by_tree: dict[int, list[tuple[str, Any]]] = defaultdict(list)
    judge_notes: dict[tuple[int, str], list[str]] = defaultdict(list)
    for tree_id, user_id, username, payload in (
        Annotation.objects.of_annotators()
        .filter(project=project, scheme__in=names, status=Annotation.Status.SUBMITTED)
        .order_by("tree_id", "user__username")
        .values_list("tree_id", "user_id", "user__username", "payload")
    ):
        by_tree[tree_id].append((str(user_id), payload))
        for unit, note in _payload_notes(payload, spec.target):
            judge_notes[(tree_id, unit)].append(f"{username}: {note}")
    fresh = _judged_rows(project, version, spec, by_tree, judge_notes)
    fields = ("details", "score", "outcome", "explanation", "votes", "model_name")
    changed, created = [], []
    for key, row in fresh.items():
        old = stored.get(key)
        if old is None:
            created.append(row)
        elif any(getattr(old, name) != getattr(row, name) for name in fields):
            for name in (*fields, "computed_at"):
                setattr(old, name, getattr(row, name))
            changed.append(old)
    gone = [row.pk for key, row in stored.items() if key not in fresh]
    if created or changed or gone:
        with transaction.atomic():
            if gone:
                EvaluationResult.objects.filter(pk__in=gone).delete()
            if created:
                # Two reports refreshing at once insert the same rows: the second one updates them.
                EvaluationResult.objects.bulk_create(
                    created,
                    batch_size=1000,
                    update_conflicts=True,
                    unique_fields=["rubric_version", "project", "tree", "node", "source"],
                    update_fields=[*fields, "computed_at"],
                )
            if changed:
                EvaluationResult.objects.bulk_update(changed, [*fields, "computed_at"], batch_size=1000)
            audit_record(
                "evaluation.combine",
                target=rubric,
                scope=project.name,
                details={
                    "version": version.number,
                    "created": len(created),
                    "changed": len(changed),
                    "deleted": len(gone),
                },
            )
    units = len({(tree_id, unit) for tree_id, unit, _ in fresh})
    return CombineSummary(units=units, written=len(created) + len(changed), deleted=len(gone))


def _judged_rows(
    project: Project,
    version: RubricVersion,
    spec: RubricSpec,
    by_tree: dict[int, list[tuple[str, Any]]],
    judge_notes: dict[tuple[int, str], list[str]],
) -> dict[tuple[int, str, str], EvaluationResult]:
    """The human and combined rows of every judged unit, by (tree, unit, source)."""
    fresh: dict[tuple[int, str, str], EvaluationResult] = {}
    if not by_tree:
        return fresh
    now = timezone.now()
    trees = ConversationTree.objects.filter(pk__in=list(by_tree))
    tree_ids = dict(trees.values_list("external_id", "pk"))
    for record in tree_records(trees):
        tree_id = tree_ids[record.external_id]
        index = TreeIndex(record)
        for unit, votes in votes_collect(by_tree[tree_id], spec.target).items():
            subject = subject_for(index, spec.target, unit)
            if subject is None:
                continue  # a node that is no longer in the tree
            automatic, auto_notes = automatic_verdicts(spec, subject)
            human: dict[str, bool] = {}
            human_notes: dict[str, str] = {}
            combined: dict[str, bool] = {}
            combined_notes: dict[str, str] = {}
            for item in spec.checks:
                key_votes = votes.get(item.key, {})
                verdict = majority(key_votes)
                human[item.key] = bool(verdict)
                human_notes[item.key] = vote_note(key_votes)
                if verdict is not None:
                    combined[item.key] = verdict
                    combined_notes[item.key] = "judges: " + vote_note(key_votes)
                else:
                    combined[item.key] = automatic[item.key]
                    combined_notes[item.key] = auto_notes.get(item.key, "automatic check")
            remarks = judge_notes.get((tree_id, unit), [])
            kept_votes = {key: votes[key] for key in spec.keys if key in votes}
            for source, verdicts, notes in (
                (HUMAN, human, human_notes),
                (COMBINED, combined, combined_notes),
            ):
                result = evaluate(spec, verdicts, notes)
                if remarks:
                    result = _with_remarks(result, remarks)
                fresh[(tree_id, unit, source)] = _row(
                    version, project, tree_id, unit, source, result, kept_votes, subject.model_name, now
                )
    return fresh


def _payload_notes(payload: Any, target: str) -> Iterable[tuple[str, str]]:
    """(unit, note) pairs of one judge's payload."""
    if not isinstance(payload, dict):
        return []
    if target == "node":
        nodes = payload.get("nodes")
        if not isinstance(nodes, dict):
            return []
        return [
            (str(node), answer["note"])
            for node, answer in nodes.items()
            if isinstance(answer, dict) and isinstance(answer.get("note"), str) and answer["note"].strip()
        ]
    note = payload.get("note")
    if not isinstance(note, str) or not note.strip():
        return []
    if target == "path":
        path = payload.get("path")
        return [(str(path[-1]), note)] if isinstance(path, list) and path else []
    return [("", note)]


def _with_remarks(result: Evaluation, remarks: list[str]) -> Evaluation:
    lines = "\n".join(f"  {remark.strip()}" for remark in remarks)
    return Evaluation(
        details=result.details,
        score=result.score,
        outcome=result.outcome,
        rule=result.rule,
        explanation=f"{result.explanation}\nJudges' notes:\n{lines}",
        notes=result.notes,
    )
