"""Import and export speed of conversation trees.

Generates a synthetic Open-Assistant export (10,000 trees, about 120,000
messages, depth at most 5, 1-3 replies per node, realistic text lengths),
imports it into an empty database, exports it, and prints messages/s for each
step and the peak RSS of the process that did the work.

    .venv/bin/python bench/trees_io.py [--trees 10000] [--databases sqlite,postgres]

Budgets: import >= 40,000 messages/s on SQLite and >= 25,000 on PostgreSQL;
export >= 60,000 messages/s; peak RSS <= 400 MB.
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

BUDGETS = {"import": {"sqlite": 40_000, "postgresql": 25_000}, "export": 60_000, "rss_mb": 400}
WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "you",
    "that",
    "it",
    "for",
    "on",
    "with",
    "as",
    "are",
    "this",
    "be",
    "your",
    "can",
    "or",
    "an",
    "have",
    "from",
    "by",
    "not",
    "will",
    "use",
    "one",
    "what",
    "all",
    "if",
    "more",
    "about",
    "which",
    "when",
    "there",
    "time",
    "so",
    "some",
    "other",
    "these",
    "would",
    "make",
    "like",
    "into",
    "them",
    "only",
    "over",
    "new",
    "also",
    "any",
    "know",
    "just",
    "should",
    "could",
    "because",
    "most",
    "data",
    "model",
    "question",
    "answer",
    "example",
    "python",
    "function",
    "value",
    "first",
    "need",
    "way",
    "people",
    "help",
    "find",
    "best",
    "plan",
    "write",
    "code",
    "think",
]


def _text(rng: random.Random, low: int, high: int) -> str:
    target = rng.randint(low, high)
    words: list[str] = []
    length = 0
    while length < target:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words).capitalize() + "."


def generate(path: Path, trees: int, seed: int = 7) -> int:
    """Write the synthetic export; returns the number of messages."""
    rng = random.Random(seed)
    total = 0
    with path.open("w", encoding="utf-8") as out:
        for _ in range(trees):
            tree_id = str(uuid.UUID(int=rng.getrandbits(128)))
            root = {
                "message_id": tree_id,
                "text": _text(rng, 40, 400),
                "role": "prompter",
                "lang": "en",
                "review_count": 3,
                "review_result": True,
                "deleted": False,
                "synthetic": False,
                "emojis": {"+1": rng.randint(0, 9)},
                "replies": [],
            }
            count = 1
            stack = [(root, 0)]
            while stack:
                node, depth = stack.pop()
                # Up to five levels; replies thin out as conversations deepen.
                if depth >= 4 or (depth > 0 and rng.random() > 0.62):
                    continue
                role = "assistant" if node["role"] == "prompter" else "prompter"
                for rank in range(rng.randint(1, 3)):
                    child = {
                        "message_id": str(uuid.UUID(int=rng.getrandbits(128))),
                        "parent_id": node["message_id"],
                        "text": _text(rng, 200, 1600) if role == "assistant" else _text(rng, 20, 300),
                        "role": role,
                        "lang": "en",
                        "review_count": 3,
                        "review_result": True,
                        "deleted": False,
                        "rank": rank,
                        "synthetic": False,
                        "replies": [],
                    }
                    node["replies"].append(child)
                    stack.append((child, depth + 1))
                    count += 1
            total += count
            out.write(
                json.dumps({"message_tree_id": tree_id, "tree_state": "ready_for_export", "prompt": root})
            )
            out.write("\n")
    return total


def run_child(kind: str, path: Path, messages: int) -> None:
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection

    from trees.services import dataset_get_or_create, tree_import, trees_export

    dataset = dataset_get_or_create("bench")
    started = time.perf_counter()
    with path.open("rb") as source:
        report = tree_import(dataset=dataset, source=source, format_name="oasst")
    import_seconds = time.perf_counter() - started
    assert report.committed and report.messages == messages, report.summary()

    started = time.perf_counter()
    written = 0
    with tempfile.TemporaryFile("w", encoding="utf-8") as out:
        for piece in trees_export(dataset=dataset, format_name="oasst"):
            out.write(piece)
            written += 1
    export_seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "database": connection.vendor,
                "messages": messages,
                "import_seconds": round(import_seconds, 2),
                "import_per_second": round(messages / import_seconds),
                "export_seconds": round(export_seconds, 2),
                "export_per_second": round(messages / export_seconds),
                "peak_rss_mb": round(_setup.peak_rss_mb(), 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trees", type=int, default=10_000)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--messages", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, Path(args.file), args.messages)
        return

    workdir = Path(tempfile.mkdtemp(prefix="branchpoint-trees-io-"))
    path = workdir / "trees.jsonl"
    messages = generate(path, args.trees)
    size_mb = path.stat().st_size / 1e6
    print(f"generated {args.trees:,} trees, {messages:,} messages, {size_mb:.1f} MB")
    failed = False
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        output = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--file", str(path), "--messages", str(messages)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        vendor = result["database"]
        checks = [
            ("import", result["import_per_second"], BUDGETS["import"][vendor], ">="),
            ("export", result["export_per_second"], BUDGETS["export"], ">="),
            ("peak RSS MB", result["peak_rss_mb"], BUDGETS["rss_mb"], "<="),
        ]
        print(
            f"{vendor:<10} import {result['import_per_second']:>8,} msg/s ({result['import_seconds']} s)   "
            f"export {result['export_per_second']:>8,} msg/s ({result['export_seconds']} s)   "
            f"peak RSS {result['peak_rss_mb']} MB"
        )
        for name, value, budget, op in checks:
            ok = value >= budget if op == ">=" else value <= budget
            failed |= not ok
            print(f"    {name:<12} {value:>10,} {op} {budget:,}  {'ok' if ok else 'OVER BUDGET'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
