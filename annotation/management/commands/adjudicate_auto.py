"""python manage.py adjudicate_auto PROJECT: the automatic adjudication rule over existing data."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from annotation.projects.config import project_config
from annotation.review.finals import finals_auto
from trees.audit import AuditedCommand
from trees.services import counted


class Command(AuditedCommand):
    help = (
        "Make final the complete items of PROJECT whose annotators agree enough "
        "(quality.adjudication: {auto: majority, min_agreement: ...}); the rest wait for a person."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(name=options["project"]).first()
        if project is None:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2)
        if not project_config(project).quality.adjudication.enabled:
            raise CommandError(
                f"{project.name} has no automatic rule: set quality.adjudication.auto: majority", returncode=2
            )
        done = finals_auto(project=project)
        self.stdout.write(f"made {counted(len(done), 'item')} of {project.name} final by the majority rule")
