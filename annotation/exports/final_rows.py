"""What exports of final answers read: each item's adjudicated answer, with where each field came from.

The final-answer counterpart of ``rows.item_annotations``, in the same
``ItemAnnotations`` shape so that every format writes finals as it writes an
annotator's answers: ``user`` is who adjudicated (``auto:majority`` for the
automatic rule), ``status`` is ``final``, and ``provenance`` and ``version``
are set. Pages of ``chunk_size`` items, each in one query (two with the texts,
three with the trees as records), keyed by tree id.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Exists, OuterRef

from annotation.exports.rows import CHUNK_TREES, ItemAnnotations, tree_records_by_id, tree_texts
from annotation.models import FinalAnswer, Project, ProjectItem
from annotation.permissions import DeletedText

FINAL = "final"
AUTOMATIC = "auto:majority"


def final_annotations(
    *,
    project: Project,
    include_gold: bool = False,
    with_text: bool = False,
    with_records: bool = False,
    shown: DeletedText | None = None,
    chunk_size: int = CHUNK_TREES,
) -> Iterator[ItemAnnotations]:
    """The project's final answers in tree order, one ``ItemAnnotations`` per item; gold items
    left out unless ``include_gold``. Deleted messages' text as ``shown`` lets the reader see it."""
    finals = FinalAnswer.objects.filter(project=project)
    if not include_gold:
        gold_item = ProjectItem.objects.filter(project=project, tree_id=OuterRef("tree_id"), is_gold=True)
        finals = finals.exclude(Exists(gold_item))
    last = 0
    while True:
        rows = list(
            finals.filter(tree_id__gt=last)
            .order_by("tree_id")
            .values_list(
                "tree_id",
                "tree__external_id",
                "decided_by__username",
                "answers",
                "provenance",
                "version",
                "updated_at",
            )[:chunk_size]
        )
        if not rows:
            return
        tree_ids = [row[0] for row in rows]
        texts = tree_texts(tree_ids, shown) if with_text else {}
        records = tree_records_by_id(tree_ids) if with_records else {}
        if shown is not None:
            records = {tree_id: shown.record(tree_id, record) for tree_id, record in records.items()}
        for tree_id, external_id, username, answers, provenance, version, updated_at in rows:
            yield ItemAnnotations(
                external_id,
                username or AUTOMATIC,
                FINAL,
                updated_at,
                dict(answers),
                texts.get(tree_id),
                records.get(tree_id),
                provenance=dict(provenance),
                version=version,
            )
        if len(rows) < chunk_size:
            return
        last = tree_ids[-1]
