"""python manage.py run_judge JUDGE PROJECT [--scheme NAME] [--redo] [--max-tokens N] [--max-cost X]

Runs a model judge over the project's items here and now (the admin and the API run it
as a job): each item answered becomes an annotation of the judge's account ``judge:NAME``.
Items already judged are skipped unless ``--redo``. Prints what the run did; the questions
that failed (with the reason) go to standard error, and the exit code is 1 when the run
stopped because the endpoint refused the judge's settings.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from evaluation.llm.judging import JudgeRunRefused, judge_run
from evaluation.llm.limits import Budget
from evaluation.llm.models import Judge
from trees.audit import AuditedCommand
from trees.management.progress import ProgressBar


class Command(AuditedCommand):
    help = (
        "Run model judge JUDGE over PROJECT's items (idempotent: items judged are skipped unless --redo), "
        "within an optional budget of tokens or cost."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("judge", help="the judge's name")
        parser.add_argument("project", help="the project whose items it judges")
        parser.add_argument("--scheme", default="", help="only this scheme (by name)")
        parser.add_argument("--redo", action="store_true", help="ask again about items already judged")
        parser.add_argument("--max-tokens", type=int, help="stop once the run has used this many tokens")
        parser.add_argument("--max-cost", help="stop once the run has spent this much (endpoint prices)")

    def handle(self, *args: Any, **options: Any) -> None:
        judge = Judge.objects.filter(name=options["judge"]).select_related("endpoint").first()
        if judge is None:
            raise CommandError(f'no judge named "{options["judge"]}"', returncode=2)
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2)
        max_cost = None
        if options["max_cost"] is not None:
            try:
                max_cost = Decimal(options["max_cost"])
            except InvalidOperation:
                raise CommandError(
                    f"--max-cost: not a number: {options['max_cost']!r}", returncode=2
                ) from None
        budget = (
            Budget(max_tokens=options["max_tokens"], max_cost=max_cost)
            if options["max_tokens"] is not None or max_cost is not None
            else None
        )
        bar = ProgressBar(self.stderr._out, total=None, unit="item")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done, done)

        try:
            report = judge_run(
                judge=judge,
                project=project,
                scheme=options["scheme"],
                redo=options["redo"],
                budget=budget,
                progress=progress,
            )
        except JudgeRunRefused as error:
            bar.finish()
            raise CommandError(str(error), returncode=2) from None
        bar.finish()
        for problem in report.problems:
            self.stderr.write(problem["text"])
        self.stdout.write(report.line())
        if report.stopped and not report.stopped.startswith("budget"):
            raise CommandError(f"stopped: {report.stopped}", returncode=1)
