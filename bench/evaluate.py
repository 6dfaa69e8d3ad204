"""Speed of rubric evaluation: 10,000 conversations, 5 automatic criteria and one gate.

Builds a project over 10,000 conversations made from the scheduling sample
(platform/samples/scheduling/: its rubric has five automatic criteria and a
Python gate; every conversation gets an A/B variant and a model name), then
measures ``project_evaluate`` — reading the trees, running the checks,
scoring and storing every result — first on an empty table and again over
its own results (the idempotent re-run), and the report page for those
results, plain and grouped by variant, through Django's test client.

    .venv/bin/python bench/evaluate.py [--conversations 10000] [--runs 5] [--databases sqlite,postgres]

Budgets: evaluation ≥ 2,000 conversations/s on SQLite, results included;
the report page ≤ 500 ms (median).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

RATE_BUDGET = 2000  # conversations per second, SQLite
PAGE_BUDGET_MS = 500
SAMPLE = _setup.ROOT / "platform" / "samples" / "scheduling"
CONFIG = (
    "annotation_schemes:\n"
    "  - {annotation_type: rubric, name: review, description: Judge the assistant, rubric: scheduling}\n"
)


def conversations(count: int) -> str:
    """``count`` Potato items cycling through the sample, as JSONL."""
    sample = json.loads((SAMPLE / "conversations.json").read_text())
    lines = []
    for index in range(count):
        item = copy.deepcopy(sample[index % len(sample)])
        item["id"] = f"conv-{index:05d}"
        item["variant"] = "AB"[index % 2]
        node = item["tree"]
        while node:
            if node["role"] == "assistant":
                node["model_name"] = f"model-{'ab'[index % 3 % 2]}"
            node = (node.get("children") or [None])[0]
        lines.append(json.dumps(item))
    return "\n".join(lines)


def run_child(kind: str, count: int, runs: int) -> None:
    os.environ["STATIC_MANIFEST"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    _setup.django_setup(_setup.fresh_database(kind))
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from annotation.projects.services import membership_add, project_create
    from evaluation.models import EvaluationResult
    from evaluation.services import project_evaluate, rubric_save
    from trees.services import dataset_get_or_create, tree_import

    dataset = dataset_get_or_create("bench-scheduling")
    report = tree_import(
        dataset=dataset, source=io.BytesIO(conversations(count).encode()), format_name="potato"
    )
    assert report.committed, report.summary()
    rubric = rubric_save(yaml_text=(SAMPLE / "rubric.yaml").read_text()).rubric
    project = project_create(name="bench-scheduling", dataset=dataset, config_yaml=CONFIG)
    manager = get_user_model().objects.create(username="manager")
    membership_add(project=project, user=manager, role="manager")

    timings = {}
    for label in ("first run", "re-run"):
        started = time.perf_counter()
        summary = project_evaluate(project=project, rubric=rubric)
        timings[label] = time.perf_counter() - started
    stored = EvaluationResult.objects.filter(project=project).count()

    client = Client()
    client.force_login(manager)
    url = f"/projects/{project.name}/rubrics/{rubric.name}/"
    pages = {}
    for label, params in (("report page", {}), ("report by variant", {"group": "metadata.variant"})):
        client.get(url, params)  # warm: sessions, parsed rubric
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            response = client.get(url, params)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.status_code
            assert f"<dd data-count>{count}</dd>".encode() in response.content
        pages[label] = statistics.median(times)
    print(
        json.dumps(
            {
                "database": connection.vendor,
                "items": summary.items,
                "stored": stored,
                "outcomes": dict(summary.outcomes),
                "seconds": timings,
                "pages_ms": pages,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.conversations, args.runs)
        return

    failed = False
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        output = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                kind,
                "--conversations",
                str(args.conversations),
                "--runs",
                str(args.runs),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        items = result["items"]
        print(
            f"{result['database']}: {items:,} conversations, 5 automatic criteria + 1 gate, "
            f"{result['stored']:,} results stored"
        )
        print("    outcomes: " + ", ".join(f"{name} {count:,}" for name, count in result["outcomes"].items()))
        for label, seconds in result["seconds"].items():
            rate = items / seconds
            # The rate is a budget on SQLite; PostgreSQL's figures are printed for comparison.
            budgeted = result["database"] == "sqlite"
            ok = rate >= RATE_BUDGET or not budgeted
            failed |= not ok
            budget = f">= {RATE_BUDGET:,}/s  {'ok' if ok else 'OVER BUDGET'}" if budgeted else "(no budget)"
            print(f"    evaluate, {label:<9} {seconds:6.2f} s  {rate:8,.0f} conversations/s  {budget}")
        for label, median in result["pages_ms"].items():
            ok = median <= PAGE_BUDGET_MS
            failed |= not ok
            verdict = "ok" if ok else "OVER BUDGET"
            print(f"    {label:<18} {median:7.1f} ms median  <= {PAGE_BUDGET_MS} ms  {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
