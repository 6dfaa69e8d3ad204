"""Tree collection under simulated people: tasks per second, and the invariants after every step.

Seeded simulated annotators ask for "random" tasks through the services
(``task_next``, ``task_ack`` now and then, ``task_nack`` now and then,
``task_submit``) in a project with Open-Assistant's default ``workflow:``
settings, until --trees trees reach ``ready_for_export``. They write
prompts and replies, review (mostly "not spam", sometimes spam, so that
some messages are rejected) and rank siblings in a random order.

After every step the tree it touched is checked: no parent has more
countable replies than its tree's ``max_children_count`` (an assistant
message no more than ``num_prompter_replies``), no message more reviews
than required, no parent more rankings than required, no target more tasks
out and done than its limit. When a tree reaches ``ready_for_export`` its
export is checked: every message accepted and not deleted, and the ranks
of each sibling group a permutation of 0..k-1. At the end the whole
project's export must re-import through the oasst importer unchanged.

    .venv/bin/python bench/collect_sim.py [--trees 200] [--seed 1] [--databases sqlite,postgres]

Budget: ≥ 200 tasks/s on SQLite (time spent in the services; the checks are
not counted). Exits 1 when the budget is missed or an invariant breaks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _setup

BUDGET_TASKS_PER_SECOND = 200
PEOPLE = 24
WORDS = (
    "the",
    "a",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "please",
    "explain",
    "how",
    "why",
)


class InvariantBroken(AssertionError):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise InvariantBroken(message)


def check_tree(tree_id: int, config: Any) -> None:
    """The limits on one tree, from its rows."""
    from annotation.collection.availability import KINDS, LABEL_PROMPT, LABEL_REPLY, RANK, REPLY
    from annotation.collection.models import CollectedTree, Task
    from trees.models import Message

    collected = CollectedTree.objects.get(pk=tree_id)
    rows = list(
        Message.objects.filter(tree_id=tree_id).values_list(
            "pk", "parent_id", "role", "review_count", "review_result", "deleted"
        )
    )
    roles = {pk: role for pk, _, role, _, _, _ in rows}
    children: Counter[int] = Counter()
    for pk, parent_id, _, review_count, verdict, deleted in rows:
        required = config.reviews_required(root=parent_id is None)
        check((review_count or 0) <= required, f"message {pk}: {review_count} reviews, {required} required")
        if parent_id is not None and not deleted and verdict is not False:
            children[parent_id] += 1
    for parent_id, count in children.items():
        limit = collected.max_children_count if roles[parent_id] == "user" else config.num_prompter_replies
        check(count <= limit, f"message {parent_id}: {count} replies, at most {limit}")
    taken: Counter[tuple[int, str]] = Counter()  # tasks out and done, by target and kind
    replies_out: Counter[int] = Counter()
    size = sum(1 for _, parent_id, _, _, verdict, deleted in rows if not deleted and verdict is not False)
    for message_id, task_type, status in Task.objects.filter(
        tree_id=tree_id, status__in=["leased", "done"]
    ).values_list("message_id", "type", "status"):
        category = KINDS[task_type].category
        taken[(message_id, category)] += 1
        if category == REPLY and status == "leased":
            replies_out[message_id] += 1
    out = sum(replies_out.values())
    check(
        size + out <= collected.goal_tree_size,
        f"tree {tree_id}: {size} messages and {out} replies out, goal {collected.goal_tree_size}",
    )
    for (message_id, category), count in taken.items():
        if message_id is None:
            continue  # the initial prompt task that created the tree
        if category in (LABEL_PROMPT, LABEL_REPLY):
            limit = config.reviews_required(root=category == LABEL_PROMPT)
        elif category == RANK:
            limit = config.num_required_rankings
        else:
            limit = (
                collected.max_children_count if roles[message_id] == "user" else config.num_prompter_replies
            )
            # A parent's replies that count (not rejected, not deleted) and the reply tasks out.
            count = children[message_id] + replies_out[message_id]
        check(count <= limit, f"message {message_id}: {count} {category} tasks out and done, at most {limit}")


def check_export(records: list[Any]) -> None:
    for record in records:
        siblings: dict[str | None, list[int | None]] = defaultdict(list)
        for message in record.messages:
            check(
                message.review_result is True,
                f"{record.external_id}: exported message {message.external_id} not accepted",
            )
            check(
                not message.deleted, f"{record.external_id}: exported message {message.external_id} deleted"
            )
            siblings[message.parent_id].append(message.rank)
        for parent, ranks in siblings.items():
            given = sorted(rank for rank in ranks if rank is not None)
            check(
                given == list(range(len(given))),
                f"{record.external_id}: ranks under {parent} are {given}, not 0..{len(given) - 1}",
            )


def simulate(trees_wanted: int, seed: int) -> dict[str, Any]:
    import random

    from django.contrib.auth import get_user_model
    from django.db import connection

    from annotation.collection.errors import NoTaskAvailable, TaskRefused, TooManyPending
    from annotation.collection.export import collected_records
    from annotation.collection.submissions import task_submit
    from annotation.collection.tasks import task_ack, task_nack, task_next, workflow_config
    from annotation.models import Membership
    from annotation.projects.services import membership_add, project_create
    from trees.services import dataset_get_or_create

    dataset = dataset_get_or_create("collect-sim")
    project = project_create(
        name="collect-sim", dataset=dataset, config_yaml="workflow: {}\n", mode="collect"
    )
    config = workflow_config(project)
    User = get_user_model()
    people = [User.objects.create(username=f"person{index:02d}") for index in range(PEOPLE)]
    for person in people:
        membership_add(project=project, user=person, role=Membership.Role.ANNOTATOR)

    rng = random.Random(seed)
    service_rng = random.Random(seed + 1)
    outcomes: Counter[str] = Counter()
    spent = 0.0
    steps = 0
    ready: set[int] = set()
    started = time.perf_counter()
    while len(ready) < trees_wanted:
        steps += 1
        if steps > 200 * trees_wanted * 4:
            raise InvariantBroken(f"no progress: {len(ready)} trees ready after {steps} steps")
        person = rng.choice(people)
        begin = time.perf_counter()
        try:
            task = task_next(project=project, user=person, rng=service_rng)
        except (NoTaskAvailable, TooManyPending) as refused:
            spent += time.perf_counter() - begin
            outcomes[refused.code] += 1
            continue
        data: dict[str, Any]
        if task.type in ("initial_prompt", "assistant_reply", "prompter_reply"):
            data = {"text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))}
        elif task.type.startswith("label_"):
            spam = 1 if rng.random() < 0.08 else 0
            data = {"labels": {"spam": spam, "lang_mismatch": 0}}
            if "quality" in task.payload["labels"]:
                data["labels"]["quality"] = rng.choice([0, 0.25, 0.5, 0.75, 1])
        else:
            ranking = list(task.payload["replies"])
            rng.shuffle(ranking)
            data = {"ranking": ranking}
        roll = rng.random()
        try:
            if roll < 0.02:
                task_nack(project=project, task_id=task.pk, user=person, reason="simulated skip")
                outcomes["skipped"] += 1
            else:
                if roll < 0.10:
                    task_ack(project=project, task_id=task.pk, user=person)
                task = task_submit(project=project, task_id=task.pk, user=person, data=data, rng=service_rng)
                outcomes[task.type] += 1
        except TaskRefused as refused:
            outcomes[refused.code] += 1
        spent += time.perf_counter() - begin
        if task.tree_id is not None:
            check_tree(task.tree_id, config)
            from trees.models import ConversationTree

            if (
                task.tree_id not in ready
                and ConversationTree.objects.filter(pk=task.tree_id, state="ready_for_export").exists()
            ):
                ready.add(task.tree_id)
                check_export(list(collected_records(project=project, tree_ids=[task.tree_id])))
    wall = time.perf_counter() - started
    done = sum(
        count
        for name, count in outcomes.items()
        if name in ("initial_prompt", "assistant_reply", "prompter_reply")
        or name.startswith(("label_", "rank_"))
    )
    handled = done + outcomes["skipped"]
    states = Counter(dataset.trees.values_list("state", flat=True))
    roundtrip = export_roundtrip(project)
    return {
        "database": connection.vendor,
        "trees_ready": len(ready),
        "tasks_done": done,
        "tasks_skipped": outcomes["skipped"],
        "refusals": {
            name: count
            for name, count in outcomes.items()
            if name in ("no_task", "too_many_pending", "tree_closed", "lease_expired")
        },
        "tasks_per_second": handled / spent,
        "service_seconds": spent,
        "wall_seconds": wall,
        "states": dict(states),
        "roundtrip": roundtrip,
    }


def export_roundtrip(project: Any) -> str:
    """Export every tree ready for export, re-import it through the oasst importer, export that again."""
    import io

    from annotation.collection.export import collected_export
    from trees.services import dataset_get_or_create, tree_import, trees_export

    exported = "".join(collected_export(project=project))
    copy = dataset_get_or_create("collect-sim-copy")
    report = tree_import(dataset=copy, source=io.BytesIO(exported.encode()), format_name="oasst")
    check(report.committed, f"the export does not re-import: {report.summary()}")
    again = "".join(trees_export(dataset=copy, format_name="oasst"))
    # Compared as objects: PostgreSQL's jsonb keeps no key order inside metadata (labels, emojis).
    objects = sorted(
        (json.loads(line) for line in again.splitlines()), key=lambda tree: tree["message_tree_id"]
    )
    expected = sorted(
        (json.loads(line) for line in exported.splitlines()), key=lambda tree: tree["message_tree_id"]
    )
    check(objects == expected, "the re-imported export differs from the export")
    return f"{len(exported.splitlines())} trees re-imported unchanged"


def run_child(kind: str, trees: int, seed: int) -> None:
    _setup.django_setup(_setup.fresh_database(kind))
    try:
        result = simulate(trees, seed)
    except InvariantBroken as broken:
        result = {"database": kind, "invariant_broken": str(broken)}
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trees", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--databases", default="sqlite")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.trees, args.seed)
        return

    failed = False
    for kind in args.databases.split(","):
        if kind == "postgres" and not _setup.postgres_available():
            print(f"postgres: not reachable at {_setup.POSTGRES_URL}, skipped")
            continue
        output = subprocess.run(
            [sys.executable, __file__, "--child", kind, "--trees", str(args.trees), "--seed", str(args.seed)],
            capture_output=True,
            text=True,
            env=os.environ | {"LOG_LEVEL": "WARNING"},
        )
        if output.returncode != 0:
            print(output.stdout, output.stderr, file=sys.stderr)
            sys.exit(1)
        result = json.loads(output.stdout.strip().splitlines()[-1])
        if "invariant_broken" in result:
            print(f"{kind}: INVARIANT BROKEN: {result['invariant_broken']}")
            failed = True
            continue
        rate = result["tasks_per_second"]
        within = kind != "sqlite" or rate >= BUDGET_TASKS_PER_SECOND
        failed |= not within
        budget = (
            f" (budget ≥ {BUDGET_TASKS_PER_SECOND}: {'ok' if within else 'MISSED'})"
            if kind == "sqlite"
            else ""
        )
        print(
            f"{result['database']}: {result['trees_ready']} trees ready for export after "
            f"{result['tasks_done']:,} tasks done and {result['tasks_skipped']:,} skipped"
        )
        print(
            f"  {rate:,.0f} tasks/s in the services{budget}; {result['service_seconds']:.1f} s in services, "
            f"{result['wall_seconds']:.1f} s with the checks"
        )
        print(f"  refusals: {result['refusals']}")
        print(f"  trees by state: {result['states']}")
        print(f"  invariants held after every step; export: {result['roundtrip']}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
