"""python manage.py load_demo — the demo that ``make run`` serves.

It lives in the evaluation app because that app sits at the top of the
dependency chain (trees <- annotation <- evaluation) and the demo shows all
three. Running it again resets the demo data and logins.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from annotation.models import Membership, Project
from annotation.projects.services import (
    membership_add,
    project_config_update,
    project_create,
    project_items_sync,
)
from evaluation.services import project_evaluate, rubric_save
from trees.audit import AuditedCommand
from trees.services import dataset_get_or_create, tree_import

DEMO_DIR = Path(settings.BASE_DIR) / "platform" / "demo"
SCHEDULING_DIR = Path(settings.BASE_DIR) / "platform" / "samples" / "scheduling"
SCHEDULING_CONFIG = """\
annotation_task_name: Judge the scheduling assistant
instructions: |
  Read the conversation and answer each question of the rubric with y (yes)
  or n (no). Add a note when a "no" needs explaining.
annotation_schemes:
  - annotation_type: rubric
    name: review
    description: Did the assistant book the meeting well?
    rubric: scheduling
assignment:
  annotations_per_item: 2
"""
ADMIN = ("admin", "admin")
ANNOTATORS = (("annotator", "annotator"), ("annotator2", "annotator2"))
PROJECTS = (("demo-rating", "rating.yaml"), ("demo-compare", "compare.yaml"))


class Command(AuditedCommand):
    help = "Load the demo dataset and logins (development only)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force", action="store_true", help="run even with DEBUG off (the demo logins are well known)"
        )
        parser.add_argument(
            "--address",
            default="127.0.0.1:8000",
            help="the host:port the demo will be served on, for the addresses printed at the end "
            "(make run passes its RUN_ADDRESS)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError("load_demo creates well-known logins; run it with DEBUG=1 (or --force)")
        dataset = dataset_get_or_create("demo")
        dataset.description = "Hand-written branching conversations for trying Branchpoint out."
        dataset.save(update_fields=["description", "updated_at"])
        with (DEMO_DIR / "trees.json").open("rb") as source:
            report = tree_import(dataset=dataset, source=source, format_name="potato", replace=True)
        if not report.committed:
            raise CommandError("\n".join(str(issue) for issue in report.errors))
        self.stdout.write(report.summary())

        admin = self._user(*ADMIN, staff=True)
        annotators = [self._user(*login) for login in ANNOTATORS]
        for name, config_file in PROJECTS:
            config_yaml = (DEMO_DIR / config_file).read_text()
            project = Project.objects.filter(name=name).first()
            if project is None:
                project = project_create(name=name, dataset=dataset, config_yaml=config_yaml)
            else:
                project_config_update(project=project, config_yaml=config_yaml)
                project_items_sync(project)
            membership_add(project=project, user=admin, role=Membership.Role.MANAGER)
            for annotator in annotators:
                membership_add(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
            self.stdout.write(f"project {name}: {project.items.count()} items")
        scheduling = self._scheduling_demo(admin, annotators)
        self._collect_demo(admin, annotators)
        logins = "\n".join(
            f"  annotator: user {username!r}  password {password!r}" for username, password in ANNOTATORS
        )
        site = f"http://{options['address']}"
        self.stdout.write(
            self.style.SUCCESS(
                f"\nBranchpoint demo is ready at {site}/\n"
                f"  admin:     {site}/admin/  user {ADMIN[0]!r}  password {ADMIN[1]!r}\n"
                f"{logins}\n"
                f"  rubric report: {site}/projects/{scheduling}/rubrics/scheduling/\n"
            )
        )

    def _collect_demo(self, admin: Any, annotators: list[Any]) -> None:
        """A collect-mode project whose trees the demo logins grow through tasks."""
        config_yaml = (DEMO_DIR / "collect.yaml").read_text()
        project = Project.objects.filter(name="demo-collect").first()
        if project is None:
            project = project_create(
                name="demo-collect",
                dataset=dataset_get_or_create("collect-demo"),
                config_yaml=config_yaml,
                mode=Project.Mode.COLLECT,
            )
        else:
            project_config_update(project=project, config_yaml=config_yaml)
        membership_add(project=project, user=admin, role=Membership.Role.MANAGER)
        for person in (admin, *annotators):
            membership_add(project=project, user=person, role=Membership.Role.ANNOTATOR)
        self.stdout.write(f"project {project.name}: trees grow through tasks at /projects/{project.name}/")

    def _scheduling_demo(self, admin: Any, annotators: list[Any]) -> str:
        """The scheduling rubric sample as a project: automatic results now, human checks to do."""
        dataset = dataset_get_or_create("scheduling-demo")
        with (SCHEDULING_DIR / "conversations.json").open("rb") as source:
            report = tree_import(dataset=dataset, source=source, format_name="potato", replace=True)
        if not report.committed:
            raise CommandError("\n".join(str(issue) for issue in report.errors))
        saved = rubric_save(yaml_text=(SCHEDULING_DIR / "rubric.yaml").read_text(), user=admin)
        project = Project.objects.filter(name="demo-scheduling").first()
        if project is None:
            project = project_create(name="demo-scheduling", dataset=dataset, config_yaml=SCHEDULING_CONFIG)
        else:
            project_config_update(project=project, config_yaml=SCHEDULING_CONFIG)
            project_items_sync(project)
        membership_add(project=project, user=admin, role=Membership.Role.MANAGER)
        for annotator in annotators:
            membership_add(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
        summary = project_evaluate(project=project, rubric=saved.rubric)
        self.stdout.write(summary.line(project.name))
        return project.name

    def _user(self, username: str, password: str, *, staff: bool = False):
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=username)
        user.is_staff = user.is_superuser = staff
        user.set_password(password)
        user.save()
        return user
