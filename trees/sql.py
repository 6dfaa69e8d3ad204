"""Hand-written SQL for the few hot paths, with the ORM's own conversions of values.

Building a query with the ORM costs 0.6 to 1.5 ms of CPU here, several times what
the database spends running it; the annotator's loop (lease, read, submit) and
the API's per-request checks run a dozen statements per request, so they are
written out once instead (``annotation.work.assignment``, ``annotation.work.submissions``,
``annotation.api.tokens``). Everything else uses the ORM.

Values cross through the fields, both ways: parameters through
``get_db_prep_value`` (JSON, datetimes on SQLite), rows through the backend's
and the field's converters, as the ORM's compiler applies them. So a model
loaded here equals the one the ORM would give, on SQLite and PostgreSQL alike.

Each statement costs a round trip and its share of work in both processes, whatever it
does: ``together()`` sends a transaction's closing writes as one statement (see there).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Model
from django.db.models.expressions import RawSQL

M = TypeVar("M", bound=Model)
Converter = Callable[[Any, Any, Any], Any]


@dataclass(frozen=True)
class Columns:
    """A model's columns under a table alias: the SELECT list and how to turn a row into a model."""

    model: type[Model]
    sql: str
    attnames: tuple[str, ...]
    converters: tuple[tuple[int, tuple[Converter, ...], Any], ...]

    @property
    def width(self) -> int:
        return len(self.attnames)

    def load(self, row: Sequence[Any], start: int = 0) -> Any:
        """The model in ``row[start:start + width]``, as the ORM would have loaded it."""
        values = list(row[start : start + len(self.attnames)])
        if self.converters:
            db = connections[DEFAULT_DB_ALIAS]  # once: each use of the proxy looks it up again
            for index, functions, expression in self.converters:
                value = values[index]
                for function in functions:
                    value = function(value, expression, db)
                values[index] = value
        return self.model.from_db(DEFAULT_DB_ALIAS, self.attnames, values)


@cache
def _columns(model: type[Model], alias: str, vendor: str) -> Columns:
    fields = model._meta.concrete_fields
    quote = connection.ops.quote_name
    converters = []
    for index, field in enumerate(fields):
        expression = field.get_col(alias)
        functions = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
        if functions:
            converters.append((index, tuple(functions), expression))
    return Columns(
        model=model,
        sql=", ".join(f"{alias}.{quote(field.column)}" for field in fields),
        attnames=tuple(field.attname for field in fields),
        converters=tuple(converters),
    )


def columns(model: type[Model], alias: str) -> Columns:
    """``model``'s columns as ``alias``'s (cached per model, alias and database)."""
    return _columns(model, alias, connection.vendor)


@cache
def table(model: type[Model]) -> str:
    # Both databases quote names alike ("name"), so the quoted name is kept per model.
    return connection.ops.quote_name(model._meta.db_table)


def value(model: type[Model], field_name: str, python_value: Any) -> Any:
    """``python_value`` as a parameter for ``model.field_name``'s column."""
    return model._meta.get_field(field_name).get_db_prep_value(python_value, connection, prepared=False)


def lock(*, skip_locked: bool = False, of: str | None = None) -> str:
    """``FOR UPDATE`` (``SKIP LOCKED``, ``OF``) where the database has row locks; nothing on
    SQLite, whose transactions here hold the write lock from their start."""
    if not connection.features.has_select_for_update:
        return ""
    clause = " FOR UPDATE"
    if of is not None and connection.features.has_select_for_update_of:
        clause += f" OF {of}"
    if skip_locked and connection.features.has_select_for_update_skip_locked:
        clause += " SKIP LOCKED"
    return clause


def per_row() -> str:
    """Ends a correlated ``EXISTS`` subquery so that PostgreSQL runs it for each row it
    filters (an index probe) rather than turning it into a join planned from the table's
    statistics: on a table that grew since it was last analysed, such a join read an
    annotator's whole history on every hand-out. A subquery with an OFFSET is not pulled
    up; SQLite runs these per row anyway (and takes OFFSET only after a LIMIT)."""
    return " OFFSET 0" if connection.vendor == "postgresql" else ""


def each_key(
    model: type[M],
    keys: Mapping[str, Sequence[Any]],
    where: Mapping[str, Any],
    *,
    select: Sequence[str] | None = None,
    for_update: bool = False,
    probe: Sequence[str] = (),
) -> list[Any]:
    """The rows of ``model`` matching ``where`` (field: value) whose ``keys`` fields hold one of
    the given tuples: ``keys`` maps each key field to its value in each tuple, the lists in
    step. Instances of ``model`` as the ORM loads them, or with ``select`` tuples of those
    fields' values (ids and text, as the database gives them); ``for_update`` locks the rows.
    ``probe`` names the fields (of ``keys`` and ``where``) the probe matches by an index, the
    first key field alone by default: a unique index over them all, as a dataset's tree by
    (dataset, external id), is the one plan whatever the statistics, and leaves no rows of
    other datasets with the same id to read and drop.

    For an import's batch looking up what it has already. On PostgreSQL written out, one probe
    per tuple of an index that leads with the first key field, the other fields checked on the
    rows it finds (an item's tree, say: a few rows however large the project). The ORM's ``IN``
    lists were planned from the tables' statistics, and with them or without, the plans read a
    dataset's trees, a project's items or the answers written so far whole for every batch
    (``bench/record_imports.py``: 100,000 annotation records took 313 s before any ANALYZE,
    264 s of it in such reads, and take 33 s this way; the tree import's lookup,
    ``trees.store.existing_tree_ids``, read a dataset's trees per batch while an import filled
    it). Elsewhere the ORM, kept to the exact tuples.
    """
    names = list(keys)
    wanted = list(dict.fromkeys(zip(*(keys[name] for name in names), strict=True)))
    if not wanted:
        return []
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    if connection.vendor != "postgresql":
        rows = model.objects.filter(
            **where, **{f"{name}__in": {key[at] for key in wanted} for at, name in enumerate(names)}
        )
        rows = rows.select_for_update() if for_update else rows
        exact, width = set(wanted), len(names)
        if select is None:
            return [row for row in rows if tuple(getattr(row, field.attname) for field in fields) in exact]
        return [row[width:] for row in rows.values_list(*names, *select) if row[:width] in exact]
    quote = connection.ops.quote_name
    loaded = columns(model, "found") if select is None else None
    chosen = (
        loaded.sql
        if loaded is not None
        else ", ".join(f"found.{quote(meta.get_field(name).column)}" for name in select)
    )
    # The other fields' tests wrapped in IS TRUE, which no index serves: without statistics
    # every equality looks as selective as any other, and PostgreSQL chose an index on the
    # project and the person, reading all their answers for each probe.
    probed = set(probe) or {names[0]}

    def test(name: str, against: str) -> str:
        equal = f"found.{quote(meta.get_field(name).column)} = {against}"
        return equal if name in probed else f"({equal}) IS TRUE"

    conditions = [
        test(name, f"wanted.{quote(field.column)}") for name, field in zip(names, fields, strict=True)
    ]
    conditions += [test(name, "%s") for name in where]
    arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in fields)
    rows = fetch_all(
        f"SELECT probed.* FROM unnest({arrays}) AS wanted({', '.join(quote(f.column) for f in fields)}) "
        f"CROSS JOIN LATERAL (SELECT {chosen} FROM {table(model)} found "
        # OFFSET 0: a subquery with one is not pulled up into a join planned from statistics.
        f"WHERE {' AND '.join(conditions)} OFFSET 0{lock() if for_update else ''}) probed",
        [
            *([key[at] for key in wanted] for at in range(len(names))),
            *(value(model, name, given) for name, given in where.items()),
        ],
    )
    return [loaded.load(row) for row in rows] if loaded is not None else rows


def fetch_one(sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()


def fetch_all(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


Then = Callable[[list[tuple[Any, ...]]], None]


@dataclass
class Written:
    """A write's ``RETURNING`` rows: there once it ran (in ``together()``, when the block ends)."""

    sql: str
    params: Sequence[Any]
    then: Then | None = None
    rows: list[tuple[Any, ...]] | None = None

    @property
    def returns(self) -> bool:
        return " RETURNING " in self.sql

    def _done(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows
        if self.then is not None:
            self.then(rows)


_together: ContextVar[list[Written] | None] = ContextVar("sql_together", default=None)


@contextlib.contextmanager
def together() -> Iterator[None]:
    """The writes of this module inside (``insert``, ``update``, ``write``) run together when
    the block ends: on PostgreSQL as one statement, each a data-modifying ``WITH`` of it.

    For the closing writes of a transaction, which nothing reads before it ends: they then
    cost one statement instead of one each. So inside, nothing may read what they write, no
    two of them may change one row, and their results (``Written.rows``, the keys ``insert``
    sets) are there after the block. The ORM inside runs at once, before them. When the block
    raises, they are not run: the transaction is rolled back anyway. On SQLite they run one
    by one, in order (in process, a statement costs little).
    """
    if _together.get() is not None:  # inside another: part of it
        yield
        return
    writes: list[Written] = []
    token = _together.set(writes)
    try:
        yield
    finally:
        _together.reset(token)
    _run(writes)


def write(sql: str, params: Sequence[Any], then: Then | None = None) -> Written:
    """Run an INSERT, UPDATE or DELETE (at once, or in ``together()`` when it ends); ``then``
    gets its ``RETURNING`` rows."""
    written = Written(sql, params, then)
    writes = _together.get()
    if writes is None:
        _run([written])
    else:
        writes.append(written)
    return written


def _run(writes: list[Written]) -> None:
    if not writes:
        return
    if len(writes) == 1 or connection.vendor != "postgresql":
        for written in writes:
            with connection.cursor() as cursor:
                cursor.execute(written.sql, written.params)
                written._done(cursor.fetchall() if cursor.description else [])
        return
    # Each write a WITH of one statement. What they return comes back as JSON objects (keys,
    # counts: values JSON keeps as they are), since a WITH's rows are only read by a SELECT.
    named = [(f"write{index}", written) for index, written in enumerate(writes)]
    returning = [(name, written) for name, written in named if written.returns]
    reads = [f"(SELECT json_agg({name}) FROM {name})" for name, _ in returning]
    sql = "WITH " + ", ".join(f"{name} AS ({written.sql})" for name, written in named)
    sql += " SELECT " + (", ".join(reads) or "1")
    with connection.cursor() as cursor:
        cursor.execute(sql, [param for written in writes for param in written.params])
        results = cursor.fetchone()
    for _, written in named:
        if not written.returns:
            written._done([])
    for (_, written), result in zip(returning, results, strict=True):
        objects = json.loads(result) if isinstance(result, str) else result
        written._done([tuple(row.values()) for row in objects or []])


def insert(instances: Iterable[M]) -> list[M]:
    """INSERT new instances of one model in one statement and set their primary keys (in
    ``together()``, when it ends).

    Each field's value is what ``save()`` would write (``pre_save``, then
    ``get_db_prep_save``), or a ``RawSQL`` the INSERT computes; like ``bulk_create``, no
    signals are sent.
    """
    instances = list(instances)
    if not instances:
        return instances
    db = connections[DEFAULT_DB_ALIAS]
    meta = instances[0]._meta
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    quote = db.ops.quote_name
    rows, params = [], []
    for instance in instances:
        slots = []
        for field in fields:
            value = field.pre_save(instance, True)
            if isinstance(value, RawSQL):  # computed by the INSERT itself (a subquery)
                slots.append(f"({value.sql})")
                params.extend(value.params)
            else:
                slots.append("%s")
                params.append(field.get_db_prep_save(value, db))
        rows.append(f"({', '.join(slots)})")
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
        f"VALUES {', '.join(rows)} RETURNING {quote(meta.pk.column)}"
    )

    def keys(rows: list[tuple[Any, ...]]) -> None:
        for instance, (key,) in zip(instances, rows, strict=True):
            instance.pk = key
            instance._state.adding = False
            instance._state.db = DEFAULT_DB_ALIAS

    write(sql, params, keys)
    return instances


def update(instance: Model, fields: Sequence[str]) -> None:
    """UPDATE ``fields`` of a saved instance by its primary key (``save(update_fields=...)``
    without the signals and the query building)."""
    db = connections[DEFAULT_DB_ALIAS]
    meta = instance._meta
    quote = db.ops.quote_name
    chosen = [meta.get_field(name) for name in fields]
    write(
        f"UPDATE {quote(meta.db_table)} SET {', '.join(f'{quote(field.column)} = %s' for field in chosen)} "
        f"WHERE {quote(meta.pk.column)} = %s",
        [field.get_db_prep_save(field.pre_save(instance, False), db) for field in chosen] + [instance.pk],
    )
