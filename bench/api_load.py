"""The annotator's loop over HTTP under load: gunicorn (platform/gunicorn.conf.py) serving
16 concurrent annotators who lease an item and submit it, again and again, for 30 s.

For each database (PostgreSQL when reachable, then SQLite) the script makes a fresh
database with a project of 5,000 trees (``assignment: {annotations_per_item: 3}``) and 16 annotators
with API tokens, starts gunicorn on a free loopback port, and runs one client thread per
annotator (its own keep-alive connection) doing ``POST items/next`` then ``POST
items/{tree}/submit`` with the version it was given. It prints cycles per second,
request latency percentiles, errors, and checks afterwards in the database that no item
has more submissions than its overlap and no annotator was given one item twice.

    .venv/bin/python bench/api_load.py [--seconds 30] [--annotators 16] [--trees 5000]
                                       [--databases postgres,sqlite]

Budgets (on PostgreSQL; SQLite's figures are printed against them for information): ≥ 150
lease+submit cycles/s, p95 ≤ 200 ms, zero errors, zero overshoot. Exits 1 when one is missed.
Throttling stays on, with rates high enough not to refuse the load, so its cost is in the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

BUDGET_CYCLES_PER_SECOND = 150
BUDGET_P95_MS = 200
OVERLAP = 3
PROJECT = "load"
CONFIG = f"""
annotation_task_name: Load
assignment:
  annotations_per_item: {OVERLAP}
  order: random
annotation_schemes:
  - annotation_type: radio
    name: verdict
    description: Verdict
    labels: [good, bad]
  - annotation_type: likert
    name: helpful
    description: Helpful
    size: 5
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- set-up and checks, in a child process per database ------------------------------------


def prepare(database_url: str, trees: int, annotators: int, out: Path) -> None:
    """Migrate, import ``trees`` small trees, make the project and its annotators' tokens."""
    import io

    _setup.django_setup(database_url)
    from django.contrib.auth import get_user_model

    from annotation.api.tokens import token_create
    from annotation.projects.services import membership_add, project_create
    from trees.services import dataset_get_or_create, tree_import

    dataset = dataset_get_or_create("load")
    lines = "\n".join(
        json.dumps(
            {
                "id": f"item-{index:05d}",
                "tree": {
                    "id": "root",
                    "role": "user",
                    "content": f"Question number {index}: how do I reset my password?",
                    "children": [
                        {"id": "a", "role": "assistant", "content": "Open the settings page and ..."},
                        {"id": "b", "role": "assistant", "content": "Ask your administrator to ..."},
                    ],
                },
            }
        )
        for index in range(trees)
    )
    report = tree_import(dataset=dataset, source=io.BytesIO(lines.encode()), format_name="potato")
    assert report.committed, report.summary()
    project = project_create(name=PROJECT, dataset=dataset, config_yaml=CONFIG)
    users = get_user_model()
    tokens = []
    for number in range(annotators):
        user = users.objects.create_user(f"annotator{number:02d}", password=None)
        membership_add(project=project, user=user, role="annotator")
        tokens.append(token_create(user=user, name="load").secret)
    # Statistics as autovacuum leaves them within a minute of the import: it analyses a table
    # once 50 rows (and a tenth) changed, so the trees, messages and items the import wrote,
    # and none of the tables that are still empty or nearly (assignments, answers, members,
    # tokens). Analysing those too would record them as empty: every estimate on them then
    # clamps at one row, and PostgreSQL may read an annotator's whole history through an
    # index on the user where the unique one finds the row (as no real install has it).
    from django.db import connection

    from annotation.models import ProjectItem
    from trees.models import ConversationTree, Message

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (ConversationTree, Message, ProjectItem):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    out.write_text(json.dumps(tokens))


def check(database_url: str, out: Path) -> None:
    """Overshoot and repeats, as the database has them."""
    _setup.django_setup(database_url, migrate=False)
    from django.db.models import Count

    from annotation.models import Annotation, Assignment, ProjectItem

    overshoot = ProjectItem.objects.filter(project__name=PROJECT, submitted_count__gt=OVERLAP).count()
    submitted_by_tree = (
        Assignment.objects.filter(project__name=PROJECT, status=Assignment.Status.SUBMITTED)
        .values("tree")
        .annotate(n=Count("id"))
        .filter(n__gt=OVERLAP)
        .count()
    )
    repeats = (
        Annotation.objects.filter(project__name=PROJECT)
        .values("tree", "user", "scheme")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    submitted = Assignment.objects.filter(project__name=PROJECT, status=Assignment.Status.SUBMITTED).count()
    out.write_text(
        json.dumps(
            {
                "overshoot": overshoot + submitted_by_tree,
                "repeats": repeats,
                "submitted": submitted,
            }
        )
    )


# -- the load ------------------------------------------------------------------------------


class Annotator(threading.Thread):
    """One annotator's loop over one keep-alive connection, until ``deadline``."""

    def __init__(self, port: int, token: str, deadline: float) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.deadline = deadline
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.cycles = 0
        self.trees: list[int] = []
        self.exhausted = False

    def request(self, connection: http.client.HTTPConnection, path: str, body: Any) -> tuple[int, Any]:
        started = time.perf_counter()
        connection.request("POST", path, body=json.dumps(body), headers=self.headers)
        response = connection.getresponse()
        content = response.read()
        self.latencies.append(time.perf_counter() - started)
        return response.status, (json.loads(content) if content.startswith(b"{") else content[:200])

    def run(self) -> None:
        base = f"/api/v1/projects/{PROJECT}/items"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        while time.perf_counter() < self.deadline:
            try:
                status, item = self.request(connection, f"{base}/next", {})
                if status == 404 and isinstance(item, dict) and item.get("code") == "no_items":
                    self.exhausted = True
                    return
                if status != 200:
                    self.errors[f"next {status} {str(item)[:80]}"] += 1
                    continue
                tree_id = item["tree"]["id"]
                self.trees.append(tree_id)
                answers = {"verdict": {"label": "good"}, "helpful": {"rating": 1 + tree_id % 5}}
                status, body = self.request(
                    connection,
                    f"{base}/{tree_id}/submit",
                    {"annotations": answers, "version": item["assignment"]["version"]},
                )
                if status != 200:
                    self.errors[f"submit {status} {str(body)[:80]}"] += 1
                    continue
                self.cycles += 1
            except (OSError, http.client.HTTPException) as error:
                self.errors[f"connection: {error!r}"[:100]] += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)


def wait_until_up(port: int, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/api/schema/")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


def cpu_seconds(server_pid: int) -> dict[str, float]:
    """CPU time so far (user + system, from /proc) of gunicorn (its master and workers) and of
    the PostgreSQL server's processes on this host, when it runs here: with the client's own,
    where the two shared cores went. Empty where /proc is not there."""
    totals = {"gunicorn": 0.0, "postgres": 0.0}
    try:
        entries = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return {}
    for entry in entries:
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        used = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if int(entry) == server_pid or int(fields[1]) == server_pid:  # the master, or a worker
            totals["gunicorn"] += used
        elif name.startswith("postgres"):
            totals["postgres"] += used
    return totals


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(kind: str, args: argparse.Namespace) -> bool:
    database_url = _setup.fresh_database(kind)
    work = Path(tempfile.mkdtemp(prefix="branchpoint-api-load-"))
    env = dict(os.environ, DATABASE_URL=database_url, SECRET_KEY="benchmark-only")
    me = str(Path(__file__).resolve())
    started = time.perf_counter()
    counts = [str(args.trees), str(args.annotators)]
    subprocess.run(
        [sys.executable, me, "--prepare", database_url, str(work / "tokens.json"), *counts],
        check=True,
        env=env,
    )
    tokens = json.loads((work / "tokens.json").read_text())
    print(
        f"\n{kind}: {args.trees:,} trees, {args.annotators} annotators "
        f"ready in {time.perf_counter() - started:.1f}s"
    )

    port = free_port()
    high = "1000000/min"  # on, so that its statement is paid, but never refusing this load
    server_env = env | {
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_LOG_LEVEL": "warning",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "API_THROTTLE_USER": high,
        "API_THROTTLE_LOOP": high,
        "LOG_LEVEL": "WARNING",
        "STATIC_MANIFEST": "0",
    }
    server_env.update({k: v for k, v in os.environ.items() if k.startswith(("DATABASE_", "GUNICORN_"))})
    server_env["DATABASE_URL"] = database_url
    if args.workers:
        server_env["GUNICORN_WORKERS"] = str(args.workers)
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log = (work / "gunicorn.log").open("w")  # closed below, once gunicorn has stopped
    server = subprocess.Popen(
        [
            str(gunicorn),
            "-c",
            str(_setup.ROOT / "platform" / "gunicorn.conf.py"),
            "--access-logfile",
            "/dev/null",
            "config.wsgi",
        ],
        cwd=_setup.ROOT,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_until_up(port, server)
        deadline = time.perf_counter() + args.seconds
        annotators = [Annotator(port, token, deadline) for token in tokens]
        cpu_before = cpu_seconds(server.pid)
        began, client_cpu = time.perf_counter(), time.process_time()
        for annotator in annotators:
            annotator.start()
        for annotator in annotators:
            annotator.join()
        elapsed = time.perf_counter() - began
        client_cpu = time.process_time() - client_cpu
        cpu_after = cpu_seconds(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()

    subprocess.run(
        [sys.executable, me, "--check", database_url, str(work / "check.json")], check=True, env=env
    )
    stored = json.loads((work / "check.json").read_text())

    latencies = [value for annotator in annotators for value in annotator.latencies]
    cycles = sum(annotator.cycles for annotator in annotators)
    errors: Counter[str] = sum((annotator.errors for annotator in annotators), Counter())
    given_twice = sum(len(a.trees) - len(set(a.trees)) for a in annotators)
    rate = cycles / elapsed
    p50, p95, p99 = (percentile(latencies, share) * 1000 for share in (0.50, 0.95, 0.99))
    print(
        f"  {cycles:,} lease+submit cycles in {elapsed:.1f}s: {rate:,.1f} cycles/s "
        f"(budget ≥ {BUDGET_CYCLES_PER_SECOND})"
    )
    print(
        f"  latency per request over {len(latencies):,}: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
        f"(budget ≤ {BUDGET_P95_MS}), p99 {p99:.1f} ms, mean {statistics.fmean(latencies) * 1000:.1f} ms"
    )
    used = {group: cpu_after[group] - cpu_before[group] for group in cpu_before}
    used = {group: seconds for group, seconds in used.items() if seconds > 0}  # no postgres on SQLite
    used["client"] = client_cpu
    per_cycle = ", ".join(f"{group} {seconds / max(cycles, 1) * 1000:.2f}" for group, seconds in used.items())
    print(
        f"  CPU per cycle, ms: {per_cycle} ({os.cpu_count()} cores shared by all three; "
        "postgres counts every database of the server on this host)"
    )
    print(f"  errors: {sum(errors.values())}")
    for message, count in errors.most_common(5):
        print(f"    {count} times: {message}")
    if errors:
        print(f"  the server's log: {work / 'gunicorn.log'}")
    print(
        f"  submissions stored: {stored['submitted']:,}; items over their overlap of {OVERLAP}: "
        f"{stored['overshoot']}; an item given twice to one annotator: {given_twice} (client), "
        f"{stored['repeats']} (database)"
    )
    if any(annotator.exhausted for annotator in annotators):
        print("  note: the project ran out of items before the time was up")
    ok = (
        rate >= BUDGET_CYCLES_PER_SECOND
        and p95 <= BUDGET_P95_MS
        and not errors
        and stored["overshoot"] == 0
        and stored["repeats"] == 0
        and given_twice == 0
        and stored["submitted"] == cycles
    )
    if stored["submitted"] != cycles:
        print(f"  MISMATCH: {cycles} cycles seen by the clients, {stored['submitted']} submissions stored")
    if kind == "sqlite":
        # One writer at a time: SQLite is the embedded default, not the database for a team.
        print(f"  {'within budget' if ok else 'below the budgets (they are for PostgreSQL)'}")
        return True
    print(f"  {'within budget' if ok else 'OVER BUDGET'}")
    return ok


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--prepare":
        _, _, url, out, trees, annotators = sys.argv
        prepare(url, int(trees), int(annotators), Path(out))
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        check(sys.argv[2], Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--annotators", type=int, default=16)
    parser.add_argument("--trees", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (default: its config's)")
    parser.add_argument("--databases", default="postgres,sqlite")
    args = parser.parse_args()
    results = []
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("\npostgres: not reachable, skipped")
            continue
        results.append(run(kind, args))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
