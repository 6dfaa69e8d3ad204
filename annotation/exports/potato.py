"""Potato-style JSONL: one record per item and annotator.

::

    {"id": "conv_001", "user": "alice", "status": "submitted",
     "annotations": {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}},
                                          "selected_path": ["root", "resp_a", "user_2"]}},
     "updated_at": "2025-01-31T09:30:00.000000Z"}

``annotations`` holds each scheme's payload exactly as stored (the shape
Potato documents for its output), in the order the config lists the schemes.
``status`` is ``submitted``, ``draft`` or ``skipped`` (``final`` for an item's
adjudicated answer, whose record also has ``version`` and ``provenance`` and
whose ``user`` is who adjudicated it); ``updated_at`` is the
latest change to any of the answers, in UTC. ``import_annotations`` reads
these records back, so an export imported into another project over the same
dataset exports the same records again.

A project with suggestions (its config's ``suggestions:``) adds ``suggestions``
to each annotator's record: for each answer, whether a judge's suggestion was
visible when it was made (``none``, ``after``, ``after_seen``, ``before``,
``before_taken``: docs/formats.md). Records of other projects are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from annotation.exports.rows import ItemAnnotations, suggestion_written
from annotation.projects.config import ProjectConfig
from trees.formats.jsonstream import encode
from trees.formats.records import JSONL

NAME = "potato"
FILE = JSONL
UNIT = "record"
NEEDS_TEXT = False
DESCRIPTION = "one record per item and annotator: {id, user, status, annotations, updated_at}"


def timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with microseconds, so that a re-import keeps the exact time."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record(
    item: ItemAnnotations, scheme_order: dict[str, int], *, suggestions: bool = False
) -> dict[str, Any]:
    """The item's record; ``suggestions`` (a project with them): each answer's suggestion mark too."""
    # Schemes no longer in the config (it was edited) come last, by name.
    names = sorted(item.annotations, key=lambda name: (scheme_order.get(name, len(scheme_order)), name))
    written = {
        "id": item.tree,
        "user": item.user,
        "status": item.status,
        "annotations": {name: item.annotations[name] for name in names},
        "updated_at": timestamp(item.updated_at),
    }
    if item.provenance is not None:
        # A final answer: where each field came from (annotation.review.merging names them).
        written |= {"version": item.version, "provenance": item.provenance}
    elif suggestions:
        # Whether a judge's suggestion was visible when each answer was made (docs/formats.md).
        written["suggestions"] = {name: suggestion_written(item, name) for name in names}
    return written


def write(items: Iterable[ItemAnnotations], config: ProjectConfig) -> Iterator[str]:
    """One JSON line per item and annotator."""
    scheme_order = {scheme.name: index for index, scheme in enumerate(config.schemes)}
    for item in items:
        yield encode(record(item, scheme_order, suggestions=config.suggestions.enabled)) + "\n"
