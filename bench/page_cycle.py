"""The annotator's page cycle over HTTP, as a browser makes it, and its CPU per cycle.

A cycle is what an annotator's browser asks for: ``POST /projects/{name}/`` (the project
page's button: lease the next item; it answers with the item's annotate page, whose script
then shows the item's address), and a save from the page's script (``PUT .../draft``, or with
``--save submit`` the submission, after which the next cycle leases a fresh item). Were the
answer a redirect, the cycle follows it (``GET`` the page, reported as its own step).
``--annotators`` threads, each signed in with its own session cookie and CSRF token, run
cycles against gunicorn (platform/gunicorn.conf.py, started by the script) on a fresh
database with a project of ``--trees`` small trees (``annotations_per_item: 3``, random order).

It prints cycles/s, p50/p95 per request, the first request each fresh worker answered (the
warm-up before forking: config/warm.py), and the CPU per cycle: gunicorn's processes (from
/proc), and the PostgreSQL backends serving this database (from /proc, by the pids
``pg_stat_activity`` lists for it; the server must run on this host). The machine's load
average is printed with them: the figures are only comparable on a quiet machine.

CPU figures depend on the machine: the script times ``sum(range(10**6))`` in this Python
(as ``python -m timeit`` does, the best of five) before and after the run, and prints the CPU
per cycle scaled to a reference machine on which that takes ``REFERENCE_MS`` (a typical
laptop: 8 to 10 ms). The scaled figure is an estimate, labelled as such; the budget is judged
on the figure measured here.

    .venv/bin/python bench/page_cycle.py [--seconds 20] [--annotators 16] [--trees 1000]
                                         [--save draft|submit] [--workers N] [--no-warm]
                                         [--databases postgres]

Budget (PostgreSQL): <= 9 ms of CPU per cycle, web and database together; no errors.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup
from api_load import cpu_seconds, free_port, percentile, wait_until_up

BUDGET_CPU_MS = 9.0
# ``sum(range(10**6))`` on the reference machine the scaled figure is for, in ms.
REFERENCE_MS = 9.0
PROJECT = "cycle"
CONFIG = """
annotation_task_name: Page cycle
assignment: {annotations_per_item: 3, order: random}
annotation_schemes:
  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}
  - {annotation_type: likert, name: helpful, description: Helpful, size: 5}
"""
CSRF = "benchcsrfsecret0123456789abcdefg"  # a 32-character secret, sent as cookie and header
PAGE_DATA = re.compile(rb'<script id="annotate-data" type="application/json">(.*?)</script>', re.S)


def prepare(database_url: str, trees: int, annotators: int, out: Path) -> None:
    """Migrate, import the trees, make the project and sign its annotators in (their cookies)."""
    import io

    _setup.django_setup(database_url)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from annotation.projects.services import membership_add, project_create
    from trees.services import dataset_get_or_create, tree_import

    dataset = dataset_get_or_create("cycle")
    lines = "\n".join(
        json.dumps(
            {
                "id": f"item-{index:06d}",
                "tree": {
                    "id": "root",
                    "role": "user",
                    "content": f"Question {index}: how do I reset my password?",
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
    cookies = []
    for number in range(annotators):
        user = get_user_model().objects.create_user(f"annotator{number:02d}", password=None)
        membership_add(project=project, user=user, role="annotator")
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies[settings.SESSION_COOKIE_NAME].value)
    # Statistics as autovacuum leaves them within a minute of the import, as bench/api_load.py
    # has them: the trees, messages and items the import wrote, and none of the tables that are
    # still empty or nearly (assignments, answers, the log's entries of the run). Analysed
    # empty, every estimate on those clamps at one row: the plans the workers prepare in the
    # run's first seconds read them whole, and keep doing so as each cycle adds to them (with
    # ``--save submit``, about 0.5 ms of PostgreSQL's CPU a cycle by 25 s: a state no real
    # install is in, whose tables are either never analysed yet or analysed with their rows).
    from annotation.models import ProjectItem
    from trees.models import ConversationTree, Message

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for model in (ConversationTree, Message, ProjectItem):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    out.write_text(json.dumps(cookies))


class Annotator(threading.Thread):
    """One annotator's browser: cycles over one keep-alive connection until ``deadline``."""

    def __init__(self, port: int, session: str, deadline: float, save: str, measured_from: float) -> None:
        super().__init__(daemon=True)
        self.port, self.save, self.deadline, self.measured_from = port, save, deadline, measured_from
        self.cookie = f"sessionid={session}; csrftoken={CSRF}"
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self.cycles = 0
        self.first_ms: float | None = None

    def request(
        self, connection: http.client.HTTPConnection, step: str, method: str, path: str, body: Any = None
    ):
        headers = {"Cookie": self.cookie, "X-CSRFToken": CSRF, "Referer": f"http://127.0.0.1:{self.port}/"}
        data = None
        if body is not None:
            data = json.dumps(body) if step != "next" else body
            headers["Content-Type"] = (
                "application/json" if step != "next" else "application/x-www-form-urlencoded"
            )
        started = time.perf_counter()
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        content = response.read()
        elapsed = (time.perf_counter() - started) * 1000
        if self.first_ms is None:
            self.first_ms = elapsed
        if time.perf_counter() >= self.measured_from:
            self.latencies[step].append(elapsed)
        return response, content

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while time.perf_counter() < self.deadline:
            try:
                response, content = self.request(
                    connection, "next", "POST", f"/projects/{PROJECT}/", f"csrfmiddlewaretoken={CSRF}"
                )
                if response.status == 302:
                    response, content = self.request(
                        connection, "page", "GET", response.getheader("Location")
                    )
                found = PAGE_DATA.search(content)
                if response.status != 200 or found is None:
                    self.errors[f"page {response.status}"] += 1
                    continue
                data = json.loads(found.group(1))
                version = data["item"]["assignment"]["version"]
                answers = {"verdict": {"label": "good"}, "helpful": {"rating": 4}}
                method, url = (
                    ("PUT", data["urls"]["draft"])
                    if self.save == "draft"
                    else ("POST", data["urls"]["submit"])
                )
                response, content = self.request(
                    connection, "save", method, url, {"annotations": answers, "version": version}
                )
                if response.status != 200:
                    self.errors[f"save {response.status} {content[:80]!r}"] += 1
                    continue
                if time.perf_counter() >= self.measured_from:
                    self.cycles += 1
            except (OSError, http.client.HTTPException) as error:
                self.errors[f"connection: {error!r}"[:100]] += 1
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)


def machine_speed_ms() -> float:
    """``sum(range(10**6))`` in ms on this machine now: the best of five, as ``python -m timeit``."""
    import timeit

    return min(timeit.repeat("sum(range(10**6))", number=10, repeat=5)) / 10 * 1000


def backend_cpu(database_url: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend connected to this database (from /proc)."""
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        pids = [
            row[0]
            for row in connection.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [name])
        ]
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return used


def run(kind: str, args: argparse.Namespace) -> bool:
    speed_before = machine_speed_ms()
    database_url = _setup.fresh_database(kind)
    work = Path(tempfile.mkdtemp(prefix="branchpoint-page-cycle-"))
    env = dict(os.environ, DATABASE_URL=database_url, SECRET_KEY="benchmark-only")
    me = str(Path(__file__).resolve())
    subprocess.run(
        [
            sys.executable,
            me,
            "--prepare",
            database_url,
            str(work / "cookies.json"),
            str(args.trees),
            str(args.annotators),
        ],
        check=True,
        env=env,
    )
    sessions = json.loads((work / "cookies.json").read_text())
    port = free_port()
    high = "1000000/min"
    server_env = env | {
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_LOG_LEVEL": "warning",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "API_THROTTLE_USER": high,
        "API_THROTTLE_LOOP": high,
        "LOG_LEVEL": "WARNING",
        "STATIC_MANIFEST": "0",
    }
    if args.workers:
        server_env["GUNICORN_WORKERS"] = str(args.workers)
    if args.no_warm:
        server_env["GUNICORN_WARM"] = "0"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log = (work / "gunicorn.log").open("w")
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
    warm_up = min(5.0, args.seconds / 4)
    try:
        wait_until_up(port, server)
        began = time.perf_counter()
        measured_from = began + warm_up
        deadline = measured_from + args.seconds
        annotators = [Annotator(port, session, deadline, args.save, measured_from) for session in sessions]
        for annotator in annotators:
            annotator.start()
        time.sleep(max(0.0, measured_from - time.perf_counter()))
        web_before = cpu_seconds(server.pid).get("gunicorn", 0.0)
        database_before = backend_cpu(database_url) if kind == "postgres" else {}
        for annotator in annotators:
            annotator.join()
        elapsed = time.perf_counter() - measured_from
        web = cpu_seconds(server.pid).get("gunicorn", 0.0) - web_before
        database_after = backend_cpu(database_url) if kind == "postgres" else {}
        database = sum(seconds - database_before.get(pid, 0.0) for pid, seconds in database_after.items())
        load = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()

    speed = (speed_before + machine_speed_ms()) / 2
    cycles = sum(annotator.cycles for annotator in annotators)
    errors: Counter[str] = sum((annotator.errors for annotator in annotators), Counter())
    print(
        f"\n{kind}: {args.trees:,} trees, {args.annotators} annotators, save = {args.save}, "
        f"{args.seconds:.0f} s measured after {warm_up:.0f} s "
        f"(load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f})"
    )
    print(f"  {cycles:,} cycles: {cycles / elapsed:,.1f} cycles/s")
    for step in ("next", "page", "save"):
        times = [value for annotator in annotators for value in annotator.latencies[step]]
        if times:
            print(
                f"  {step:<5} p50 {statistics.median(times):7.1f} ms   p95 {percentile(times, 0.95):7.1f} ms"
            )
    firsts = [annotator.first_ms for annotator in annotators if annotator.first_ms is not None]
    if firsts:
        print(
            f"  first requests, all at once on fresh workers: p50 {statistics.median(firsts):.0f} ms, "
            f"max {max(firsts):.0f} ms"
        )
    web_ms, database_ms = (seconds / max(cycles, 1) * 1000 for seconds in (web, database))
    per_cycle = web_ms + database_ms
    print(
        f"  CPU per cycle: web {web_ms:.2f} ms, database {database_ms:.2f} ms, "
        f"together {per_cycle:.2f} ms (budget <= {BUDGET_CPU_MS} ms)"
    )
    print(
        f"  machine speed: sum(range(10**6)) in {speed:.1f} ms here (mean of before and after); "
        f"scaled to a reference machine where it takes {REFERENCE_MS:.0f} ms, an estimate: "
        f"{per_cycle * REFERENCE_MS / speed:.2f} ms per cycle"
    )
    print(f"  errors: {sum(errors.values())}")
    for message, count in errors.most_common(5):
        print(f"    {count} times: {message}")
    ok = not errors and cycles > 0 and (kind != "postgres" or per_cycle <= BUDGET_CPU_MS)
    print(f"  {'within budget' if ok else 'OVER BUDGET' if not errors else 'ERRORS'}")
    return ok


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--prepare":
        _, _, url, out, trees, annotators = sys.argv
        prepare(url, int(trees), int(annotators), Path(out))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--annotators", type=int, default=16)
    parser.add_argument("--trees", type=int, default=1000)
    parser.add_argument("--save", choices=("draft", "submit"), default="draft")
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (default: its config's)")
    parser.add_argument(
        "--no-warm", action="store_true", help="gunicorn without its warm-up (GUNICORN_WARM=0)"
    )
    parser.add_argument("--databases", default="postgres")
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
