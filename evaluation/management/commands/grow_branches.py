"""python manage.py grow_branches DATASET --endpoint NAME [--rule unanswered|leaves | --node ID ...]
    [--tree ID ...] [-n N] [--temperature T] [--top-p P] [--max-tokens M] [--seed S]
    [--system-prompt TEXT] [--budget-tokens T] [--budget-cost C] [--project] [--json]

Asks the endpoint for N replies at each chosen turn of the dataset's trees (or, with
``--project``, of the project's items) and adds them as synthetic siblings, in the
foreground with a progress bar (turns). The same run again adds nothing; a stopped run goes
on where it stopped. Turns that failed are listed on standard error (exit code 1); bad
options exit 2.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from evaluation.llm.generation import branches_grow
from evaluation.llm.grow_requests import MAX_REPLIES, GrowInvalid, grow_request_parse
from evaluation.llm.grow_tasks import grow_trees
from trees.audit import AuditedCommand
from trees.branches import RULES
from trees.management.progress import ProgressBar
from trees.models import Dataset


class Command(AuditedCommand):
    help = (
        "Grow the trees of DATASET (or, with --project, of a project's items) with model replies: "
        "N per chosen turn, marked synthetic, idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the dataset (or, with --project, the project) whose trees grow")
        parser.add_argument("--project", action="store_true", help="NAME is a project: grow its items")
        parser.add_argument("--endpoint", required=True, help="the model endpoint's name")
        parser.add_argument(
            "--rule", choices=RULES, help="which turns (default: unanswered; nodes with --node)"
        )
        parser.add_argument("--node", action="append", dest="nodes", help="a turn's id (repeatable)")
        parser.add_argument("--tree", action="append", dest="trees", help="only this tree (repeatable)")
        parser.add_argument("-n", type=int, default=1, help=f"replies per turn (1 to {MAX_REPLIES})")
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--top-p", type=float, dest="top_p")
        parser.add_argument("--max-tokens", type=int, dest="max_tokens", help="longest reply, in tokens")
        parser.add_argument("--seed", type=int, help="reply i is asked with seed + i")
        parser.add_argument("--system-prompt", default="", dest="system_prompt")
        parser.add_argument(
            "--budget-tokens", type=int, dest="budget_tokens", help="stop at this many tokens"
        )
        parser.add_argument("--budget-cost", dest="budget_cost", help="stop at this cost (endpoint's prices)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        keys = ("endpoint", "rule", "nodes", "trees", "n", "temperature", "top_p", "max_tokens", "seed")
        data = {key: options[key] for key in keys if options[key] is not None}
        for key in ("system_prompt", "budget_tokens", "budget_cost"):
            if options[key]:
                data[key] = options[key]
        data.setdefault("rule", "nodes" if options["nodes"] else "unanswered")
        try:
            request = grow_request_parse(data)
        except GrowInvalid as invalid:
            for key, why in invalid.problems:
                self.stderr.write(f"--{key.replace('_', '-')}: {why}")
            raise CommandError("nothing grown: bad options", returncode=2) from None
        name = options["name"]
        if options["project"]:
            project = Project.objects.filter(name=name).first()
            if project is None:
                raise CommandError(f'no project named "{name}"', returncode=2)
            trees, unknown = grow_trees(project=project, tree_ids=request.trees)
        else:
            dataset = Dataset.objects.filter(name=name).first()
            if dataset is None:
                raise CommandError(f'no dataset named "{name}"', returncode=2)
            trees, unknown = grow_trees(dataset=dataset, tree_ids=request.trees)
        if unknown:
            raise CommandError(f"no such trees in {name}: {', '.join(unknown)}", returncode=2)
        bar = ProgressBar(self.stderr._out, total=None, unit="turn")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done, done)

        report = branches_grow(trees=trees, request=request, progress=progress)
        bar.finish()
        if options["json"]:
            self.stdout.write(json.dumps({**report.as_dict(), "problems": report.problems}, indent=2))
        else:
            for problem in report.problems:
                self.stderr.write(problem["text"])
            self.stdout.write(report.summary())
        if report.failed:
            raise CommandError(f"{report.failed:,} turns failed (listed above); run it again to retry them")
