"""Import and export speed of Open-Assistant's message rows (``--format oasst-messages``).

Generates message rows as the hub publishes them — every field, user ids, dates,
detoxify scores, emojis and labels — for trees like ``trees_io.py``'s (about 12 messages
a tree, depth at most 5), shuffled so that no tree's rows are together; imports them
into an empty database as JSONL and as Parquet, exports each back in its layout,
checks that the rows come back the same, and prints rows/s for each step and the
peak RSS of the process that did the work (one process a layout).

    .venv/bin/python bench/oasst_messages_io.py [--rows 100000] [--databases sqlite,postgres]

Budgets (a 100,000-row file): import + export <= 12 s on SQLite for JSONL and <= 15 s
for Parquet, <= 20 s on PostgreSQL for either; peak RSS <= 900 MB (the whole file's rows
are held to assemble trees from rows in any order).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup
from trees_io import _text

BUDGETS = {"jsonl": {"sqlite": 12.0, "postgresql": 20.0}, "parquet": {"sqlite": 15.0, "postgresql": 20.0}}
RSS_MB = 900
DETOXIFY = (
    "toxicity",
    "severe_toxicity",
    "obscene",
    "identity_attack",
    "insult",
    "threat",
    "sexual_explicit",
)
LABELS = ("spam", "fails_task", "lang_mismatch", "pii", "not_appropriate", "hate_speech", "quality", "humor")


def _score(rng: random.Random) -> float:
    """A score as the hub's are: a float printed in at most 17 digits."""
    return float(f"{rng.random() ** 3:.15g}")


def _row(
    rng: random.Random, message_id: str, parent_id: str | None, tree_id: str, role: str, rank: int | None
) -> dict:
    day = f"2023-0{rng.randint(2, 4)}-{rng.randint(10, 28)}"
    return {
        "message_id": message_id,
        "parent_id": parent_id,
        "user_id": str(uuid.UUID(int=rng.getrandbits(128))),
        "created_date": f"{day}T14:23:50.{rng.randint(0, 999999):06d}+00:00",
        "text": _text(rng, 200, 1600) if role == "assistant" else _text(rng, 20, 300),
        "role": role,
        "lang": "en",
        "review_count": 3,
        "review_result": True,
        "deleted": False,
        "rank": rank,
        "synthetic": False,
        "model_name": None,
        "detoxify": {name: _score(rng) for name in DETOXIFY},
        "message_tree_id": tree_id,
        "tree_state": "ready_for_export",
        "emojis": {"+1": rng.randint(1, 9), "_skip_reply": rng.randint(0, 2)},
        "labels": {name: {"value": _score(rng), "count": 3} for name in LABELS},
    }


def generate(path: Path, rows: int, seed: int = 7) -> int:
    """Write about ``rows`` message rows, shuffled; returns how many."""
    rng = random.Random(seed)
    found: list[dict] = []
    while len(found) < rows:
        tree_id = str(uuid.UUID(int=rng.getrandbits(128)))
        found.append(_row(rng, tree_id, None, tree_id, "prompter", None))
        stack = [(tree_id, "prompter", 0)]
        while stack and len(found) < rows:
            parent, parent_role, depth = stack.pop()
            if depth >= 4 or (depth > 0 and rng.random() > 0.62):
                continue
            role = "assistant" if parent_role == "prompter" else "prompter"
            for rank in range(rng.randint(1, 3)):
                message_id = str(uuid.UUID(int=rng.getrandbits(128)))
                found.append(_row(rng, message_id, parent, tree_id, role, rank))
                stack.append((message_id, role, depth + 1))
    rng.shuffle(found)
    with path.open("w", encoding="utf-8") as out:
        for row in found:
            out.write(json.dumps(row) + "\n")
    return len(found)


def _by_id(rows: list[dict]) -> dict[str, dict]:
    return {row["message_id"]: row for row in rows}


def _parquet_source(path: Path, kind: str) -> Path:
    """The Parquet file a database's run imports, written by its JSONL run."""
    return path.with_name(f"rows-{kind}.parquet")


def _outputs(path: Path, kind: str) -> dict[str, Path]:
    return {layout: path.with_name(f"out-{kind}-{layout}.{layout}") for layout in ("jsonl", "parquet")}


def run_child(kind: str, layout: str, path: Path, rows: int) -> None:
    """Import the rows in ``layout`` into a fresh database and export them back, timed; the
    JSONL run then writes the Parquet file the Parquet run imports (untimed)."""
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection

    from trees.services import dataset_get_or_create, tree_import, trees_export

    parquet_path = _parquet_source(path, kind)
    source = parquet_path if layout == "parquet" else path
    dataset = dataset_get_or_create("bench")
    started = time.perf_counter()
    with source.open("rb") as stream:
        report = tree_import(dataset=dataset, source=stream, format_name="oasst-messages")
    import_seconds = time.perf_counter() - started
    assert report.committed and report.messages == rows, report.summary()
    started = time.perf_counter()
    pieces = trees_export(dataset=dataset, format_name="oasst-messages", options={"layout": layout})
    with _outputs(path, kind)[layout].open("wb") as out:
        for piece in pieces:
            out.write(piece if isinstance(piece, bytes) else piece.encode())
    export_seconds = time.perf_counter() - started
    if layout == "jsonl":
        options = {"layout": "parquet"}
        with parquet_path.open("wb") as out:
            for piece in trees_export(dataset=dataset, format_name="oasst-messages", options=options):
                out.write(piece)
    result = {
        "database": connection.vendor,
        "import_seconds": round(import_seconds, 2),
        "export_seconds": round(export_seconds, 2),
        "peak_rss_mb": round(_setup.peak_rss_mb(), 1),
    }
    print(json.dumps(result))


def same_rows(path: Path, kind: str) -> list[str]:
    """The layouts whose export did not give back the rows imported (checked in the parent
    once every child has run: a child forked from a large parent would count its pages)."""
    import pyarrow.parquet as pq

    outputs = _outputs(path, kind)
    wrong = []
    given = _by_id([json.loads(line) for line in path.read_text().splitlines()])
    if _by_id([json.loads(line) for line in outputs["jsonl"].read_text().splitlines()]) != given:
        wrong.append("jsonl")
    del given
    table = _by_id(pq.read_table(_parquet_source(path, kind)).to_pylist())
    if _by_id(pq.read_table(outputs["parquet"]).to_pylist()) != table:
        wrong.append("parquet")
    return wrong


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--layout", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.layout, Path(args.file), args.count)
        return

    workdir = Path(tempfile.mkdtemp(prefix="branchpoint-oasst-messages-"))
    path = workdir / "rows.jsonl"
    rows = generate(path, args.rows)
    print(f"generated {rows:,} message rows, shuffled, {path.stat().st_size / 1e6:.1f} MB of JSONL")
    failed = False
    checked: list[tuple[str, str]] = []
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        for layout in ("jsonl", "parquet"):
            command = [sys.executable, __file__, "--child", kind, "--layout", layout]
            command += ["--file", str(path), "--count", str(rows)]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            vendor = result["database"]
            total = round(result["import_seconds"] + result["export_seconds"], 2)
            budget = BUDGETS[layout][vendor]
            ok = total <= budget and result["peak_rss_mb"] <= RSS_MB
            failed |= not ok
            print(
                f"{vendor:<10} {layout:<7} import {result['import_seconds']:>6} s "
                f"({round(rows / result['import_seconds']):,} rows/s)   "
                f"export {result['export_seconds']:>6} s "
                f"({round(rows / result['export_seconds']):,} rows/s)   "
                f"total {total} s <= {budget} s   peak RSS {result['peak_rss_mb']} MB <= {RSS_MB} MB  "
                f"{'ok' if ok else 'OVER BUDGET'}"
            )
        checked.append((kind, vendor))
    for kind, vendor in checked:
        wrong = same_rows(path, kind)
        failed |= bool(wrong)
        print(f"{vendor:<10} rows back the same: {'yes' if not wrong else 'NO, in ' + ', '.join(wrong)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
