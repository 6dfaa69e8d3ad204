"""python manage.py add_member PROJECT USER --role manager|annotator|reviewer"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser

from annotation.models import Membership, Project
from annotation.projects.services import membership_add
from trees.audit import AuditedCommand

ROLES = ", ".join(Membership.Role.values)


class Command(AuditedCommand):
    help = f"Give USER a role in PROJECT ({ROLES}). The user must have an account."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project")
        parser.add_argument("user", help="username")
        # Checked by the service rather than by argparse, so that a wrong role
        # gets the same message (and exit code 2) from the CLI and from call_command.
        parser.add_argument("--role", required=True, help=ROLES)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = Project.objects.get(name=options["project"])
        except Project.DoesNotExist:
            raise CommandError(f'no project named "{options["project"]}"', returncode=2) from None
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["user"]})
        except User.DoesNotExist:
            raise CommandError(f'no user named "{options["user"]}"', returncode=2) from None
        role = options["role"]
        already = Membership.objects.filter(project=project, user=user, role=role).exists()
        try:
            membership_add(project=project, user=user, role=role)
        except ValueError as error:
            raise CommandError(str(error), returncode=2) from None
        verb = "was already" if already else "is now"
        self.stdout.write(f"{user.get_username()} {verb} {role} of {project.name}")
