"""Import and export speed of a CCPE-sized dialogue corpus.

Generates a corpus the size of CCPE (500 dialogues, 12,000 utterances,
14,000 span annotations on nested and overlapping segments, a few segments
with two annotations, speakers that do not always alternate) in the original
release layout, then on an empty database:

- creates a project with the shipped CCPE config (platform/configs/ccpe.yaml)
  over an empty dataset, and imports the corpus into it — the trees and,
  through the trees_imported receiver, each dialogue's reference answer (its spans);
- exports the trees as CCPE (``export_trees --format ccpe``) and in the
  Hugging Face layout, and the reference answers as CCPE
  (``export_annotations --format ccpe --reference-only``), checking each export
  against the generated file.

    .venv/bin/python bench/corpus_io.py [--databases sqlite,postgres]

Budgets (SQLite): import <= 3 s, each export <= 2 s. PostgreSQL's figures
are printed beside them.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

DIALOGUES, UTTERANCES, ANNOTATIONS = 500, 12_000, 14_000
BUDGETS = {"import": 3.0, "export": 2.0}
VOCABULARY = (
    "i really like the movie about a serial killer and it was so good because the actors were great "
    "comedy thrillers action movies with friends on weekends is my favorite genre but i did not like "
    "the ending of that film since it felt slow and boring to me"
)
WORDS = VOCABULARY.split()
KINDS = ("ENTITY_NAME", "ENTITY_PREFERENCE", "ENTITY_DESCRIPTION", "ENTITY_OTHER")
ENTITIES = ("MOVIE_GENRE_OR_CATEGORY", "MOVIE_OR_SERIES", "PERSON", "SOMETHING_ELSE")


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 28))]
    return " ".join(words).capitalize() + rng.choice([".", "?", "!", ""])


def _segment(rng: random.Random, text: str, within: tuple[int, int] | None = None) -> dict:
    """A stretch of whole words of ``text`` (inside ``within`` when given, so segments nest)."""
    bounds = [0] + [i + 1 for i, char in enumerate(text) if char == " "]
    ends = [i for i, char in enumerate(text) if char == " "] + [len(text.rstrip(".?!"))]
    if within is not None:
        bounds = [b for b in bounds if within[0] <= b < within[1]] or [within[0]]
        ends = [e for e in ends if within[0] < e <= within[1]] or [within[1]]
    start = rng.choice(bounds)
    end = rng.choice([e for e in ends if e > start] or [max(ends)])
    return {"startIndex": start, "endIndex": end, "text": text[start:end], "annotations": []}


def generate(path: Path, seed: int = 11) -> None:
    rng = random.Random(seed)
    sizes = [UTTERANCES // DIALOGUES] * DIALOGUES
    for _ in range(DIALOGUES // 2):  # vary the lengths, keeping the total
        a, b = rng.randrange(DIALOGUES), rng.randrange(DIALOGUES)
        shift = rng.randint(0, 6)
        if sizes[a] - shift > 4:
            sizes[a] -= shift
            sizes[b] += shift
    dialogues = []
    utterances = []
    for number, size in enumerate(sizes):
        turns = []
        speaker = "ASSISTANT"
        for index in range(size):
            if rng.random() > 0.08:  # now and then one speaker goes on
                speaker = "USER" if speaker == "ASSISTANT" else "ASSISTANT"
            turn = {"index": index, "speaker": speaker, "text": _sentence(rng)}
            turns.append(turn)
            utterances.append(turn)
        dialogues.append({"conversationId": f"CCPE-{number:05x}", "utterances": turns})
    annotations = 0
    while annotations < ANNOTATIONS:
        turn = rng.choice(utterances)
        segments = turn.setdefault("segments", [])
        outer = segments[0] if segments and rng.random() < 0.5 else None
        within = (outer["startIndex"], outer["endIndex"]) if outer else None
        segment = _segment(rng, turn["text"], within)
        if any(
            s["startIndex"] == segment["startIndex"] and s["endIndex"] == segment["endIndex"]
            for s in segments
        ):
            continue
        # A few segments carry two annotations (different ones, as in CCPE).
        kinds = rng.sample(KINDS, 2 if rng.random() < 0.03 and annotations + 1 < ANNOTATIONS else 1)
        for kind in kinds:
            segment["annotations"].append({"annotationType": kind, "entityType": rng.choice(ENTITIES)})
            annotations += 1
        segments.append(segment)
    path.write_text(json.dumps(dialogues, indent=1))


def run_child(kind: str, path: Path) -> None:
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection

    from annotation.exports import annotations_export
    from annotation.models import Annotation
    from annotation.projects.services import project_create
    from trees.services import dataset_get_or_create, tree_import, trees_export

    expected = json.loads(path.read_text())
    dataset = dataset_get_or_create("ccpe")
    config = (_setup.ROOT / "platform" / "configs" / "ccpe.yaml").read_text()
    project = project_create(name="ccpe", dataset=dataset, config_yaml=config)

    started = time.perf_counter()
    with path.open("rb") as source:
        report = tree_import(dataset=dataset, source=source, format_name="ccpe")
    import_seconds = time.perf_counter() - started
    assert report.committed and report.messages == UTTERANCES, report.summary()
    spans = sum(len(payload["spans"]) for payload in Annotation.objects.values_list("payload", flat=True))
    assert spans == ANNOTATIONS, spans

    def timed(pieces) -> tuple[float, str]:
        started = time.perf_counter()
        text = "".join(pieces)
        return time.perf_counter() - started, text

    export_seconds, text = timed(trees_export(dataset=dataset, format_name="ccpe"))
    assert json.loads(text) == expected, "export_trees --format ccpe differs from the corpus"
    hf_seconds, text = timed(trees_export(dataset=dataset, format_name="ccpe-hf"))
    assert len(text.splitlines()) == DIALOGUES
    reference_seconds, text = timed(
        annotations_export(
            project=project,
            format_name="ccpe",
            reference="only",
            include_gold=True,
            options={"name_annotators": False},
        )
    )
    assert json.loads(text) == expected, "export_annotations --reference-only differs from the corpus"
    print(
        json.dumps(
            {
                "database": connection.vendor,
                "import_seconds": round(import_seconds, 2),
                "export_seconds": round(export_seconds, 2),
                "export_hf_seconds": round(hf_seconds, 2),
                "export_reference_seconds": round(reference_seconds, 2),
                "peak_rss_mb": round(_setup.peak_rss_mb(), 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, Path(args.file))
        return

    path = Path(tempfile.mkdtemp(prefix="branchpoint-corpus-io-")) / "ccpe.json"
    generate(path)
    size_mb = path.stat().st_size / 1e6
    print(
        f"generated {DIALOGUES:,} dialogues, {UTTERANCES:,} utterances, "
        f"{ANNOTATIONS:,} span annotations, {size_mb:.1f} MB"
    )
    failed = False
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        output = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--file", str(path)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        vendor = result["database"]
        print(f"{vendor:<10} peak RSS {result['peak_rss_mb']} MB")
        checks = [
            ("import (trees and reference spans)", result["import_seconds"], BUDGETS["import"]),
            ("export_trees --format ccpe", result["export_seconds"], BUDGETS["export"]),
            ("export_trees --format ccpe-hf", result["export_hf_seconds"], BUDGETS["export"]),
            (
                "export_annotations ccpe --reference-only",
                result["export_reference_seconds"],
                BUDGETS["export"],
            ),
        ]
        for name, seconds, budget in checks:
            # The budgets are SQLite's, the embedded default; PostgreSQL's figures are for comparison.
            ok = seconds <= budget
            if vendor == "sqlite":
                failed |= not ok
                verdict = "ok" if ok else "OVER BUDGET"
            else:
                verdict = "(budget is SQLite's)"
            print(f"    {name:<42} {seconds:>6.2f} s <= {budget:.0f} s  {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
