"""python manage.py import_gold PROJECT FILE [--user NAME] [--json]"""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from annotation.quality.gold_imports import gold_import
from trees.audit import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Mark PROJECT's items gold with the expected answers in FILE: records as import_annotations "
        'reads them ({"id", "annotations"}, plus an optional "explanation"), JSONL or a JSON array '
        "(.gz is read as gzip). All or nothing: on any bad record nothing is imported and every "
        "problem is listed (exit code 2)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")
        parser.add_argument("file", help="input file; - for standard input")
        parser.add_argument(
            "--user", help="only the records of this annotator (an expert's answers in an export of several)"
        )
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(name=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2) from None
        path = options["file"]
        try:
            source = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}", returncode=2) from None
        with source:
            report = gold_import(project=project, source=source, user=options["user"])
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2))
        else:
            for issue in report.errors:
                self.stderr.write(str(issue))
            if report.errors_not_shown:
                self.stderr.write(f"... and {report.errors_not_shown:,} more")
        if not report.committed:
            raise CommandError(report.summary(), returncode=2)
        if not options["json"]:
            self.stdout.write(report.summary())
