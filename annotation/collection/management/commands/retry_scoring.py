"""python manage.py retry_scoring PROJECT — score again the trees whose scoring failed."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.collection.advance import scoring_retry
from annotation.models import Project
from trees.audit import AuditedCommand


class Command(AuditedCommand):
    help = (
        "Retry the scoring of PROJECT's trees in scoring_failed: those whose rankings are complete are "
        "scored again, the others go back to ranking."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2)
        if project.mode != Project.Mode.COLLECT:
            raise CommandError(f'"{project.name}" does not collect trees', returncode=2)
        report = scoring_retry(project=project)
        self.stdout.write(f"{project.name}: {report.summary()}")
