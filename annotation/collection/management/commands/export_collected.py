"""python manage.py export_collected PROJECT [-o FILE] [--state STATE ...] [--lang LANG ...]
[--include-deleted] [--synthetic include|exclude] [--include-unaccepted]"""

from __future__ import annotations

import gzip
from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.collection.export import SYNTHETIC_CHOICES, ExportFilters, collected_export
from annotation.models import Project
from trees.audit import AuditedCommand
from trees.services import counted
from trees.vocabulary import READY_FOR_EXPORT, TREE_STATES


class Command(AuditedCommand):
    help = (
        "Write PROJECT's collected trees as Open-Assistant tree export JSONL (a .gz name writes gzip); "
        "by default the trees ready for export, with their accepted messages that are not deleted."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")
        parser.add_argument("-o", "--output", default="-", help="output file; - for standard output")
        parser.add_argument(
            "--state",
            action="append",
            choices=[*TREE_STATES, "all"],
            help=f"trees in this state (repeatable; default {READY_FOR_EXPORT}; all for every state)",
        )
        parser.add_argument(
            "--lang", action="append", help="trees whose prompt is in this language (repeatable)"
        )
        parser.add_argument("--include-deleted", action="store_true", help="keep soft-deleted messages")
        parser.add_argument(
            "--synthetic",
            choices=SYNTHETIC_CHOICES,
            default="include",
            help="keep or leave out messages a model wrote (with their replies)",
        )
        parser.add_argument(
            "--include-unaccepted",
            action="store_true",
            help="keep messages not (yet) accepted by their reviews",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2)
        if project.mode != Project.Mode.COLLECT:
            raise CommandError(f'"{project.name}" does not collect trees', returncode=2)
        states = options["state"] or [READY_FOR_EXPORT]
        filters = ExportFilters(
            states=tuple(TREE_STATES) if "all" in states else tuple(states),
            langs=tuple(options["lang"] or ()),
            include_deleted=options["include_deleted"],
            synthetic=options["synthetic"],
            accepted_only=not options["include_unaccepted"],
        )
        output = options["output"]
        if output == "-":
            out = self.stdout._out
        else:
            try:
                if output.endswith(".gz"):
                    out = gzip.open(output, "wt", encoding="utf-8")  # noqa: SIM115
                else:
                    out = open(output, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as error:
                raise CommandError(f"cannot write {output}: {error.strerror}", returncode=2) from None
        count = 0
        try:
            for line in collected_export(project=project, filters=filters):
                out.write(line)
                count += 1
        finally:
            if output != "-":
                out.close()
        summary = f"exported {counted(count, 'tree')} of {project.name}"
        if output == "-":
            self.stderr.write(summary)  # standard output holds the export
        else:
            self.stdout.write(f"{summary} to {output}")
