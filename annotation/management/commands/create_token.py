"""python manage.py create_token USER [--name NAME] [--expires-days N]"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from annotation.api.tokens import token_create
from annotation.models import ApiToken
from trees.audit import AuditedCommand

# A hundred years: further is "never", and far enough makes the date overflow.
MAX_DAYS = 36_500


class Command(AuditedCommand):
    help = (
        "Make an API token for USER and print it once (standard output, alone on its line); only its "
        "hash is kept. Send it as 'Authorization: Bearer <token>'. Revoke it in the admin."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("user", help="username")
        parser.add_argument("--name", default="", help="what the token is for (default: cli)")
        parser.add_argument("--expires-days", type=int, help="days until it stops working (default: never)")

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["user"]})
        except User.DoesNotExist:
            raise CommandError(f'no user named "{options["user"]}"', returncode=2) from None
        name = options["name"] or "cli"
        limit = ApiToken._meta.get_field("name").max_length
        if len(name) > limit:
            raise CommandError(
                f"--name must be at most {limit} characters (it has {len(name)})", returncode=2
            )
        days = options["expires_days"]
        if days is not None and not 1 <= days <= MAX_DAYS:
            raise CommandError(f"--expires-days must be from 1 to {MAX_DAYS:,}", returncode=2)
        expires_at = timezone.now() + timedelta(days=days) if days is not None else None
        made = token_create(user=user, name=name, expires_at=expires_at)
        # The token alone on standard output, so that scripts can capture it; the rest to stderr.
        self.stdout.write(made.secret)
        until = f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""
        self.stderr.write(
            f'token "{made.token.name}" for {user.get_username()} (bp_{made.token.prefix}_…){until}: '
            "copy it now, it is not shown again"
        )
