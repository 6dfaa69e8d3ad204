"""python manage.py messages_render [--batch-size N]"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from trees.audit import AuditedCommand
from trees.services import counted, messages_render


class Command(AuditedCommand):
    help = (
        "Render again and keep the HTML of every message that an older Markdown renderer wrote "
        "(after an upgrade that changes trees.markdown.RENDERER_VERSION)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=2000, help="messages per transaction")

    def handle(self, *args: Any, **options: Any) -> None:
        count = messages_render(batch_size=max(options["batch_size"], 1))
        self.stdout.write(f"rendered {counted(count, 'message')}")
