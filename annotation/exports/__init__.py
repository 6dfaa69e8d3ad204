"""Annotation exports: one module per format, registered by name.

Each module has ``NAME``, ``UNIT`` (what one line is, for summaries),
``NEEDS_TEXT`` (whether it quotes the messages), ``DESCRIPTION`` and
``write(items, config)``, a generator of JSON lines over
``ItemAnnotations`` that touches no database (a format that writes whole
trees back sets ``NEEDS_RECORDS`` and gets each item's tree as a record, and
takes its own options as keywords). ``annotations_export`` is the
one entry point the command and the admin share: it picks the rows
(``rows.item_annotations``, a constant number of queries per page of trees)
and hands them to the format. Adding a format is adding a module and
listing it below.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.exports import ccpe, ccpe_hf, pairs, potato, sft
from annotation.exports.final_rows import final_annotations
from annotation.exports.rows import item_annotations
from annotation.models import Annotation, Project
from annotation.permissions import DeletedText
from annotation.projects.config import project_config
from trees.audit import audit_when_read

EXPORTS: dict[str, ModuleType] = {module.NAME: module for module in (potato, pairs, sft, ccpe, ccpe_hf)}


@dataclass(frozen=True)
class Selection:
    """Which answers an export reads: by their status, and whether a reviewer must have accepted them."""

    statuses: list[str] | None  # None: every status
    accepted_only: bool
    description: str
    final: bool = False  # the items' final answers (exports.final_rows) instead of annotators'


STATUSES: dict[str, Selection] = {
    "submitted": Selection([Annotation.Status.SUBMITTED], False, "submitted answers (the default)"),
    "accepted": Selection([Annotation.Status.SUBMITTED], True, "only submitted answers a reviewer accepted"),
    "all": Selection(None, False, "all answers: drafts and skips too"),
    "final": Selection(
        None, False, "each item's final (adjudicated) answer, with where each field came from", final=True
    ),
}


# Whether an export holds a corpus's reference answers (``Annotation.Source.REFERENCE``): they are
# what the corpus says, not anyone's work, so an export of the answers leaves them out unless asked.
REFERENCES: dict[str, str] = {
    "exclude": "annotators' answers only (the default)",
    "include": "annotators' answers and the corpus's reference answers",
    "only": "only the corpus's reference answers (the corpus's own spans, written back)",
}


def get_export(name: str) -> ModuleType:
    try:
        return EXPORTS[name]
    except KeyError:
        raise ValueError(f'unknown format "{name}" (expected one of {", ".join(EXPORTS)})') from None


def annotations_export(
    *,
    project: Project,
    format_name: str,
    status: str = "submitted",
    user: AbstractBaseUser | None = None,
    options: dict[str, Any] | None = None,
    include_gold: bool = False,
    reference: str = "exclude",
    reader: AbstractBaseUser | None = None,
) -> Iterator[str]:
    """The project's annotations in ``format_name``, one JSON line at a time.

    ``status`` is ``submitted`` (only submitted answers), ``accepted`` (only
    submitted answers whose annotator's work on the item a reviewer
    accepted), ``all`` (drafts and skips too) or ``final`` (each item's
    adjudicated answer, ``exports.final_rows``; no ``user``); ``user`` keeps one
    annotator's answers; ``options`` go to the format's writer;
    ``include_gold`` keeps answers to gold items and gold or training answers; ``reference`` says
    whether the corpus's reference answers are left out (``exclude``), kept beside the annotators'
    (``include``) or alone (``only``), as ``REFERENCES`` describes. ``reader`` is
    who downloads it (pages, API): deleted messages' text is as ``permissions.DeletedText``
    lets them see it; None for an operator's export (admin, command line), which has it all.
    """
    writer = get_export(format_name)
    if status not in STATUSES:
        raise ValueError(f'unknown status "{status}" (expected one of {", ".join(STATUSES)})')
    if reference not in REFERENCES:
        raise ValueError(f'unknown reference choice "{reference}" (expected one of {", ".join(REFERENCES)})')
    selection = STATUSES[status]
    details = {"format": format_name, "status": status, "options": dict(options or {})}
    if reference != "exclude":
        details["reference"] = reference
    if user is not None:
        details["annotator"] = user.get_username()
    shown = DeletedText(reader, project) if reader is not None else None
    with_text, with_records = writer.NEEDS_TEXT, getattr(writer, "NEEDS_RECORDS", False)
    if selection.final:
        if user is not None:
            raise ValueError("final answers are nobody's in particular: leave out the annotator")
        if reference != "exclude":
            raise ValueError("final answers are the adjudicated ones: the corpus's reference is not one")
        items = final_annotations(
            project=project,
            include_gold=include_gold,
            with_text=with_text,
            with_records=with_records,
            shown=shown,
        )
    else:
        items = item_annotations(
            project=project,
            statuses=selection.statuses,
            accepted_only=selection.accepted_only,
            include_gold=include_gold,
            reference=reference,
            user=user,
            with_text=with_text,
            with_records=with_records,
            shown=shown,
        )
    lines = writer.write(items, project_config(project), **(options or {}))
    return audit_when_read(lines, "annotations.export", target=project, scope=project.name, details=details)


__all__ = ["EXPORTS", "REFERENCES", "STATUSES", "Selection", "annotations_export", "get_export"]
