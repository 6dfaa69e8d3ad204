"""The annotator's loop has one good plan on PostgreSQL, with statistics or without.

Every statement of a hand-out (``item_next``), of the annotate page's item (``item_view``)
and of a submission is explained (``EXPLAIN``, which runs nothing) as PostgreSQL would run
it, in a project of a few thousand items where the annotator already has a history, first
before the tables were ever analysed and then after ``ANALYZE``. None of them may read the
items or the assignments table whole (a ``Seq Scan``): such a plan costs in proportion to
the project or to the annotator's history (issue 21: 10 ms a hand-out at 10,000 items
without statistics; 27 ms for a probe of 740 items done with some). For each order: random
(the annotator's cursor), sequential (the same), fewest annotations first. Skipped on SQLite.

One statement reads all of a project's items by design: the project's counts for progress
(``annotation.projects.counts``), which each process makes at most every
``PROGRESS_COUNTS_SECONDS`` (the tests count every time): it is left out here.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, ProjectItem
from annotation.work.assignment import item_next
from annotation.work.my_work import my_work_neighbours
from annotation.work.selectors import item_view
from annotation.work.submissions import item_submit
from tests.factories import DatasetFactory, PersonaFactory, ProjectFactory
from trees.models import ConversationTree

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

ITEMS = 3000
DONE = 600  # the annotator's history
# The tables that grow with the project and the annotators' histories.
WATCHED = ("annotation_projectitem", "annotation_assignment")
PROJECT_COUNTS = "SELECT COUNT(*) FILTER (WHERE NOT is_gold), "
LIKERT = (
    "annotation_schemes:\n"
    "  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}\n"
)


def project_with_history(order: str, annotator: Any) -> Any:
    """``ITEMS`` items with an overlap of 3 in ``order`` (the assignment's settings), of which the annotator submitted ``DONE``
    (spread through the order) and two others some more, written in bulk."""
    dataset = DatasetFactory()
    ConversationTree.objects.bulk_create(
        ConversationTree(dataset=dataset, external_id=f"t{index}") for index in range(ITEMS)
    )
    config = LIKERT + f"assignment: {{{order}, annotations_per_item: 3}}\n"
    project = ProjectFactory(dataset=dataset, config_yaml=config)
    now = timezone.now()
    trees = list(ProjectItem.objects.filter(project=project).values_list("tree_id", flat=True))
    rng = random.Random(7)
    others = [PersonaFactory(username=f"other-{index}") for index in range(2)]
    history = [
        Assignment(
            project=project, tree_id=tree_id, user=user, status="submitted", leased_at=now, submitted_at=now
        )
        for user, chosen in [
            (annotator, rng.sample(trees, DONE)),
            *((other, rng.sample(trees, 900)) for other in others),
        ]
        for tree_id in chosen
    ]
    Assignment.objects.bulk_create(history, batch_size=2000)
    return project


def loop_statements(project: Any, annotator: Any) -> list[tuple[str, list[Any]]]:
    """The statements (SQL with its parameters) of a hand-out, the item's page data and a
    submission that read or write the watched tables."""
    statements: list[tuple[str, list[Any]]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if not many and re.search("|".join(WATCHED), sql) and not sql.startswith(PROJECT_COUNTS):
            statements.append((sql, list(params or ())))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        held = item_next(project=project, user=annotator)
        item_view(project=project, tree_id=held.tree_id, user=annotator, with_messages=True)
        my_work_neighbours(assignment=held)
        item_submit(
            project=project,
            tree=held.tree,
            user=annotator,
            answers={"quality": {"rating": 4}},
            version=held.version,
        )
    return statements


def plans(cursor: Any, sql: str, params: list[Any]) -> list[str]:
    """The custom plan (the values written in) and the generic one of ``sql``."""
    cursor.execute(f"EXPLAIN {connection.ops.compose_sql(sql, params)}")
    custom = "\n".join(row[0] for row in cursor.fetchall())
    if not params:
        return [custom]
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    cursor.execute(f"PREPARE loop_statement AS {prepared}")
    cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
    cursor.execute(
        connection.ops.compose_sql(
            f"EXPLAIN EXECUTE loop_statement({', '.join(['%s'] * len(params))})", params
        )
    )
    generic = "\n".join(row[0] for row in cursor.fetchall())
    cursor.execute("RESET plan_cache_mode")
    cursor.execute("DEALLOCATE loop_statement")
    return [custom, generic]


def whole_table_reads(statements: list[tuple[str, list[Any]]]) -> list[str]:
    found = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            for plan in plans(cursor, sql, params):
                for table in WATCHED:
                    if f"Seq Scan on {table}" in plan:
                        found.append(f"{table} read whole by:\n{sql}\n{plan}")
    return found


@pytest.mark.parametrize(
    "order",
    [
        "order: random",
        "order: sequential",
        "order: fewest_annotations_first",
        "order: random, max_items_per_user: 100000",  # the quota's count too
    ],
)
def test_the_loop_reads_no_table_whole_with_statistics_absent_or_present(order: str) -> None:
    annotator = PersonaFactory(username="alice")
    project = project_with_history(order, annotator)

    statements = loop_statements(project, annotator)
    assert any("annotation_projectitem" in sql for sql, _ in statements)
    assert whole_table_reads(statements) == []

    with connection.cursor() as cursor:
        for table in WATCHED:
            cursor.execute(f"ANALYZE {table}")
    assert whole_table_reads(loop_statements(project, annotator)) == []


def test_previous_and_next_start_at_the_items_place_in_the_annotators_history() -> None:
    """The annotate page's Previous and Next (``my_work_neighbours``) are two index ranges that
    begin at the item's place in My work's order, so neither walks the annotator's history
    from one end, with statistics or without."""
    annotator = PersonaFactory(username="alice")
    project = project_with_history("order: random", annotator)
    middle = Assignment.objects.filter(project=project, user=annotator).order_by("tree_id")[DONE // 2]

    def neighbour_plans() -> list[str]:
        statements: list[tuple[str, list[Any]]] = []

        def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            statements.append((sql, list(params or ())))
            return execute(sql, params, many, context)

        with connection.execute_wrapper(keep):
            my_work_neighbours(assignment=middle)
        ((sql, params),) = statements
        with connection.cursor() as cursor:
            return plans(cursor, sql, params)

    for analysed in (False, True):
        if analysed:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE annotation_assignment")
        for plan in neighbour_plans():
            assert "Seq Scan" not in plan, plan
            ranges = re.findall(r"Index Cond: \(.*ROW\(updated_at, id\) [<>] ROW", plan)
            assert len(ranges) == 2, plan
