"""python manage.py create_rubric FILE.yaml — create a rubric, or add a version when the YAML changed."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from annotation.management.commands.create_project import read_text
from annotation.problems import ProblemsError
from evaluation.services import rubric_save
from trees.audit import AuditedCommand
from trees.services import counted


class Command(AuditedCommand):
    help = (
        "Create the rubric FILE.yaml describes (its name: key names it), or give it a new version when the "
        "YAML changed. On a bad rubric lists every problem by key path (exit code 2)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the rubric's YAML: name, criteria, gates, outcomes, target")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        text = read_text(path, "rubric")
        try:
            saved = rubric_save(yaml_text=text)
        except ProblemsError as error:
            for problem in error.problems:
                self.stderr.write(str(problem))
            raise CommandError(
                f"rubric not saved: {counted(len(error.problems), 'problem')} in {path}", returncode=2
            ) from None
        spec = saved.spec
        for warning in spec.warnings:
            self.stdout.write(f"warning: {warning}")
        parts = (
            f"{len(spec.criteria)} criteri{'on' if len(spec.criteria) == 1 else 'a'}",
            counted(len(spec.gates), "gate"),
            counted(len(spec.outcomes), "outcome"),
        )
        if saved.created:
            what = "created rubric"
        elif saved.changed:
            what = "new version of rubric"
        else:
            what = "unchanged rubric"
        self.stdout.write(
            f"{what} {saved.rubric.name} v{saved.version.number} ({spec.target}): {', '.join(parts)}"
        )
