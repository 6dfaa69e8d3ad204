"""Statements written out (trees.sql): ``together()`` runs a transaction's closing writes
as one statement on PostgreSQL, one by one on SQLite, and hands back what they return."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from tests.factories import DatasetFactory
from tests.queries import closing_writes
from trees import sql
from trees.audit import Target, audit_record
from trees.models import AuditEntry, ConversationTree, Dataset

pytestmark = pytest.mark.django_db


def entry(action: str = "dataset.create") -> AuditEntry:
    return AuditEntry(action=action, via="command", actor_name="ci")


def test_writes_inside_run_when_the_block_ends_and_get_their_keys(django_assert_num_queries: Any) -> None:
    first, second = entry(), entry()

    with django_assert_num_queries(closing_writes(2)), sql.together():
        sql.insert([first])
        sql.insert([second])
        assert first.pk is None  # nothing ran yet

    assert first.pk is not None and second.pk is not None and first.pk != second.pk
    assert set(AuditEntry.objects.values_list("pk", flat=True)) == {first.pk, second.pk}


def test_what_a_write_returns_comes_back_after_the_block() -> None:
    dataset = DatasetFactory(name="before")
    seen: list[Any] = []

    with sql.together():
        sql.insert([entry()])
        renamed = sql.write(
            f"UPDATE {sql.table(Dataset)} SET name = %s WHERE id = %s RETURNING id, name",
            ["after", dataset.pk],
            seen.append,
        )
        untouched = sql.write(f"UPDATE {sql.table(Dataset)} SET name = %s WHERE id = %s", ["x", -1])

    assert renamed.rows == [(dataset.pk, "after")] and seen == [[(dataset.pk, "after")]]
    assert untouched.rows == []
    assert Dataset.objects.get(pk=dataset.pk).name == "after"


def test_nothing_is_written_before_the_block_ends() -> None:
    with sql.together():
        sql.insert([entry()])
        assert not AuditEntry.objects.exists()

    assert AuditEntry.objects.count() == 1


def test_a_write_outside_a_block_runs_at_once() -> None:
    written = entry()

    sql.insert([written])

    assert AuditEntry.objects.filter(pk=written.pk).exists()


def test_nothing_runs_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), sql.together():
        sql.insert([entry()])
        raise RuntimeError("refused")

    assert not AuditEntry.objects.exists()


def test_a_block_inside_another_is_part_of_it(django_assert_num_queries: Any) -> None:
    with django_assert_num_queries(closing_writes(3)), sql.together():
        sql.insert([entry()])
        with sql.together():
            sql.insert([entry()])
        sql.insert([entry()])

    assert AuditEntry.objects.count() == 3


def test_a_value_the_insert_computes_is_read_by_the_statement_itself() -> None:
    tree = ConversationTree.objects.create(dataset=DatasetFactory(), external_id="conv-7")

    with sql.together():
        audit_record(
            "dataset.create", target=Target.row(ConversationTree, tree.pk, "external_id"), actor=None
        )
        sql.insert([entry()])

    assert AuditEntry.objects.filter(target_repr="conv-7", target_id=str(tree.pk)).count() == 1


def test_on_postgresql_the_writes_are_one_statement() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's data-modifying WITH")
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries, sql.together():
        sql.insert([entry(), entry()])
        sql.insert([entry()])

    (statement,) = [query["sql"] for query in queries]
    assert statement.startswith("WITH write0 AS (INSERT") and "write1 AS (INSERT" in statement
