"""The project-wide counts that progress shows (items, complete items), kept briefly per process.

Counting them is a pass over every item of the project (about a millisecond
per 5,000 items on PostgreSQL), and the annotator's loop shows them with every
item it hands out. Each process keeps a project's counts for
``settings.PROGRESS_COUNTS_SECONDS``, so another worker's submissions show up
within that time and one's own at once: a submission counts itself into the
kept counts (``project_counts_submitted``), other changes forget them
(``project_counts_forget``). 0 turns the keeping off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from django.conf import settings

from annotation.models import AnnotatorProgress, Project, ProjectItem
from trees import sql


@dataclass(frozen=True)
class ItemCounts:
    items: int  # the project's work: its items, gold ones aside
    complete: int  # of those, the ones with their full overlap of submissions
    handed: int  # every item that may be handed out, gold ones too


_kept: dict[tuple[int, int], tuple[float, ItemCounts]] = {}


def project_item_counts(project: Project, overlap: int) -> ItemCounts:
    """The project's item counts against ``overlap``: one statement, or none while kept."""
    key = (project.pk, overlap)
    now = time.monotonic()
    kept = _kept.get(key)
    if kept is not None and kept[0] > now:
        return kept[1]
    # Gold items are not the project's work (annotation.quality.gold), but are handed out.
    row = sql.fetch_one(
        "SELECT COUNT(*) FILTER (WHERE NOT is_gold), "
        "COUNT(*) FILTER (WHERE NOT is_gold AND submitted_count >= %s), COUNT(*) "
        f"FROM {sql.table(ProjectItem)} WHERE project_id = %s",
        [overlap, project.pk],
    )
    counts = ItemCounts(*row)
    seconds = settings.PROGRESS_COUNTS_SECONDS
    if seconds > 0:
        _kept[key] = (now + seconds, counts)
    return counts


def project_counts_submitted(project_id: int, submitted_count: int) -> None:
    """An item of the project now has ``submitted_count`` submissions, one more than before:
    it became complete for a kept overlap it just reached. Keeps the annotator's loop from
    counting the whole project again after each of its own submissions."""
    for key, (until, kept) in list(_kept.items()):
        if key == (project_id, submitted_count):
            _kept[key] = (until, replace(kept, complete=kept.complete + 1))


def project_counts_forget(project_id: int) -> None:
    """Count the project's items afresh next time (this process changed them)."""
    for key in [key for key in _kept if key[0] == project_id]:
        _kept.pop(key, None)


def annotator_submitted_change(project_id: int, user_id: int, change: int) -> None:
    """Add ``change`` to the annotator's kept count of submitted items (``AnnotatorProgress``),
    making their row when it is their first. A closing write (``trees.sql.together``): one
    statement with the transaction's others on PostgreSQL."""
    if change:
        table = sql.table(AnnotatorProgress)
        sql.write(
            f"INSERT INTO {table} (project_id, user_id, submitted) VALUES (%s, %s, %s) "
            "ON CONFLICT (project_id, user_id) "
            f"DO UPDATE SET submitted = {table}.submitted + excluded.submitted",
            [project_id, user_id, change],
        )
