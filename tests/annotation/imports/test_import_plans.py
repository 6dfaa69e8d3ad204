"""A batch of an annotation or gold import looks up what it has already by index probes.

Each batch of 500 records asks which of its item ids are the project's items
(``project_items_by_external_id``) and, for the annotation import, what each record's person has
already done on its item (``trees.sql.each_key``). The answers: exactly the project's items
among those ids, whatever other datasets hold, and exactly the (item, person) pairs asked, not
every item of the batch with every person of it. On PostgreSQL every read of the trees, the
items, the assignments and the answers is an index probe by the batch's keys, before the
tables were ever analysed and after: an import writes its answers in one transaction, which
no ANALYZE sees, and the ORM's IN lists were planned as reads of the dataset's trees, the
project's items or the answers written so far for every batch, with statistics or without
(``bench/record_imports.py``: 100,000 records took 313 s, 264 s of it in those reads).
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from annotation.imports.annotations import annotations_import
from annotation.models import Annotation, Assignment, ProjectItem
from annotation.projects.selectors import project_items_by_external_id
from annotation.quality.gold_imports import gold_import
from tests.factories import DatasetFactory, PersonaFactory, ProjectFactory
from trees import sql
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db

ITEMS = 3000
BATCH = 500
WATCHED = (
    "trees_conversationtree",
    "annotation_projectitem",
    "annotation_assignment",
    "annotation_annotation",
)
# The columns a batch's probes go by: an item's external id, then its tree.
KEYS = ("external_id", "tree_id")
# The ways to read by an index: a probe, or a bitmap of the rows one finds (the table read by it).
PROBES = ("Index Scan", "Index Only Scan", "Bitmap Index Scan", "Bitmap Heap Scan")


def trees_of(dataset: Any, count: int) -> None:
    ConversationTree.objects.bulk_create(
        (ConversationTree(dataset=dataset, external_id=f"t{index}") for index in range(count)),
        batch_size=2000,
    )


def test_it_finds_the_projects_items_among_the_ids():
    mine, other = DatasetFactory(), DatasetFactory()
    trees_of(mine, 5)
    trees_of(other, 10)
    project = ProjectFactory(dataset=mine)
    ProjectFactory(dataset=other)
    items = {
        tree_id: pk
        for pk, tree_id in ProjectItem.objects.filter(project=project).values_list("pk", "tree_id")
    }
    trees = dict(ConversationTree.objects.filter(dataset=mine).values_list("external_id", "id"))

    found = project_items_by_external_id(project=project, external_ids=["t1", "t3", "t3", "t7", "nobody"])

    assert found == {name: (items[trees[name]], trees[name]) for name in ("t1", "t3")}
    assert project_items_by_external_id(project=project, external_ids=iter([])) == {}


def test_each_key_gives_the_pairs_asked_not_every_item_with_every_person():
    alice, bob = PersonaFactory(username="alice"), PersonaFactory(username="bob")
    dataset = DatasetFactory()
    trees_of(dataset, 3)
    project = ProjectFactory(dataset=dataset)
    t0, t1, t2 = (
        ConversationTree.objects.filter(dataset=dataset).order_by("external_id").values_list("id", flat=True)
    )
    Assignment.objects.bulk_create(
        Assignment(project=project, tree_id=tree_id, user=user)
        for tree_id, user in [(t0, alice), (t0, bob), (t1, alice), (t1, bob), (t2, bob)]
    )

    found = sql.each_key(
        Assignment,
        {"tree_id": [t0, t1, t2, t0], "user_id": [alice.pk, bob.pk, alice.pk, alice.pk]},
        {"project_id": project.pk},
        for_update=True,
    )

    assert sorted((row.tree_id, row.user_id) for row in found) == [(t0, alice.pk), (t1, bob.pk)]
    assert {type(row) for row in found} == {Assignment}
    assert found[0] == Assignment.objects.get(pk=found[0].pk)
    assert sql.each_key(Assignment, {"tree_id": [], "user_id": []}, {"project_id": project.pk}) == []


def project_with_answers() -> tuple[Any, list[Any]]:
    """A project of ``ITEMS`` items (another dataset holding the same item ids) in which three
    people have answered every item, written in bulk."""
    dataset = DatasetFactory()
    trees_of(dataset, ITEMS)
    trees_of(DatasetFactory(), ITEMS)
    project = ProjectFactory(dataset=dataset)
    people = [PersonaFactory(username=f"annotator-{index}") for index in range(3)]
    now = timezone.now()
    trees = list(ProjectItem.objects.filter(project=project).values_list("tree_id", flat=True))
    done = [(tree_id, person) for person in people for tree_id in trees]
    Assignment.objects.bulk_create(
        (
            Assignment(project=project, tree_id=tree_id, user=person, status="submitted", submitted_at=now)
            for tree_id, person in done
        ),
        batch_size=2000,
    )
    Annotation.objects.bulk_create(
        (
            Annotation(project=project, tree_id=tree_id, user=person, scheme="quality", payload={"rating": 3})
            for tree_id, person in done
        ),
        batch_size=2000,
    )
    return project, people


def statistics_absent() -> None:
    """As tables no ANALYZE ever saw (undone with the test's transaction)."""
    with connection.cursor() as cursor:
        for table in WATCHED:
            cursor.execute("DELETE FROM pg_statistic WHERE starelid = %s::regclass", [table])
            cursor.execute("UPDATE pg_class SET reltuples = -1, relpages = 0 WHERE relname = %s", [table])


def batch_reads(project: Any, people: list[Any]) -> list[tuple[str, list[Any]]]:
    """The reads of the watched tables by a batch of an annotation import (one record for each
    of ``BATCH`` items, its person's earlier answers replaced) and of a gold import."""
    statements: list[tuple[str, list[Any]]] = []

    def keep(execute: Any, statement: str, params: Any, many: bool, context: Any) -> Any:
        if statement.startswith("SELECT") and re.search("|".join(WATCHED), statement):
            statements.append((statement, list(params or ())))
        return execute(statement, params, many, context)

    indexes = range(1000, 1000 + BATCH)
    records = [
        {"id": f"t{index}", "user": people[index % 3].username, "annotations": {"quality": {"rating": 5}}}
        for index in indexes
    ]
    gold = [{"id": f"t{index}", "annotations": {"quality": {"rating": 4}}} for index in indexes]
    with connection.execute_wrapper(keep):
        report = annotations_import(project=project, source=io.BytesIO(lines(records)))
        assert report.committed and report.replaced == BATCH, report.summary()
        assert gold_import(project=project, source=io.BytesIO(lines(gold))).committed
    return statements


def lines(documents: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(document) for document in documents).encode()


def reads_not_by_key(statements: list[tuple[str, list[Any]]]) -> list[str]:
    """The plans that read a watched table other than by index probes on a batch's keys."""
    found = []
    with connection.cursor() as cursor:
        for statement, params in statements:
            cursor.execute(f"EXPLAIN {statement}", params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            scans = re.findall(r"(\w[\w ]*Scan)(?: using \w+)? on (\w+)", plan)
            conditions = re.findall(r"(?:Index|Recheck) Cond: (.*)", plan)
            if any(kind not in PROBES for kind, table in scans if table in WATCHED) or any(
                not any(key in condition for key in KEYS) for condition in conditions
            ):
                found.append(f"{statement}\n{plan}")
    return found


@pytest.mark.postgres
@pytest.mark.parametrize("statistics", ["absent", "present"])
def test_a_batchs_lookups_probe_the_indexes_by_its_keys_with_statistics_or_without(statistics):
    project, people = project_with_answers()
    if statistics == "absent":
        statistics_absent()
    else:
        with connection.cursor() as cursor:
            for table in WATCHED:
                cursor.execute(f"ANALYZE {table}")

    statements = batch_reads(project, people)

    assert {table for table in WATCHED if any(table in statement for statement, _ in statements)} == set(
        WATCHED
    )
    assert reads_not_by_key(statements) == []
