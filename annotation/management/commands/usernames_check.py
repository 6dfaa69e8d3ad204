"""manage.py usernames_check: list the accounts whose usernames look like another's.

Such accounts predate the username keys (migration 0009 made the keys and reported them);
new ones cannot be made. Exits 2 while any is left, so that a deployment can check.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from annotation.models import UsernameKey
from annotation.projects.usernames import username_key
from trees.audit import TextCommand


class Command(TextCommand):
    help = "List accounts whose usernames look like another's (rename them; the first keeps its name)."

    def handle(self, *args: Any, **options: Any) -> None:
        holders = dict(UsernameKey.objects.values_list("key", "user__username"))
        keyless = get_user_model().objects.filter(username_key__isnull=True).order_by("pk")
        found = [
            (username, holders.get(username_key(username)))
            for username in keyless.values_list("username", flat=True)
        ]
        clashes = [(username, other) for username, other in found if other is not None]
        for username, other in clashes:
            self.stdout.write(f'"{username}" looks like "{other}": rename it')
        if clashes:
            raise SystemExit(2)
        self.stdout.write("No two usernames look alike.")
