"""python manage.py evaluate PROJECT --rubric NAME [-o results.jsonl]

Runs the rubric's automatic checks over every item of the project and stores
the results (running it again replaces them: the same items, the same rows),
then brings the judges' combined results up to date. With ``-o`` it writes
one JSON line per item (and node or path): id, node, score, outcome,
details, explanation — for CI pipelines (``-o -`` writes to standard output).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from annotation.problems import ProblemsError
from evaluation.models import Rubric
from evaluation.selectors import ReportQuery, result_line, results_query
from evaluation.services import AUTO, NoVersion, project_evaluate, rubric_version_current
from trees.audit import AuditedCommand
from trees.management.progress import ProgressBar


class Command(AuditedCommand):
    help = (
        "Run RUBRIC's automatic checks over every item of PROJECT and store the results (idempotent); "
        "with -o FILE write one JSON line per item."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="the project whose items are evaluated")
        parser.add_argument("--rubric", required=True, help="the rubric's name")
        parser.add_argument(
            "-o", "--output", help="write the results as JSON lines to this file (- for stdout)"
        )
        parser.add_argument("--chunk-size", type=int, default=1000, help="trees read and written per batch")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(name=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2) from None
        try:
            rubric = Rubric.objects.get(name=options["rubric"])
        except Rubric.DoesNotExist:
            raise CommandError(f'no rubric named "{options["rubric"]}"', returncode=2) from None
        bar = ProgressBar(self.stderr._out, total=None, unit="item")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done, done)

        try:
            summary = project_evaluate(
                project=project, rubric=rubric, chunk_size=max(options["chunk_size"], 1), progress=progress
            )
        except (NoVersion, ProblemsError) as error:
            bar.finish()
            for problem in getattr(error, "problems", []):
                self.stderr.write(str(problem))
            raise CommandError(f"not evaluated: {error}", returncode=2) from None
        bar.finish()
        output = options["output"]
        if output:
            query = ReportQuery(rubric_version_current(rubric), AUTO, None)
            results = results_query(project=project, query=query).iterator(chunk_size=2000)
            lines = (json.dumps(result_line(result), ensure_ascii=False) + "\n" for result in results)
            if output == "-":
                for line in lines:
                    self.stdout.write(line, ending="")
            else:
                with open(output, "w", encoding="utf-8") as out:
                    out.writelines(lines)
        # With the results on standard output, the summary goes to standard error.
        (self.stderr if output == "-" else self.stdout).write(summary.line(project.name))
