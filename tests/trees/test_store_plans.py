"""An import's lookup of the trees it already has costs the same whatever the dataset's size.

Each batch of an import asks which of its 1,000 item ids the dataset already has
(``existing_tree_ids``). The answer: exactly the dataset's trees among those ids, whatever
other datasets hold. On PostgreSQL its plan probes the (dataset, external_id) unique index once
per id, before the table was ever analysed and after: an import fills a new dataset in one
transaction, which no ANALYZE sees, and a plan made from missing statistics read the dataset's
trees whole for every batch (issue 21 point 7: 100,000 small trees took minutes, not seconds).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection

from tests.factories import DatasetFactory
from trees.models import ConversationTree
from trees.store import existing_tree_ids

pytestmark = pytest.mark.django_db

TREES = 5000


def trees_of(dataset: Any, ids: range, prefix: str = "t") -> None:
    ConversationTree.objects.bulk_create(
        (ConversationTree(dataset=dataset, external_id=f"{prefix}{index}") for index in ids), batch_size=2000
    )


def test_it_finds_the_datasets_own_trees_among_the_ids():
    mine, other = DatasetFactory(), DatasetFactory()
    trees_of(mine, range(5))
    trees_of(other, range(10))
    ids = dict(ConversationTree.objects.filter(dataset=mine).values_list("external_id", "id"))

    found = existing_tree_ids(mine, ["t1", "t3", "t3", "t7", "nobody"])

    assert found == {"t1": ids["t1"], "t3": ids["t3"]}
    assert existing_tree_ids(mine, []) == {}
    assert existing_tree_ids(other, iter(["t7"])) == {"t7": other.trees.get(external_id="t7").pk}


def lookup_statement(dataset: Any, wanted: list[str]) -> tuple[str, list[Any]]:
    statements: list[tuple[str, list[Any]]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, list(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        existing_tree_ids(dataset, wanted)
    assert len(statements) == 1
    return statements[0]


def plan(sql: str, params: list[Any]) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def statistics_absent() -> None:
    """As a table no ANALYZE ever saw (undone with the test's transaction)."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM pg_statistic WHERE starelid = 'trees_conversationtree'::regclass")
        cursor.execute(
            "UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE relname = 'trees_conversationtree'"
        )


def probes_per_id(explained: str) -> bool:
    """Every read of the trees table is an index probe by external id, none a scan of a dataset."""
    reads = re.findall(r"(\w[\w ]*Scan)(?: using (\w+))? on trees_conversationtree", explained)
    conditions = re.findall(r"Index Cond: (.*)", explained)
    return (
        bool(reads)
        and all(kind == "Index Scan" for kind, _ in reads)
        and all("external_id" in condition for condition in conditions)
    )


@pytest.mark.postgres
@pytest.mark.parametrize("statistics", ["absent", "present"])
def test_the_lookup_probes_the_index_once_per_id_with_statistics_or_without(statistics):
    old, new = DatasetFactory(), DatasetFactory()
    trees_of(old, range(TREES))
    trees_of(new, range(TREES), prefix="item-")  # half an import in, not yet committed
    if statistics == "absent":
        statistics_absent()
    else:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE trees_conversationtree")
    wanted = [f"item-{index}" for index in range(TREES - 500, TREES + 500)]

    explained = plan(*lookup_statement(new, wanted))

    assert probes_per_id(explained), explained
    assert len(existing_tree_ids(new, wanted)) == 500
