"""python manage.py create_project NAME --dataset DATASET --config FILE.yaml
[--title T] [--instructions-file F] [--mode annotate|collect]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import project_config
from annotation.projects.services import project_create
from trees.audit import AuditedCommand
from trees.models import Dataset
from trees.services import counted
from trees.storable import unstorable


def read_text(path: str, what: str) -> str:
    """The UTF-8 text of the file ``path``, refused (exit code 2) when it holds what cannot be stored."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CommandError(f"cannot read the {what} {path}: {error.strerror}", returncode=2) from None
    except UnicodeDecodeError:
        raise CommandError(f"cannot read the {what} {path}: it is not UTF-8 text", returncode=2) from None
    if found := unstorable(text):
        line = text.count("\n", 0, found.index) + 1
        raise CommandError(f"cannot read the {what} {path}: line {line} {found.message}", returncode=2)
    return text


class Command(AuditedCommand):
    help = (
        "Create the project NAME over DATASET with the configuration in FILE.yaml (Potato's "
        "annotation_schemes and Branchpoint's own keys). Lists the Potato keys it ignores and how it read "
        "Potato's assignment keys; on a bad configuration lists every problem by key path (exit code 2)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="project name: letters, digits, - and _ (used in URLs)")
        parser.add_argument("--dataset", required=True, help="the dataset whose trees the project judges")
        parser.add_argument("--config", required=True, help="the project's YAML configuration")
        parser.add_argument(
            "--title", default="", help="a title (default: the config's annotation_task_name)"
        )
        parser.add_argument(
            "--instructions-file", help="instructions for annotators (default: the config's instructions)"
        )
        parser.add_argument(
            "--mode",
            choices=Project.Mode.values,
            default=Project.Mode.ANNOTATE,
            help="annotate existing trees (the default) or collect new ones through tasks (workflow:)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        try:
            Project._meta.get_field("name").run_validators(name)
        except ValidationError as error:
            raise CommandError(
                f'"{name}" cannot name a project: {" ".join(error.messages)}', returncode=2
            ) from None
        if Project.objects.filter(name=name).exists():
            raise CommandError(f'a project named "{name}" already exists', returncode=2)
        try:
            dataset = Dataset.objects.get(name=options["dataset"])
        except Dataset.DoesNotExist:
            raise CommandError(f'no dataset named "{options["dataset"]}"', returncode=2) from None
        config_yaml = read_text(options["config"], "configuration")
        instructions = ""
        if options["instructions_file"]:
            instructions = read_text(options["instructions_file"], "instructions file")
        try:
            project = project_create(
                name=name,
                dataset=dataset,
                config_yaml=config_yaml,
                title=options["title"],
                instructions=instructions,
                mode=options["mode"],
            )
        except ProblemsError as error:
            for problem in error.problems:
                self.stderr.write(str(problem))
            raise CommandError(
                f"project {name} not created: "
                f"{counted(len(error.problems), 'problem')} in {options['config']}",
                returncode=2,
            ) from None
        config = project_config(project)
        for key in config.ignored:
            self.stdout.write(f"ignored: {key} (a Potato setting Branchpoint does not use)")
        for note in config.notes:
            self.stdout.write(f"note: {note}")
        items = counted(project.items.count(), "item")
        self.stdout.write(f"created project {project.name} over dataset {dataset.name}: {items}")
