"""Importing annotation records and gold answers into a project of many items.

For each size, in a fresh database: a dataset of that many small trees (a question and its
answer, written in bulk: COPY on PostgreSQL) and two projects over it; then a potato file of one
record per item (five annotators in turn, a likert answer each) read with ``annotations_import``,
and a gold file of one record per item read with ``gold_import``, each timed. The first project
is imported into as the tables are after a bulk load that no ANALYZE has seen (autovacuum is
off for the run's tables, as it would not yet have come by minutes after the load); the second
after an ``ANALYZE``. Each batch of 500 records looks up its items by external id: the figures
say whether that lookup, planned with statistics or without, costs what the rest does. The
statements' time is summed by kind (the ``IN`` lists folded), and the five costliest printed;
``--explain`` prints the plan of each kind of read, taken in the middle batch inside the
import's transaction (PostgreSQL: ``EXPLAIN ANALYZE``), in each state.

    .venv/bin/python bench/record_imports.py [--sizes 20000,100000] [--explain]
                                             [--databases postgres,sqlite]

Budgets: each import of the largest size <= 120 s, and no import's records/s at the largest
size below half its rate at the smallest (an import that grows faster than its file).
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

IMPORT_BUDGET_S = 120.0
GROWTH_BUDGET = 2.0
ANNOTATORS = 5
CONFIG = """
assignment: {order: random, annotations_per_item: 3}
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
"""
STATES = ("fresh", "analysed")
KINDS = ("annotations", "gold")


def records_file(size: int) -> bytes:
    return "\n".join(
        json.dumps(
            {
                "id": f"t{index}",
                "user": f"annotator{index % ANNOTATORS}",
                "status": "submitted",
                "annotations": {"quality": {"rating": 1 + index % 5}},
            }
        )
        for index in range(size)
    ).encode()


def gold_file(size: int) -> bytes:
    return "\n".join(
        json.dumps({"id": f"t{index}", "annotations": {"quality": {"rating": 1 + index % 5}}})
        for index in range(size)
    ).encode()


def autovacuum_off() -> None:
    """No ANALYZE behind the bench's back: the first project is planned without statistics."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"ALTER TABLE {connection.ops.quote_name(table)} SET (autovacuum_enabled = false)")


def analyse() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


class Statements:
    """The time of each kind of statement run inside ``timed()``, IN lists and literals folded."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)
        self.plans: dict[str, str] = {}
        self.explain_at = 0  # explain each kind of SELECT the nth time it runs (0: never)

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith("EXPLAIN"):  # the bench's own
            return execute(sql, params, many, context)
        kind = re.sub(r"\((?:%s, )*%s\)", "(...)", sql)
        kind = re.sub(r"VALUES (?:\([^)]*\), )*\([^)]*\)", "VALUES ...", kind)
        if (
            self.explain_at
            and sql.startswith("SELECT")
            and self.counts[kind] + 1 == self.explain_at
            and kind not in self.plans
        ):
            # Inside the import's transaction, so planned on what it has written so far.
            self.plans[kind] = explained(sql, list(params or ()))
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds[kind] += time.perf_counter() - started
            self.counts[kind] += 1

    @contextmanager
    def timed(self) -> Iterator[None]:
        from django.db import connection

        with connection.execute_wrapper(self):
            yield

    def ranked(self, count: int = 5) -> list[str]:
        return sorted(self.seconds, key=self.seconds.__getitem__, reverse=True)[:count]

    def costliest(self, count: int = 5) -> list[dict[str, Any]]:
        return [
            {"statement": kind[:160], "count": self.counts[kind], "seconds": round(self.seconds[kind], 2)}
            for kind in self.ranked(count)
        ]


def explained(sql: str, params: list[Any]) -> str:
    from django.db import connection

    prefix = "EXPLAIN (ANALYZE, BUFFERS) " if connection.vendor == "postgresql" else "EXPLAIN QUERY PLAN "
    with connection.cursor() as cursor:
        cursor.execute(prefix + sql, params)
        text = "\n".join(" ".join(str(cell) for cell in row) for row in cursor.fetchall())
    return re.sub(r"'\{([^,}]*),[^}]*\}'", r"'{\1,...}'", text)  # the long arrays, shortened


def run_child(kind: str, size: int, explain: bool) -> None:
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection
    from scale import trees_write

    from annotation.imports.annotations import annotations_import
    from annotation.imports.records import BATCH_RECORDS
    from annotation.projects.services import project_create
    from annotation.quality.gold_imports import gold_import
    from trees.services import dataset_get_or_create

    autovacuum_off()
    started = time.perf_counter()
    dataset = dataset_get_or_create(f"records-{size}")
    trees_write(dataset, size, 2)
    projects = {
        state: project_create(name=f"{state}-{size}", dataset=dataset, config_yaml=CONFIG) for state in STATES
    }
    output: dict[str, Any] = {
        "database": connection.vendor,
        "size": size,
        "built_s": round(time.perf_counter() - started, 1),
    }
    files = {"annotations": records_file(size), "gold": gold_file(size)}
    for state, project in projects.items():
        if state == "analysed":
            analyse()
        for what in KINDS:
            statements = Statements()
            statements.explain_at = max(1, size // BATCH_RECORDS // 2) if explain else 0
            started = time.perf_counter()
            with statements.timed():
                if what == "annotations":
                    report = annotations_import(project=project, source=io.BytesIO(files[what]))
                    done = report.records
                else:
                    report = gold_import(project=project, source=io.BytesIO(files[what]))
                    done = report.items
            seconds = time.perf_counter() - started
            assert report.committed and done == size, report.summary()
            result = {"seconds": round(seconds, 2), "costliest": statements.costliest()}
            result["plans"] = [  # the SELECTs', costliest first
                f"{kind[:160]}\n{statements.plans[kind]}"
                for kind in statements.ranked(len(statements.seconds))
                if kind in statements.plans
            ]
            output[f"{what} {state}"] = result
    print(json.dumps(output))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--databases", default="postgres,sqlite")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.size, args.explain)
        return

    ok = True
    sizes = [int(size) for size in args.sizes.split(",")]
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        rates: dict[str, list[float]] = defaultdict(list)
        for size in sizes:
            command = [sys.executable, __file__, "--child", kind, "--size", str(size)]
            command += ["--explain"] if args.explain else []
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            print(f"{result['database']}, {size:,} items (built in {result['built_s']} s):")
            for what in KINDS:
                for state in STATES:
                    measured = result[f"{what} {state}"]
                    seconds = measured["seconds"]
                    rates[f"{what} {state}"].append(size / seconds)
                    within = size != sizes[-1] or seconds <= IMPORT_BUDGET_S
                    ok &= within
                    print(
                        f"    {what:<12} {state:<9} {seconds:>7.1f} s  {size / seconds:>8,.0f} records/s"
                        f"{'' if within else f'  OVER BUDGET ({IMPORT_BUDGET_S:.0f} s)'}"
                    )
                    for statement in measured["costliest"]:
                        print(
                            f"        {statement['seconds']:>7.2f} s {statement['count']:>6,}x  "
                            f"{statement['statement']}"
                        )
                    for plan in measured["plans"]:
                        print("        " + plan.replace("\n", "\n            "))
        for name, figures in rates.items():
            growth = figures[0] / figures[-1]
            ok &= growth <= GROWTH_BUDGET
            verdict = "ok" if growth <= GROWTH_BUDGET else "GROWS"
            print(f"    {name}: records/s at the smallest size x{growth:.2f} of the largest  {verdict}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
