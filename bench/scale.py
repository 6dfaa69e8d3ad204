"""Projects that stay fast as they grow: the annotator's loop at 1,000 to 1,000,000 items, and
deletes and replaces of large datasets.

``handout``: for each size, a project of that many small trees (a question and its answer)
written in bulk (COPY on PostgreSQL), ``assignment: {order: random, annotations_per_item: 3}``;
then, through Django's test client, ``--runs`` cycles of one annotator in each: ``POST
items/next`` (a fresh lease), the annotate page, ``POST items/{tree}/submit``; and of another
annotator at the largest size who already has ``--history`` submissions (written in bulk,
spread over the project: with an overlap of 3 they stay open, the case in which a hand-out
walking from the start would pass every one of them). The projects take their cycles in turns,
round after round, so that what else the machine does weighs on each alike. It prints the p50
and p95 of each request.

``deletes``: replacing 100 trees of a 10,000-tree dataset (``import_trees --replace``, through
``tree_import``), and deleting a dataset of ``--delete-messages`` messages with
``trees.deletion.dataset_delete`` (in batches of trees, a transaction each; the longest batch
is printed: no single giant lock).

``imports``: importing ``--import-trees`` small trees (a question, two answers and a follow-up)
into a new dataset of a fresh database, with ``tree_import``: one transaction, which no ANALYZE
sees, so the lookups of each batch are planned without statistics (issue 21 point 7: the
lookup of the trees a dataset already has once read the whole dataset per batch). Run first.

    .venv/bin/python bench/scale.py [--sizes 1000,100000,1000000] [--history 10000] [--runs 50]
                                    [--delete-messages 1000000] [--import-trees 100000]
                                    [--sections imports,handout,deletes] [--databases postgres]

Budgets: each p50 at the largest size (and after the history) within 1.5x of the same at the
smallest; the replace <= 1 s; the delete <= 600 s; the import <= 60 s. Exits 1 when one is
missed. Building the 1,000,000-item project takes a few minutes on PostgreSQL; small sizes run
in seconds (on SQLite too: ``--databases sqlite``).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

GROWTH_BUDGET = 1.5
REPLACE_BUDGET_S = 1.0
DELETE_BUDGET_S = 600.0
IMPORT_BUDGET_S = 60.0
BATCH = 100_000
CONFIG = """
assignment: {order: random, annotations_per_item: 3}
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
"""
STEPS = ("next", "page", "submit")


# -- building in bulk ------------------------------------------------------------------------


def trees_write(dataset: Any, count: int, messages_per_tree: int) -> list[int]:
    """``count`` trees of a chain of ``messages_per_tree`` messages each, in batches (COPY on
    PostgreSQL); returns the trees' ids."""
    from django.db import connection, transaction
    from django.utils import timezone

    from trees.models import ConversationTree, Message
    from trees.store import MESSAGE_COLUMNS, TREE_COLUMNS, allocate_ids, insert_rows

    now = Message._meta.get_field("created_at").get_db_prep_value(timezone.now(), connection)
    all_ids: list[int] = []
    for start in range(0, count, BATCH):
        size = min(BATCH, count - start)
        with transaction.atomic():
            tree_ids = allocate_ids(ConversationTree, size)
            insert_rows(
                ConversationTree,
                TREE_COLUMNS,
                [
                    (tree_id, dataset.pk, f"t{start + n}", "ready", "{}", now, now)
                    for n, tree_id in enumerate(tree_ids)
                ],
            )
            message_ids = iter(allocate_ids(Message, size * messages_per_tree))
            rows = []
            for tree_id in tree_ids:
                parent = None
                for depth in range(messages_per_tree):
                    message_id = next(message_ids)
                    role = "user" if depth % 2 == 0 else "assistant"
                    text = f"Message {depth} of tree {tree_id}: how do I reset my password, please?"
                    # MESSAGE_COLUMNS: no HTML kept (prose), no author, no ranking; not deleted.
                    head = (message_id, tree_id, parent, f"m{depth}", role, text, None, 0, None, depth, 0)
                    rows.append((*head, None, False, None, "{}", None, None, None, False, now))
                    parent = message_id
            insert_rows(Message, MESSAGE_COLUMNS, rows)
        all_ids.extend(tree_ids)
    return all_ids


def items_write(project: Any, tree_ids: list[int]) -> None:
    from django.db import transaction

    from annotation.models import ProjectItem
    from trees.store import insert_rows

    rng = random.Random(1)
    columns = (
        "project_id",
        "tree_id",
        "active_count",
        "submitted_count",
        "is_full",
        "shuffle_key",
        "is_gold",
    )
    columns += ("gold_answers", "gold_explanation")
    for start in range(0, len(tree_ids), BATCH):
        with transaction.atomic():
            insert_rows(
                ProjectItem,
                columns,
                [
                    (project.pk, tree_id, 0, 0, False, rng.random(), False, "{}", "")
                    for tree_id in tree_ids[start : start + BATCH]
                ],
            )


def analyse() -> None:
    """Statistics as autovacuum would leave them after bulk writes (PostgreSQL)."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def project_build(size: int, annotator: Any) -> Any:
    from annotation.projects.counts import project_counts_forget
    from annotation.projects.services import membership_add, project_create
    from trees.services import dataset_get_or_create

    dataset = dataset_get_or_create(f"scale-{size}")
    project = project_create(name=f"scale-{size}", dataset=dataset, config_yaml=CONFIG)
    items_write(project, trees_write(dataset, size, 2))
    project_counts_forget(project.pk)
    membership_add(project=project, user=annotator, role="annotator")
    analyse()
    return project


def history_write(project: Any, annotator: Any, count: int) -> None:
    """``count`` submissions of ``annotator`` spread over the project, with the counts the
    hand-out keeps (the items' places, the annotator's progress) brought in step."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import AnnotatorProgress, Assignment, ProjectItem
    from annotation.projects.counts import project_counts_forget

    items = list(ProjectItem.objects.filter(project=project, active_count=0).values_list("pk", "tree_id"))
    chosen = random.Random(2).sample(items, min(count, len(items)))
    now = timezone.now()
    with transaction.atomic():
        Assignment.objects.bulk_create(
            [
                Assignment(
                    project=project,
                    tree_id=tree_id,
                    user=annotator,
                    status="submitted",
                    leased_at=now,
                    submitted_at=now,
                )
                for _, tree_id in chosen
            ],
            batch_size=5000,
        )
        for start in range(0, len(chosen), 5000):
            ProjectItem.objects.filter(pk__in=[pk for pk, _ in chosen[start : start + 5000]]).update(
                active_count=1, submitted_count=1
            )
        progress, _ = AnnotatorProgress.objects.get_or_create(project=project, user=annotator)
        AnnotatorProgress.objects.filter(pk=progress.pk).update(submitted=progress.submitted + len(chosen))
    project_counts_forget(project.pk)
    analyse()


# -- the loop ---------------------------------------------------------------------------------


class Loop:
    """One annotator's cycles in one project through Django's test client, each request timed."""

    def __init__(self, project: Any, annotator: Any) -> None:
        from django.test import Client

        self.project = project
        self.client = Client()
        self.client.force_login(annotator)
        self.times: dict[str, list[float]] = {step: [] for step in STEPS}

    def timed(self, step: str, call: Any) -> Any:
        started = time.perf_counter()
        response = call()
        self.times[step].append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (step, response.status_code, response.content[:300])
        return response

    def cycle(self) -> None:
        base, client = f"/api/v1/projects/{self.project.name}/items", self.client
        item = self.timed("next", lambda: client.post(f"{base}/next")).json()
        tree_id = item["tree"]["id"]
        page = f"/projects/{self.project.name}/items/{tree_id}/"
        self.timed("page", lambda: client.get(page))
        data = json.dumps(
            {"annotations": {"quality": {"rating": 3}}, "version": item["assignment"]["version"]}
        )
        self.timed(
            "submit",
            lambda: client.post(f"{base}/{tree_id}/submit", data=data, content_type="application/json"),
        )


def handout_child(args: argparse.Namespace) -> dict[str, Any]:
    """Every project built first, then their cycles taken in turns (one cycle in each, round
    after round), so that whatever else the machine does weighs on every size alike."""
    from django.contrib.auth import get_user_model

    people = get_user_model().objects
    annotator = people.create(username="annotator")
    sizes = [int(size) for size in args.sizes.split(",")]
    loops: dict[str, Loop] = {}
    built: dict[str, float] = {}
    for size in sizes:
        started = time.perf_counter()
        project = project_build(size, annotator)
        built[f"{size:,} items"] = time.perf_counter() - started
        loops[f"{size:,} items"] = Loop(project, annotator)
    if args.history:
        from annotation.projects.services import membership_add

        veteran = people.create(username="veteran")
        membership_add(project=project, user=veteran, role="annotator")
        started = time.perf_counter()
        history_write(project, veteran, args.history)
        name = f"{sizes[-1]:,} items, {args.history:,} done"
        built[name] = time.perf_counter() - started
        loops[name] = Loop(project, veteran)
    for loop in loops.values():
        for _ in range(3):  # the process's first requests load what they use
            loop.cycle()
        loop.times = {step: [] for step in STEPS}
    for _ in range(args.runs):
        for loop in loops.values():
            loop.cycle()
    return {name: {"built_s": built[name], "times": loop.times} for name, loop in loops.items()}


# -- deletes and replaces ---------------------------------------------------------------------


def potato_lines(count: int, prefix: str) -> bytes:
    items = (
        {
            "id": f"{prefix}-{index:05d}",
            "tree": {
                "id": "q",
                "role": "user",
                "content": f"Question {index}: how do I reset my password?",
                "children": [
                    {
                        "id": "a",
                        "role": "assistant",
                        "content": "Open the settings page.",
                        "children": [{"id": "f", "role": "user", "content": "It is not there."}],
                    },
                    {"id": "b", "role": "assistant", "content": "Ask your administrator."},
                ],
            },
        }
        for index in range(count)
    )
    return "\n".join(json.dumps(item) for item in items).encode()


def deletes_child(args: argparse.Namespace) -> dict[str, Any]:
    from trees.deletion import dataset_delete
    from trees.services import dataset_get_or_create, tree_import

    results: dict[str, Any] = {}
    dataset = dataset_get_or_create("replace")
    report = tree_import(
        dataset=dataset, source=io.BytesIO(potato_lines(10_000, "item")), format_name="potato"
    )
    assert report.committed, report.summary()
    analyse()
    started = time.perf_counter()
    report = tree_import(
        dataset=dataset, source=io.BytesIO(potato_lines(100, "item")), format_name="potato", replace=True
    )
    results["replace_s"] = time.perf_counter() - started
    assert report.committed and report.trees_replaced == 100, report.summary()

    big = dataset_get_or_create("delete")
    per_tree = 10
    started = time.perf_counter()
    trees_write(big, max(1, args.delete_messages // per_tree), per_tree)
    analyse()
    results["delete_built_s"] = time.perf_counter() - started
    moments: list[float] = []
    started = time.perf_counter()
    deleted = dataset_delete(dataset=big, progress=lambda done, total: moments.append(time.perf_counter()))
    results["delete_s"] = time.perf_counter() - started
    results["deleted"] = deleted
    results["longest_batch_s"] = max((b - a for a, b in itertools.pairwise(moments)), default=0.0)
    results["batches"] = len(moments) - 1
    return results


def imports_child(args: argparse.Namespace) -> dict[str, Any]:
    from trees.services import dataset_get_or_create, tree_import

    source = io.BytesIO(potato_lines(args.import_trees, "new"))
    dataset = dataset_get_or_create("imported")
    started = time.perf_counter()
    report = tree_import(dataset=dataset, source=source, format_name="potato")
    seconds = time.perf_counter() - started
    assert report.committed and report.trees_created == args.import_trees, report.summary()
    return {"trees": args.import_trees, "messages": report.messages, "import_s": seconds}


# -- the parent: a child process per database, the figures against the budgets ---------------


def run_child(kind: str, args: argparse.Namespace) -> None:
    import os

    os.environ["STATIC_MANIFEST"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    # Rates high enough never to refuse the loop: their statement is still paid.
    os.environ["API_THROTTLE_USER"] = os.environ["API_THROTTLE_LOOP"] = "1000000/min"
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection

    output: dict[str, Any] = {"database": connection.vendor}
    if "imports" in args.sections:
        output["imports"] = imports_child(args)
    if "handout" in args.sections:
        output["handout"] = handout_child(args)
    if "deletes" in args.sections:
        output["deletes"] = deletes_child(args)
    print(json.dumps(output))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report_handout(results: dict[str, Any]) -> bool:
    ok = True
    print(
        f"    {'project':<28} {'built':>8}   " + "   ".join(f"{step + ' p50/p95 ms':>20}" for step in STEPS)
    )
    first = None
    for name, result in results.items():
        times = result["times"]
        p50 = {step: statistics.median(times[step]) for step in STEPS}
        first = first or p50
        cells = "   ".join(f"{p50[step]:>9.1f} / {percentile(times[step], 0.95):>8.1f}" for step in STEPS)
        growth = max(p50[step] / first[step] for step in STEPS)
        verdict = "ok" if growth <= GROWTH_BUDGET else "GROWS"
        ok &= growth <= GROWTH_BUDGET
        print(f"    {name:<28} {result['built_s']:>7.1f}s   {cells}   x{growth:.2f} of the first  {verdict}")
    return ok


def report_deletes(results: dict[str, Any]) -> bool:
    replace_ok = results["replace_s"] <= REPLACE_BUDGET_S
    delete_ok = results["delete_s"] <= DELETE_BUDGET_S
    print(
        f"    replace 100 trees of 10,000: {results['replace_s']:.2f} s  <= {REPLACE_BUDGET_S} s  "
        f"{'ok' if replace_ok else 'OVER BUDGET'}"
    )
    rate = results["deleted"] / results["delete_s"] if results["delete_s"] else 0
    print(
        f"    delete {results['deleted']:,} messages: {results['delete_s']:.1f} s ({rate:,.0f}/s) in "
        f"{results['batches']} batches, the longest {results['longest_batch_s']:.2f} s "
        f"(built in {results['delete_built_s']:.1f} s)  <= {DELETE_BUDGET_S:.0f} s  "
        f"{'ok' if delete_ok else 'OVER BUDGET'}"
    )
    return replace_ok and delete_ok


def report_imports(results: dict[str, Any]) -> bool:
    ok = results["import_s"] <= IMPORT_BUDGET_S
    print(
        f"    import {results['trees']:,} small trees ({results['messages']:,} messages) into a new "
        f"dataset: {results['import_s']:.1f} s  <= {IMPORT_BUDGET_S:.0f} s  {'ok' if ok else 'OVER BUDGET'}"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--history", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--delete-messages", type=int, default=1_000_000)
    parser.add_argument("--import-trees", type=int, default=100_000)
    parser.add_argument("--sections", default="imports,handout,deletes")
    parser.add_argument("--databases", default="postgres")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args)
        return

    ok = True
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        command = [sys.executable, __file__, "--child", kind, *sys.argv[1:]]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        result = json.loads(output.strip().splitlines()[-1])
        print(f"{result['database']}:")
        if "imports" in result:
            ok &= report_imports(result["imports"])
        if "handout" in result:
            ok &= report_handout(result["handout"])
        if "deletes" in result:
            ok &= report_deletes(result["deletes"])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
