"""Agreement in a project: its judgements read per scheme, measured, and kept until they change.

What counts: submitted annotations, whoever or whatever wrote them (pages,
the API, imports under their annotators' names, the collection workflow's
reviews and rankings), except work on gold items and gold or training
assignments — those measure annotators against known answers, not against
each other. A corpus's reference answers (``Annotation.Source.REFERENCE``,
``annotation.projects.references``) are not an annotator either: they are
left out of the agreement between annotators, and each annotator is measured
against them apart (``evaluation.agreement.references``), under the scheme's
``reference`` key (null when the scheme has no reference answers). A model judge
(an account ``judge:<name>``, or any answer stored with ``source = model``) is not a
person either: the agreement between annotators counts people only, and each judge is
measured against them per field (``evaluation.agreement.judges``), under the field's
``judges`` key (null when no judge answered it); ``judges`` lists the judge accounts.

Reading is one query for the gold and training work left out, then one per
scheme (``values_list`` of item id, annotator and payload);
``evaluation.agreement.fields`` turns the rows into reliability data and
``evaluation.agreement.figures`` measures them. The figures are
kept in an ``AgreementSnapshot`` with the ``agreement_stamp`` of the
judgements they came from; ``agreement_current`` compares stamps (one
statement) and recomputes only when they differ, so every process and host
agrees on when the figures are stale without any invalidation message.

The figures (``agreement_compute``), as the page, the API and
``manage.py agreement --json`` give them::

    {"project": "...", "computed_at": "...", "seconds": 0.8, "annotations": 50000,
     "annotators": ["alice", ...], "references": [], "judges": ["judge:pairs"],
     "schemes": [{"scheme": "quality", "type": "likert", "annotations": 50000, "judge_annotations": 0,
                  "note": "", "reference": null,
                  "fields": [{"field": "rating", "unit": "item", "values": "ordinal",
                              "n_items": 10000, "n_units": 10000, "n_annotators": 5,
                              "measures": [{"measure": "Krippendorff's alpha (ordinal)", "value": 0.61,
                                            "undefined_reason": null, "shown": "0.610", "n_units": ...}],
                              "pairs": [{"a": "alice", "b": "bob", "measure": "Cohen's kappa ...",
                                         "value": 0.58, "undefined_reason": null, "n_units": 10000}],
                              "judges": null}]}]}
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Container
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from django.db.models import Count, Max, QuerySet, Sum, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.collection.annotations import SCHEMES as WORKFLOW_SCHEMES
from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.projects.config import project_config
from evaluation.agreement.fields import Row, SchemeFields, scheme_fields, workflow_fields
from evaluation.agreement.figures import field_figures
from evaluation.agreement.judges import judges_field_figures
from evaluation.agreement.references import reference_figures
from evaluation.llm.judges import ACCOUNT_PREFIX
from evaluation.models import AgreementSnapshot
from trees.formats.jsonstream import decode_stored
from trees.store import gc_paused

REFERENCE = Annotation.Source.REFERENCE
MODEL = Annotation.Source.MODEL
NO_PEOPLE = "no submitted answers from people yet: the judges' answers have no one to be measured against"

# Part of every stamp: figures computed by an older version of this code are recomputed.
# 2: reference answers are measured apart, under each scheme's "reference".
# 3: model judges are measured apart, under each field's "judges".
FIGURES_VERSION = 3


def project_judgements(project: Project) -> QuerySet[Annotation]:
    """The project's submitted annotations, except those on gold items; reference answers
    included (``judgement_rows`` sets them apart).

    Gold items are a short list (``NOT IN`` a subquery the database hashes
    once); gold and training work on other items is left out by
    ``checked_work`` as the rows are read. Correlated ``NOT EXISTS`` checks
    would say the same, but PostgreSQL plans them as a loop over every
    assignment of each annotator when its statistics lag behind a large
    import, which turns a second into minutes.
    """
    gold_items = ProjectItem.objects.filter(project=project, is_gold=True).values("tree_id")
    return Annotation.objects.filter(project=project, status=Annotation.Status.SUBMITTED).exclude(
        tree_id__in=gold_items
    )


def checked_work(project: Project) -> set[tuple[int, int]]:
    """``(tree id, user id)`` of the project's gold and training assignments (one query)."""
    checked = Assignment.objects.filter(project=project).exclude(kind=Assignment.Kind.WORK)
    return set(checked.values_list("tree_id", "user_id"))


def agreement_stamp(project: Project) -> str:
    """A fingerprint of the judgements agreement is computed from, in one statement.

    Every write to an annotation bumps its version, new rows add to the count
    and the sum of ids, and an annotation leaving the set (reopened, on an
    item made gold) takes its id and version out of the sums: any change of
    what would be measured changes the stamp. (Whether an assignment is gold
    or training work is fixed when it is handed out, before its answers are
    submitted.) The config's hash covers the schemes.
    """
    found = project_judgements(project).aggregate(
        count=Count("pk"), ids=Sum("pk"), versions=Sum("version"), last=Max("updated_at")
    )
    last = found["last"].isoformat() if found["last"] else "-"
    config = hashlib.sha256(project.config_yaml.encode()).hexdigest()[:16]
    return f"v{FIGURES_VERSION}:{found['count']}:{found['ids'] or 0}:{found['versions'] or 0}:{last}:{config}"


@dataclass(frozen=True)
class SchemeToMeasure:
    name: str
    type: str
    scheme: Any = None  # the parsed scheme; None for the collection workflow's records


def agreement_schemes(project: Project) -> list[SchemeToMeasure]:
    """The schemes of the project's config, then (in collect mode) the workflow's reviews and rankings."""
    schemes = [SchemeToMeasure(s.name, s.annotation_type, s) for s in project_config(project).schemes]
    if project.mode == Project.Mode.COLLECT:
        schemes += [SchemeToMeasure(name, "collection workflow") for name in WORKFLOW_SCHEMES]
    return schemes


def agreement_compute(project: Project) -> dict[str, Any]:
    """The project's agreement figures, from its judgements as they are now (one query per scheme)."""
    started = time.perf_counter()
    judgements = project_judgements(project)
    skipped = checked_work(project)
    annotators: set[str] = set()
    references: set[str] = set()
    judges: set[str] = set()
    # Tens of thousands of small dicts and none in a cycle: the cycle collector would only rescan them.
    with gc_paused():
        schemes = [
            _scheme_figures(
                scheme,
                judgement_rows(judgements.filter(scheme=scheme.name), skipped),
                annotators,
                references,
                judges,
            )
            for scheme in agreement_schemes(project)
        ]
    return {
        "project": project.name,
        "computed_at": timezone.now().isoformat(),
        "seconds": round(time.perf_counter() - started, 3),
        "annotations": sum(scheme["annotations"] for scheme in schemes),
        "annotators": sorted(annotators),
        "references": sorted(references),
        "judges": sorted(judges),
        "schemes": schemes,
    }


def _scheme_figures(
    scheme: SchemeToMeasure,
    rows: JudgementRows,
    annotators: set[str],
    references: set[str],
    judges: set[str],
) -> dict[str, Any]:
    """One scheme's figures; its rows and fields are freed on return, before the collector is back on."""
    work = rows.annotators
    annotators.update(username for _, username, _ in work)
    judges.update(username for _, username, _ in rows.judges)
    figures: dict[str, Any] = {
        "scheme": scheme.name,
        "type": scheme.type,
        "annotations": len(work),
        "judge_annotations": len(rows.judges),
    }
    figures["reference"] = _reference(scheme, rows, references) if rows.references else None
    if not work:
        note = NO_PEOPLE if rows.judges else "no submitted answers yet"
        return figures | {"note": note, "fields": []}
    found = _fields(scheme, work)
    fields = [field_figures(field) | {"judges": None} for field in found.fields]
    if rows.judges:
        _judges(scheme, rows, fields)
    return figures | {"note": found.note, "fields": fields}


def _judges(scheme: SchemeToMeasure, rows: JudgementRows, fields: list[dict[str, Any]]) -> None:
    """Each judge against the people, per field, read as one set of fields with them."""
    names = {username for _, username, _ in rows.judges}
    joined = {field.name: field for field in _fields(scheme, rows.annotators + rows.judges).fields}
    for figures in fields:
        field = joined.get(figures["field"])
        if field is not None:
            figures["judges"] = judges_field_figures(field, names, figures["pairs"])


def _fields(scheme: SchemeToMeasure, rows: list[Row]) -> SchemeFields:
    if scheme.scheme is not None:
        return scheme_fields(scheme.scheme, rows)
    return workflow_fields(scheme.name, rows)


def _reference(scheme: SchemeToMeasure, rows: JudgementRows, references: set[str]) -> dict[str, Any]:
    """Each annotator against the scheme's reference answers, read as one set of fields with them."""
    names = {username for _, username, _ in rows.references}
    references.update(names)
    found = _fields(scheme, rows.annotators + rows.references)
    return reference_figures(found.fields, names, len(rows.references))


@dataclass(frozen=True)
class JudgementRows:
    """A scheme's judgements as ``(item id, annotator, payload)`` rows: people's work, references,
    and model judges'."""

    annotators: list[Row]
    references: list[Row]
    judges: list[Row] = dataclass_field(default_factory=list)


def judgement_rows(
    judgements: QuerySet[Annotation], skipped: Container[tuple[int, int]] = ()
) -> JudgementRows:
    """``(item id, annotator, payload)`` per annotation, in one query, leaving out ``skipped``
    ``(tree id, user id)`` pairs, with a corpus's reference answers and model judges' answers
    (``source = model``, or a ``judge:`` account) set apart from the annotators'.

    The payloads come as text and are decoded in one call: decoding them one
    by one, as the JSON field does, costs twice as much over 50,000 answers.
    """
    found = [
        (item, user, text, _kind(user, source))
        for tree_id, user_id, item, user, text, source in judgements.annotate(
            text=Cast("payload", TextField())
        ).values_list("tree_id", "user_id", "tree__external_id", "user__username", "text", "source")
        if (tree_id, user_id) not in skipped
    ]
    rows = JudgementRows([], [], [])
    if not found:
        return rows
    payloads = decode_stored("[" + ",".join(text for _, _, text, _ in found) + "]")
    kinds = {PERSON: rows.annotators, REFERENCE: rows.references, MODEL: rows.judges}
    for (item, user, _, kind), payload in zip(found, payloads, strict=True):
        kinds[kind].append((item, user, payload))
    return rows


PERSON = "person"


def _kind(username: str, source: str) -> str:
    """Whose answer a row is: a reference's, a model judge's, or a person's."""
    if source == REFERENCE:
        return REFERENCE
    if source == MODEL or username.startswith(ACCOUNT_PREFIX):
        return MODEL
    return PERSON


@dataclass(frozen=True)
class CurrentAgreement:
    figures: dict[str, Any]
    recomputed: bool  # False when read from the snapshot


def agreement_current(project: Project) -> CurrentAgreement:
    """The figures for the judgements as they are now: the snapshot's, or recomputed and kept.

    Two statements when the snapshot is current (the stamp and the
    snapshot); otherwise ``agreement_compute``'s reads and one write besides.
    """
    stamp = agreement_stamp(project)
    snapshot = AgreementSnapshot.objects.filter(project=project, stamp=stamp).values_list(
        "figures", flat=True
    )
    kept = snapshot.first()
    if kept is not None:
        return CurrentAgreement(kept, recomputed=False)
    figures = agreement_compute(project)
    _keep(project, stamp, figures)
    return CurrentAgreement(figures, recomputed=True)


def _keep(project: Project, stamp: str, figures: dict[str, Any]) -> None:
    """Replace the project's snapshot in one statement (an upsert: two processes may keep theirs at once)."""
    snapshot = AgreementSnapshot(
        project=project, stamp=stamp, figures=figures, computed_at=timezone.now(), seconds=figures["seconds"]
    )
    AgreementSnapshot.objects.bulk_create(
        [snapshot],
        update_conflicts=True,
        unique_fields=["project"],
        update_fields=["stamp", "figures", "computed_at", "seconds"],
    )


def agreement_refresh(project: Project) -> CurrentAgreement:
    """Recompute and keep the figures whatever the snapshot says (the admin's action)."""
    stamp = agreement_stamp(project)
    figures = agreement_compute(project)
    _keep(project, stamp, figures)
    return CurrentAgreement(figures, recomputed=True)
