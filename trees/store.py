"""Bulk writes and reads of whole trees.

The ORM's ``bulk_create`` spends most of its time preparing each value of
each object; an import of 120,000 messages needs the database's own bulk
paths instead: ``COPY`` on PostgreSQL, ``executemany`` on SQLite. Message ids
are allocated up front so that a child can point at its parent in the same
batch, whatever the depth.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection
from django.db.models import Model, QuerySet
from django.utils import timezone

from trees import sql
from trees.formats.jsonstream import decode_stored, encode
from trees.formats.records import MessageRecord, TreeRecord
from trees.markdown import RENDERER_VERSION, stored_html
from trees.models import ConversationTree, Dataset, Message

TREE_COLUMNS = ("id", "dataset_id", "external_id", "state", "metadata", "created_at", "updated_at")
MESSAGE_COLUMNS = (
    "id",
    "tree_id",
    "parent_id",
    "external_id",
    "role",
    "text",
    "html",
    "html_version",
    "lang",
    "depth",
    "position",
    "author_id",
    "synthetic",
    "model_name",
    "metadata",
    "review_count",
    "review_result",
    "rank",
    "deleted",
    "created_at",
)
_READ_COLUMNS = (
    "id",
    "tree_id",
    "parent_id",
    "external_id",
    "role",
    "text",
    "lang",
    "depth",
    "position",
    "synthetic",
    "model_name",
    "metadata",
    "review_count",
    "review_result",
    "rank",
    "deleted",
)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cycle collector during bulk work.

    An import allocates millions of small objects, none in reference cycles;
    the collector would otherwise rescan them again and again (about a
    tenth of the import's time). Reference counting still frees everything.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def allocate_ids(model: type[Model], count: int) -> list[int]:
    """Reserve ``count`` primary keys of ``model``. Must run inside a transaction.

    PostgreSQL hands them out from the table's sequence. On SQLite the
    transaction already holds the write lock (``transaction_mode=IMMEDIATE``),
    so the ids above the current maximum are ours until it commits.
    """
    if count == 0:
        return []
    assert connection.in_atomic_block, "allocate_ids needs a transaction"
    table = model._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                [table, count],
            )
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = %s), 0),"
            " COALESCE((SELECT MAX(id) FROM " + connection.ops.quote_name(table) + "), 0))",
            [table],
        )
        start = cursor.fetchone()[0] + 1
        return list(range(start, start + count))


def insert_rows(model: type[Model], columns: Sequence[str], rows: list[tuple]) -> None:
    """Insert prepared rows with the database's bulk path (COPY or executemany)."""
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(column) for column in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The raw cursor's errors are psycopg's own: have Django translate them.
            with (
                connection.wrap_database_errors,
                cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
        else:
            placeholders = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({placeholders})", rows)


def _now_for_database() -> Any:
    return Message._meta.get_field("created_at").get_db_prep_value(timezone.now(), connection)


def _message_rows(trees: Sequence[tuple[int, TreeRecord]], author_id: int | None) -> list[tuple]:
    ids = allocate_ids(Message, sum(len(record.messages) for _, record in trees))
    created_at = _now_for_database()
    dumps = encode
    render = stored_html
    rows = []
    append = rows.append
    next_id = 0
    for tree_id, record in trees:
        base = next_id
        for message in record.messages:
            parent = message.parent_index
            append(
                (
                    ids[next_id],
                    tree_id,
                    ids[base + parent] if parent >= 0 else None,
                    message.external_id,
                    message.role,
                    message.text,
                    render(message.text),
                    RENDERER_VERSION,
                    message.lang,
                    message.depth,
                    message.position,
                    author_id,
                    message.synthetic,
                    message.model_name,
                    dumps(message.metadata),
                    message.review_count,
                    message.review_result,
                    message.rank,
                    message.deleted,
                    created_at,
                )
            )
            next_id += 1
    return rows


def trees_store(
    dataset: Dataset,
    records: Sequence[TreeRecord],
    *,
    existing: dict[str, int] | None = None,
    author_id: int | None = None,
) -> tuple[int, int]:
    """Write ``records`` into ``dataset``; returns (trees created, messages written).

    ``existing`` maps the external ids of trees to replace to their database
    ids: those keep their row (and whatever refers to it) and get new messages.
    """
    existing = existing or {}
    default_state = ConversationTree._meta.get_field("state").default
    new = [record for record in records if record.external_id not in existing]
    replaced = [record for record in records if record.external_id in existing]
    now = _now_for_database()
    tree_ids = allocate_ids(ConversationTree, len(new))
    insert_rows(
        ConversationTree,
        TREE_COLUMNS,
        [
            (
                tree_id,
                dataset.pk,
                record.external_id,
                record.state or default_state,
                encode(record.metadata),
                now,
                now,
            )
            for tree_id, record in zip(tree_ids, new, strict=True)
        ],
    )
    pairs = list(zip(tree_ids, new, strict=True))
    if replaced:
        replaced_ids = [existing[record.external_id] for record in replaced]
        Message.objects.filter(tree_id__in=replaced_ids).delete()
        trees = {tree.pk: tree for tree in ConversationTree.objects.filter(pk__in=replaced_ids)}
        for record in replaced:
            tree = trees[existing[record.external_id]]
            tree.state = record.state or default_state
            tree.metadata = record.metadata
            pairs.append((tree.pk, record))
        ConversationTree.objects.bulk_update(trees.values(), ["state", "metadata", "updated_at"])
    rows = _message_rows(pairs, author_id)
    insert_rows(Message, MESSAGE_COLUMNS, rows)
    return len(new), len(rows)


def existing_tree_ids(dataset: Dataset, external_ids: Iterable[str]) -> dict[str, int]:
    """The database ids of the trees of ``dataset`` among ``external_ids`` (an import's batch).

    On PostgreSQL one probe of the (dataset, external_id) unique index per id
    (``sql.each_key``): the ORM's ``external_id IN (...)`` was planned from the
    table's statistics, and while a large import fills a new dataset (in one transaction, so no
    ANALYZE sees it) PostgreSQL read the dataset's trees whole for every batch of 1,000:
    importing 100,000 small trees took minutes instead of seconds (tests/trees/test_store_plans.py,
    and the figures in the commit).
    """
    return dict(
        sql.each_key(
            ConversationTree,
            {"external_id": list(external_ids)},
            {"dataset_id": dataset.pk},
            select=("external_id", "id"),
            probe=("dataset_id", "external_id"),
        )
    )


def _records_for(trees: Sequence[tuple[int, str, str, Any]]) -> list[TreeRecord]:
    """The trees with their messages, in one query whatever their size.

    Rows are read with plain SQL: the ORM's per-row converters cost more than
    the query itself on large exports.
    """
    by_id = {
        pk: TreeRecord(external_id=external_id, state=state, metadata=metadata)
        for pk, external_id, state, metadata in trees
    }
    if not by_id:
        return []
    table = connection.ops.quote_name(Message._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(column) for column in _READ_COLUMNS)
    placeholders = ", ".join(["%s"] * len(by_id))
    loads = decode_stored
    external: dict[int, str] = {}
    pending: list[tuple[MessageRecord, int]] = []
    with connection.cursor() as cursor:
        cursor.execute(
            # No ORDER BY: sorting would copy every row's text; siblings are
            # ordered by position when the tree is nested.
            f"SELECT {columns} FROM {table} WHERE tree_id IN ({placeholders})",
            list(by_id),
        )
        for (
            pk,
            tree_id,
            parent_id,
            external_id,
            role,
            text,
            lang,
            depth,
            position,
            synthetic,
            model_name,
            metadata,
            review_count,
            review_result,
            rank,
            deleted,
        ) in cursor.fetchall():
            external[pk] = external_id
            message = MessageRecord(
                external_id,
                None,
                role,
                text,
                lang,
                bool(synthetic),
                model_name,
                review_count,
                None if review_result is None else bool(review_result),
                rank,
                bool(deleted),
                {} if metadata == "{}" else loads(metadata) if isinstance(metadata, str) else metadata,
                depth,
                position,
            )
            by_id[tree_id].messages.append(message)
            if parent_id is not None:
                pending.append((message, parent_id))
    for message, parent_id in pending:
        message.parent_id = external[parent_id]
    return list(by_id.values())


def tree_records(trees: QuerySet[ConversationTree], *, chunk_size: int = 500) -> Iterator[TreeRecord]:
    """Stream ``trees`` in id order as records: two queries per ``chunk_size`` trees.

    Loading one tree, whatever its size, is two queries. Pages by id rather
    than holding a cursor open, so a slow reader of a streamed export keeps
    no transaction or server-side cursor alive.
    """
    last = 0
    columns = ("pk", "external_id", "state", "metadata")
    while True:
        chunk = list(trees.filter(pk__gt=last).order_by("pk").values_list(*columns)[:chunk_size])
        if not chunk:
            return
        with gc_paused():
            records = _records_for(chunk)
        yield from records
        if len(chunk) < chunk_size:
            return  # the last page: asking for another would cost a query
        last = chunk[-1][0]


def messages_html_refresh(*, batch_size: int = 2000) -> int:
    """Render and keep the HTML of up to ``batch_size`` messages whose kept HTML another renderer
    version wrote (``trees.markdown.RENDERER_VERSION``); returns how many. Two round trips: their
    text, then an UPDATE per row, sent together."""
    table = connection.ops.quote_name(Message._meta.db_table)
    batch = list(
        Message.objects.exclude(html_version=RENDERER_VERSION)
        .order_by("pk")
        .values_list("pk", "text")[:batch_size]
    )
    if batch:
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {table} SET html = %s, html_version = %s WHERE id = %s",
                [(stored_html(text), RENDERER_VERSION, pk) for pk, text in batch],
            )
    return len(batch)
