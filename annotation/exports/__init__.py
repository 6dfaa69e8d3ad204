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
from types import ModuleType
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotation.exports import ccpe, ccpe_hf, pairs, potato, sft
from annotation.exports.rows import item_annotations
from annotation.models import Annotation, Project
from annotation.projects import project_config

EXPORTS: dict[str, ModuleType] = {module.NAME: module for module in (potato, pairs, sft, ccpe, ccpe_hf)}
# Which annotations an export reads: submitted only (the default), or every status.
STATUSES = {"submitted": [Annotation.Status.SUBMITTED], "all": None}


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
) -> Iterator[str]:
    """The project's annotations in ``format_name``, one JSON line at a time.

    ``status`` is ``submitted`` (only submitted answers) or ``all`` (drafts
    and skips too); ``user`` keeps one annotator's answers; ``options`` go
    to the format's writer.
    """
    writer = get_export(format_name)
    if status not in STATUSES:
        raise ValueError(f'unknown status "{status}" (expected one of {", ".join(STATUSES)})')
    items = item_annotations(
        project=project,
        statuses=STATUSES[status],
        user=user,
        with_text=writer.NEEDS_TEXT,
        with_records=getattr(writer, "NEEDS_RECORDS", False),
    )
    return writer.write(items, project_config(project), **(options or {}))


__all__ = ["EXPORTS", "STATUSES", "annotations_export", "get_export"]
