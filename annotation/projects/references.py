"""The spans a corpus brings with it, made annotations: CCPE's segments as its reference answers.

Trees know nothing of annotations: the CCPE reader keeps each utterance's
segments in its message's metadata (``trees.formats.ccpe.SEGMENTS_KEY``),
which is also what ``export_trees --format ccpe`` writes back. A project
whose span scheme says ``import_spans: ccpe`` turns them into annotations:
every item gets one answer to that scheme held by the account ``ccpe-gold``
(which cannot log in), submitted, ``source=reference``
(``Annotation.Source.REFERENCE``: the one mark every reader goes by), holding
one span per annotation of each segment — label ``annotationType``,
attributes ``{entityType}``. An item without segments gets an empty
reference, so the reference covers the whole corpus and
``export_annotations --reference-only`` writes it all back
(``annotation.exports.ccpe`` keeps the segments' order and grouping from the
metadata).

A reference answer is what the corpus says, not an annotator's judgement: it
is not an assignment (hand-out does not count it, and every item still goes
to the project's annotators), agreement measures annotators against it
rather than counting it as one of them, and exports leave it out unless
asked for it.

References are made when the project is created and when trees are imported
into its dataset later (the ``trees_imported`` receiver); an item that has
its reference keeps it. Everything is read a page of trees at a time, in
one query per page, and written in bulk.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from annotation.models import Annotation, Project, ProjectItem
from annotation.problems import Problems
from annotation.projects.config import ProjectConfig
from annotation.schemes.span import Span, span_key
from trees.formats import ccpe
from trees.models import Message
from trees.shapes import TreeShape

# The account reference answers are held by: an answer needs a user, and this one is nobody.
REFERENCE_USERNAME = "ccpe-gold"
CHUNK_TREES = 500
logger = logging.getLogger(__name__)


def reference_user() -> AbstractBaseUser:
    """The account reference answers are held by; it has no usable password."""
    User = get_user_model()
    user = User.objects.filter(**{User.USERNAME_FIELD: REFERENCE_USERNAME}).first()
    if user is None:
        user = User(**{User.USERNAME_FIELD: REFERENCE_USERNAME})
        user.set_unusable_password()
        user.save()
    return user


def imports_references(config: ProjectConfig) -> bool:
    """Whether a project with ``config`` gets reference answers (a span scheme imports a corpus's spans)."""
    return any(isinstance(scheme, Span) and scheme.import_spans for scheme in config.schemes)


def spans_from_segments(node: str, segments: Any) -> list[dict[str, Any]]:
    """One span per annotation of each of the utterance's CCPE segments."""
    spans = []
    for segment in segments if isinstance(segments, list) else ():
        if not isinstance(segment, dict):
            continue
        for annotation in segment.get("annotations") or ():
            if not isinstance(annotation, dict):
                continue
            spans.append(
                {
                    "node": node,
                    "start": segment.get("startIndex"),
                    "end": segment.get("endIndex"),
                    "text": segment.get("text"),
                    "label": annotation.get("annotationType"),
                    "attributes": {"entityType": annotation.get("entityType")},
                }
            )
    return spans


def imported_spans_sync(*, project: Project, config: ProjectConfig, refresh: Iterable[int] = ()) -> int:
    """Give each item of ``project`` without one its reference answer to every span scheme
    that imports spans; returns how many answers were made.

    ``refresh``: trees whose messages were replaced — their reference answers are
    made again from the new messages.
    """
    if not imports_references(config):
        return 0
    schemes = [scheme for scheme in config.schemes if isinstance(scheme, Span) and scheme.import_spans]
    user = reference_user()
    references = Annotation.objects.filter(project=project).references()
    refresh = list(refresh)
    if refresh:
        references.filter(scheme__in=[scheme.name for scheme in schemes], tree_id__in=refresh).delete()
    made = 0
    for scheme in schemes:
        have = set(references.filter(scheme=scheme.name).values_list("tree_id", flat=True))
        wanted = [
            tree_id
            for tree_id in ProjectItem.objects.filter(project=project)
            .order_by("tree_id")
            .values_list("tree_id", flat=True)
            if tree_id not in have
        ]
        for start in range(0, len(wanted), CHUNK_TREES):
            chunk = wanted[start : start + CHUNK_TREES]
            now = timezone.now()
            answers = [
                Annotation(
                    project=project,
                    tree_id=tree_id,
                    user=user,
                    scheme=scheme.name,
                    payload=_reference_payload(scheme, tree_id, shape, spans),
                    status=Annotation.Status.SUBMITTED,
                    source=Annotation.Source.REFERENCE,
                    created_at=now,
                    updated_at=now,
                    submitted_at=now,
                )
                for tree_id, shape, spans in _imported(chunk)
            ]
            Annotation.objects.bulk_create(answers, batch_size=1000, ignore_conflicts=True)
            made += len(answers)
    return made


def _imported(tree_ids: list[int]) -> Iterator[tuple[int, TreeShape, list[dict[str, Any]]]]:
    """Each tree's shape (with its texts) and the spans its messages were imported with: one query."""
    rows: dict[int, list[tuple[str, str | None, int, str, str]]] = {tree_id: [] for tree_id in tree_ids}
    spans: dict[int, list[dict[str, Any]]] = {tree_id: [] for tree_id in tree_ids}
    external: dict[int, str] = {}
    pending = []
    for tree_id, pk, parent_id, external_id, position, role, text, metadata in (
        Message.objects.filter(tree_id__in=tree_ids)
        .order_by()
        .values_list("tree_id", "pk", "parent_id", "external_id", "position", "role", "text", "metadata")
    ):
        external[pk] = external_id
        pending.append((tree_id, parent_id, external_id, position, role, text))
        if metadata and ccpe.SEGMENTS_KEY in metadata:
            spans[tree_id].extend(spans_from_segments(external_id, metadata[ccpe.SEGMENTS_KEY]))
    for tree_id, parent_id, external_id, position, role, text in pending:
        parent = external.get(parent_id) if parent_id is not None else None
        rows[tree_id].append((external_id, parent, position, role, text))
    for tree_id in tree_ids:
        yield tree_id, TreeShape.from_rows(rows[tree_id]), spans[tree_id]


def _reference_payload(
    scheme: Span, tree_id: int, shape: TreeShape, spans: list[dict[str, Any]]
) -> dict[str, Any]:
    """The spans as the scheme keeps them; spans it refuses are left out and logged.

    The CCPE reader has checked the segments and the scheme's config admits
    CCPE's labels, so nothing is refused unless the metadata came from
    elsewhere (another format's file, edited by hand). The same span twice
    (a segment repeated with the same annotation) is kept once.
    """
    unique = list({span_key(span): span for span in spans if _comparable(span)}.values())
    payload = scheme.validate({"spans": unique}, scheme.name, Problems(), shape)
    if payload is not None:
        return payload
    kept = [span for span in unique if scheme.validate({"spans": [span]}, scheme.name, Problems(), shape)]
    logger.warning(
        "tree %s: %d of the imported spans do not fit scheme %s and were left out",
        tree_id,
        len(unique) - len(kept),
        scheme.name,
    )
    return scheme.validate({"spans": kept}, scheme.name, Problems(), shape) or {"spans": []}


def _comparable(span: dict[str, Any]) -> bool:
    """Whether ``span_key`` can be taken (hashable parts), before the scheme says whether it fits."""
    return all(isinstance(span[key], str | int) for key in ("node", "start", "end", "label")) and all(
        isinstance(value, str) for value in span["attributes"].values()
    )
