"""Speed of agreement: 10,000 units x 5 annotators, one scheme at a time.

Times the pure measures of ``evaluation.agreement`` on generated reliability
data, complete (every annotator answers every unit, the most work): alpha
for each scheme's distance (nominal labels, ordinal likert, interval slider
values, set distance on multiselect labels and on selected paths), Fleiss'
kappa, Cohen's kappa for the 10 pairs (unweighted and quadratic), percent
agreement, span F1 over the 10 pairs, Kendall's W over sibling rankings, and
branch-comparison judgements turned into units then alpha; plus a radio
scheme's whole panel (alpha, Fleiss, Cohen's pairs and percent agreement
together).

    .venv/bin/python bench/agreement.py [--units 10000] [--coders 5] [--runs 5]

The ``project`` section builds a project of that many items answered by
that many annotators under one scheme (``--scheme``: a tree_annotation with
node ratings, a selected path and branch comparisons by default; or likert,
radio), stored with ``bulk_create``, and times, on SQLite and on PostgreSQL
when reachable (``BENCH_POSTGRES_URL``, see bench/_setup.py), each in a
child process: reading and measuring every answer (``agreement_compute``),
the agreement page cold (the judgements changed: recomputed and kept) and
warm (the kept snapshot), and the API endpoint warm.

    .venv/bin/python bench/agreement.py --sections project [--scheme tree|likert|radio]
        [--databases sqlite,postgres]

Budgets: each pure line and the project's computation ≤ 2 s, the warm page
and endpoint < 1 s (medians of the runs); the cold page is computation plus
page, printed without a budget of its own. Exits 1 when one is over.

Each part of the benchmark is a function in ``SECTIONS`` returning its
``Case``s.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

from evaluation.agreement import (
    PairJudgement,
    Span,
    cohen_kappa_pairs,
    comparison_units,
    fleiss_kappa,
    krippendorff_alpha,
    mirror_from_order,
    path_node_set,
    percent_agreement,
    ranking_agreement,
    span_agreement,
)

BUDGET_S = 2.0
PAGE_BUDGET_S = 1.0
LABELS = ["Better", "Same", "Worse"]
LIKERT = [1, 2, 3, 4, 5]
MULTISELECT = ["clear", "correct", "polite", "concise", "safe", "helpful", "creative", "on-topic"]


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[], object] | None = None
    budget_s: float | None = BUDGET_S  # None: printed for the record
    seconds: float | None = None  # measured elsewhere (in a child process) instead of by ``run``


def generated(units: int, coders: int, seed: int = 2011) -> dict[str, dict]:
    """Reliability data per kind of value; annotators agree with a hidden truth most of the time."""
    rng = random.Random(seed)
    names = [f"annotator-{index}" for index in range(coders)]

    def answers(truth, noise):
        return {name: truth if rng.random() < 0.7 else noise() for name in names}

    def some_labels():
        return frozenset(rng.sample(MULTISELECT, rng.randint(0, 4)))

    def some_path(item):
        return path_node_set(item, ["root", *rng.choices("abcdef", k=3)])

    data: dict[str, dict] = {"labels": {}, "likert": {}, "slider": {}, "multiselect": {}, "paths": {}}
    data |= {"spans": {}, "rankings": {}}
    for unit in range(units):
        item = f"item-{unit}"
        data["labels"][item] = answers(rng.choice(LABELS), lambda: rng.choice(LABELS))
        data["likert"][item] = answers(rng.choice(LIKERT), lambda: rng.choice(LIKERT))
        data["slider"][item] = answers(round(rng.uniform(0, 100), 1), lambda: round(rng.uniform(0, 100), 1))
        data["multiselect"][item] = answers(frozenset(rng.sample(MULTISELECT, 3)), some_labels)
        path = ["root", rng.choice("ab"), rng.choice("cd"), rng.choice("ef")]
        data["paths"][item] = answers(path_node_set(item, path), partial(some_path, item))
        spans = [Span(f"n{node}", 10 * node, 10 * node + 8, rng.choice(LABELS)) for node in range(3)]
        data["spans"][item] = {
            name: [span if rng.random() < 0.7 else span._replace(end=span.end - 2) for span in spans]
            for name in names
        }
        data["rankings"][(item, "root")] = {name: rng.sample(["r1", "r2", "r3"], 3) for name in names}
    mirror = mirror_from_order(LABELS)
    data["judgements"] = [
        PairJudgement(item, "root", name, *(("r1", "r2") if rng.random() < 0.5 else ("r2", "r1")), label)
        for item, labelled in data["labels"].items()
        for name, label in labelled.items()
    ]
    data["mirror"] = mirror
    return data


def pure(args: argparse.Namespace) -> list[Case]:
    data = generated(args.units, args.coders)

    def radio_panel() -> None:
        krippendorff_alpha(data["labels"], "nominal")
        fleiss_kappa(data["labels"])
        cohen_kappa_pairs(data["labels"])
        percent_agreement(data["labels"])

    return [
        Case("alpha nominal (radio labels)", lambda: krippendorff_alpha(data["labels"], "nominal")),
        Case("alpha ordinal (likert 1-5)", lambda: krippendorff_alpha(data["likert"], "ordinal")),
        Case("alpha interval (slider, floats)", lambda: krippendorff_alpha(data["slider"], "interval")),
        Case("alpha set (multiselect of 8)", lambda: krippendorff_alpha(data["multiselect"], "set")),
        Case("alpha set (selected paths)", lambda: krippendorff_alpha(data["paths"], "set")),
        Case("Fleiss' kappa (labels)", lambda: fleiss_kappa(data["labels"])),
        Case("Cohen's kappa, every pair", lambda: cohen_kappa_pairs(data["labels"])),
        Case(
            "Cohen's kappa quadratic, every pair",
            lambda: cohen_kappa_pairs(data["likert"], weights="quadratic", categories=LIKERT),
        ),
        Case("percent agreement (labels)", lambda: percent_agreement(data["labels"])),
        Case("span F1 overlap, every pair", lambda: span_agreement(data["spans"], match="overlap")),
        Case("Kendall's W (3 siblings)", lambda: ranking_agreement(data["rankings"], "kendall_w")),
        Case(
            "pair judgements -> units, alpha",
            lambda: krippendorff_alpha(comparison_units(data["judgements"], data["mirror"])),
        ),
        Case("radio scheme: alpha+Fleiss+Cohen+%", radio_panel),
    ]


# -- a project's stored answers, the page and the endpoint ---------------------------------------

SCHEMES = {
    "tree": (
        "  - annotation_type: tree_annotation\n"
        "    name: response_quality\n"
        "    description: Rate each reply and choose the best path\n"
        "    node_scheme: {annotation_type: likert, size: 5}\n"
        "    path_selection: {enabled: true}\n"
        "    branch_comparison: {enabled: true}\n"
    ),
    "likert": "  - {annotation_type: likert, name: response_quality, description: Rate the reply, size: 5}\n",
    "radio": (
        "  - {annotation_type: radio, name: response_quality, description: Judge the reply,"
        " labels: [Better, Same, Worse]}\n"
    ),
}


def project_payload(scheme: str, rng: random.Random, truth: dict) -> dict:
    """One annotator's answer for an item: the item's hidden truth 70% of the time."""

    def noisy(value, choices):
        return value if rng.random() < 0.7 else rng.choice(choices)

    if scheme == "likert":
        return {"rating": noisy(truth["rating"], LIKERT)}
    if scheme == "radio":
        return {"label": noisy(truth["label"], LABELS)}
    first, second = ("a", "b") if rng.random() < 0.5 else ("b", "a")
    label = noisy(truth["label"], LABELS)
    if first == "b":  # the same judgement, read the other way round
        label = LABELS[len(LABELS) - 1 - LABELS.index(label)]
    best = noisy(truth["best"], ["a", "b"])
    return {
        "node_annotations": {
            "a": {"rating": noisy(truth["rating"], LIKERT)},
            "b": {"rating": noisy(truth["other"], LIKERT)},
        },
        "selected_path": ["root", best, "u"] if best == "a" else ["root", best],
        "branch_comparisons": {
            "root": {"shown_order": [first, second], "pairs": [{"a": first, "b": second, "label": label}]}
        },
    }


def project_build(args: argparse.Namespace) -> tuple[object, object]:
    """The project (``args.units`` items, each answered by ``args.coders`` annotators) and its manager."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import Annotation, Assignment, Membership
    from annotation.projects.services import membership_add, project_create
    from trees.services import dataset_get_or_create, tree_import

    rng = random.Random(2011)
    items = (
        {
            "id": f"item-{index:05d}",
            "tree": {
                "id": "root",
                "role": "user",
                "content": f"question {index}",
                "children": [
                    {
                        "id": "a",
                        "role": "assistant",
                        "content": "one answer",
                        "children": [{"id": "u", "role": "user", "content": "thanks"}],
                    },
                    {"id": "b", "role": "assistant", "content": "another answer"},
                ],
            },
        }
        for index in range(args.units)
    )
    dataset = dataset_get_or_create("bench-agreement")
    source = io.BytesIO("\n".join(json.dumps(item) for item in items).encode())
    report = tree_import(dataset=dataset, source=source, format_name="potato")
    assert report.committed, report.summary()
    config = (
        "annotation_schemes:\n"
        + SCHEMES[args.scheme]
        + f"assignment: {{annotations_per_item: {args.coders}}}\n"
    )
    project = project_create(name="bench-agreement", dataset=dataset, config_yaml=config)
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"annotator-{index}") for index in range(args.coders)
    )
    manager = get_user_model().objects.create(username="manager")
    membership_add(project=project, user=manager, role=Membership.Role.MANAGER)
    trees = list(project.items.values_list("tree_id", flat=True))
    now = timezone.now()
    annotations, assignments = [], []
    for tree_id in trees:
        truth = {
            "rating": rng.choice(LIKERT),
            "other": rng.choice(LIKERT),
            "label": rng.choice(LABELS),
            "best": rng.choice("ab"),
        }
        for user in users:
            annotations.append(
                Annotation(
                    project=project,
                    tree_id=tree_id,
                    user=user,
                    scheme="response_quality",
                    payload=project_payload(args.scheme, rng, truth),
                    status=Annotation.Status.SUBMITTED,
                    source=Annotation.Source.IMPORT,
                    updated_at=now,
                    submitted_at=now,
                )
            )
            assignments.append(
                Assignment(project=project, tree_id=tree_id, user=user, status="submitted", submitted_at=now)
            )
    Annotation.objects.bulk_create(annotations, batch_size=2000)
    Assignment.objects.bulk_create(assignments, batch_size=2000)
    return project, manager


def project_child(kind: str, args: argparse.Namespace) -> None:
    """Build the project in a fresh database of ``kind`` and print the timings as one JSON line."""
    os.environ["STATIC_MANIFEST"] = "0"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    _setup.django_setup(_setup.fresh_database(kind))
    from django.db import connection
    from django.test import Client

    from evaluation.agreement.project import agreement_compute, agreement_stamp
    from evaluation.models import AgreementSnapshot

    started = time.perf_counter()
    project, manager = project_build(args)
    built = time.perf_counter() - started

    def median(run, clock=time.perf_counter) -> float:
        times = []
        for _ in range(args.runs):
            began = clock()
            run()
            times.append(clock() - began)
        return statistics.median(times)

    figures = agreement_compute(project)
    compute = median(lambda: agreement_compute(project))
    # This process's CPU time alone: what the computation costs on a machine busy with other work.
    compute_cpu = median(lambda: agreement_compute(project), time.process_time)
    stamp = median(lambda: agreement_stamp(project))
    client = Client()
    client.force_login(manager)
    page = f"/projects/{project.name}/agreement/"
    api = f"/api/v1/projects/{project.name}/agreement"

    def cold() -> None:
        AgreementSnapshot.objects.filter(project=project).update(stamp="stale")
        response = client.get(page)
        assert b'data-recomputed="true"' in response.content, response.status_code

    def warm() -> None:
        response = client.get(page)
        assert b'data-recomputed="false"' in response.content, response.status_code

    def endpoint() -> None:
        assert client.get(api).status_code == 200

    client.get(page)
    timings = {"cold page": median(cold), "warm page": median(warm), "warm endpoint": median(endpoint)}
    headline = [
        (field["field"], field["measures"][0]["measure"], field["measures"][0]["shown"])
        for scheme in figures["schemes"]
        for field in scheme["fields"]
    ]
    print(
        json.dumps(
            {
                "database": connection.vendor,
                "annotations": figures["annotations"],
                "build_s": built,
                "compute_s": compute,
                "compute_cpu_s": compute_cpu,
                "stamp_s": stamp,
                "pages_s": timings,
                "headline": headline,
            }
        )
    )


def project(args: argparse.Namespace) -> list[Case]:
    """The stored project's figures, per database, each measured in a child process (see its docstring)."""
    cases = []
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print("    postgres: not reachable, skipped (set BENCH_POSTGRES_URL)")
            continue
        command = [sys.executable, __file__, "--child", kind, "--scheme", args.scheme]
        command += ["--units", str(args.units), "--coders", str(args.coders), "--runs", str(args.runs)]
        child = subprocess.run(command, capture_output=True, text=True)
        if child.returncode:
            sys.stderr.write(child.stderr)
            raise SystemExit(f"the {kind} run failed")
        result = json.loads(child.stdout.strip().splitlines()[-1])
        database = result["database"]
        print(
            f"    {database}: {result['annotations']:,} answers ({args.scheme}), "
            f"stored in {result['build_s']:.1f} s; "
            + "; ".join(f"{field} {measure} {value}" for field, measure, value in result["headline"])
        )
        cases += [
            Case(f"{database}: compute (read + measure)", seconds=result["compute_s"]),
            Case(f"{database}: compute, this process's CPU", seconds=result["compute_cpu_s"], budget_s=None),
            Case(f"{database}: stamp (snapshot current?)", seconds=result["stamp_s"], budget_s=None),
            Case(
                f"{database}: page cold (recomputed)", seconds=result["pages_s"]["cold page"], budget_s=None
            ),
            Case(
                f"{database}: page warm (kept)",
                seconds=result["pages_s"]["warm page"],
                budget_s=PAGE_BUDGET_S,
            ),
            Case(
                f"{database}: endpoint warm (kept)",
                seconds=result["pages_s"]["warm endpoint"],
                budget_s=PAGE_BUDGET_S,
            ),
        ]
    return cases


# The benchmark's parts, in the order they run.
SECTIONS: dict[str, Callable[[argparse.Namespace], list[Case]]] = {"pure": pure, "project": project}


def timed(run: Callable[[], object], runs: int) -> float:
    """The median of ``runs`` timings, in seconds, after one warm-up run."""
    run()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--units", type=int, default=10_000)
    parser.add_argument("--coders", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--sections", default=",".join(SECTIONS), help="comma-separated, of: " + ", ".join(SECTIONS)
    )
    parser.add_argument(
        "--scheme", choices=list(SCHEMES), default="tree", help="the project section's scheme"
    )
    parser.add_argument("--databases", default="sqlite,postgres", help="the project section's databases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        project_child(args.child, args)
        return 0

    print(f"agreement: {args.units:,} units x {args.coders} annotators, median of {args.runs} runs")
    failed = False
    for section in args.sections.split(","):
        print(f"  {section}")
        for case in SECTIONS[section](args):
            seconds = case.seconds if case.seconds is not None else timed(case.run, args.runs)
            if case.budget_s is None:
                print(f"    {case.name:<38} {seconds * 1000:8.1f} ms  (no budget)")
                continue
            ok = seconds <= case.budget_s
            failed |= not ok
            verdict = "ok" if ok else "OVER BUDGET"
            print(f"    {case.name:<38} {seconds * 1000:8.1f} ms  <= {case.budget_s:.0f} s  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
