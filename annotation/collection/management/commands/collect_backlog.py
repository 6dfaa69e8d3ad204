"""python manage.py collect_backlog PROJECT [--add] [--activate N] — the ranking backlog."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.collection.backlog import backlog_activate, backlog_add
from annotation.models import Project
from trees.audit import AuditedCommand
from trees.services import counted


class Command(AuditedCommand):
    help = (
        "Put the trees imported into PROJECT's dataset in its ranking backlog (--add) and/or move N of "
        "them to ranking now (--activate N)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")
        parser.add_argument("--add", action="store_true", help="add the dataset's trees no project collects")
        parser.add_argument("--activate", type=int, default=0, metavar="N", help="activate N backlog trees")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2)
        if project.mode != Project.Mode.COLLECT:
            raise CommandError(f'"{project.name}" does not collect trees', returncode=2)
        if options["add"]:
            added = backlog_add(project=project)
            self.stdout.write(f"{project.name}: {counted(added, 'tree')} added to the ranking backlog")
        if options["activate"]:
            activated = backlog_activate(project=project, count=options["activate"])
            self.stdout.write(f"{project.name}: {counted(activated, 'backlog tree')} moved to ranking")
