"""Reviews and rankings as ``annotation.Annotation`` rows, so agreement and exports see them.

The workflow's own record of each act is its ``Task`` (``result``); here
each person's acts in one tree are gathered into one annotation per scheme,
rewritten in the same transaction as the task:

* ``label_prompt`` and ``label_reply`` — the labels given, by message id,
  in the shape of the tree-annotation schemes' node answers::

      {"node_annotations": {"<message id>": {"spam": 0.0, "lang_mismatch": 0.0, "quality": 0.75}}}

* ``rank_replies`` — the order given to a parent's replies, best first,
  and the order they were shown in::

      {"rankings": {"<parent id>": {"order": ["<id>", ...], "shown_order": ["<id>", ...]}}}

  (with ``"not_rankable": true`` when the ranker said none was acceptable).

One row per (project, tree, person, scheme) is what ``Annotation`` allows;
the caller holds the tree's lock, so two acts of one person in one tree
never rewrite the row at once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from annotation.models import Annotation, Project
from trees.formats.jsonstream import decode_stored, encode

LABEL_PROMPT = "label_prompt"
LABEL_REPLY = "label_reply"
RANK_REPLIES = "rank_replies"
SCHEMES = (LABEL_PROMPT, LABEL_REPLY, RANK_REPLIES)


def _record(
    project: Project,
    tree_id: int,
    user: AbstractBaseUser,
    scheme: str,
    section: str,
    key: str,
    value: Any,
    now: datetime,
) -> None:
    # Plain SQL: this runs with every review and ranking, and the ORM's model
    # machinery costs several times the two statements it sends.
    table = connection.ops.quote_name(Annotation._meta.db_table)
    lock = " " + connection.ops.for_update_sql() if connection.features.has_select_for_update else ""
    stamp = connection.ops.adapt_datetimefield_value(now)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, payload FROM {table} WHERE project_id = %s AND tree_id = %s AND user_id = %s"
            f" AND scheme = %s{lock}",
            [project.pk, tree_id, user.pk, scheme],
        )
        found = cursor.fetchone()
        if found is None:
            payload: dict[str, Any] = {section: {key: value}}
            cursor.execute(
                f"INSERT INTO {table} (project_id, tree_id, user_id, scheme, payload, status, version,"
                " source, created_at, updated_at, submitted_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s)",
                [
                    project.pk,
                    tree_id,
                    user.pk,
                    scheme,
                    encode(payload),
                    Annotation.Status.SUBMITTED,
                    Annotation.Source.HUMAN,
                    stamp,
                    stamp,
                    stamp,
                ],
            )
            return
        pk, payload = found
        payload = decode_stored(payload) if isinstance(payload, str | bytes) else payload
        payload = {**payload, section: {**payload.get(section, {}), key: value}}
        cursor.execute(
            f"UPDATE {table} SET payload = %s, version = version + 1, updated_at = %s, submitted_at = %s"
            " WHERE id = %s",
            [encode(payload), stamp, stamp, pk],
        )


def review_record(
    *,
    project: Project,
    tree_id: int,
    user: AbstractBaseUser,
    message_id: str,
    labels: dict[str, float],
    root: bool,
    now: datetime,
) -> None:
    scheme = LABEL_PROMPT if root else LABEL_REPLY
    _record(project, tree_id, user, scheme, "node_annotations", message_id, labels, now)


def ranking_record(
    *,
    project: Project,
    tree_id: int,
    user: AbstractBaseUser,
    parent_id: str,
    order: list[str],
    shown_order: list[str],
    not_rankable: bool,
    now: datetime,
) -> None:
    value: dict[str, Any] = {"order": order, "shown_order": shown_order}
    if not_rankable:
        value["not_rankable"] = True
    _record(project, tree_id, user, RANK_REPLIES, "rankings", parent_id, value, now)
