"""``manage.py send_webhooks``: send the webhook deliveries that are due, once or (``--loop``) on and on.

Until a background worker exists, this is what sends webhooks: run it from cron every
minute, or as a service with ``--loop`` (docs/webhooks.md).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandParser

from annotation.webhooks.models import Delivery
from annotation.webhooks.sending import deliveries_send
from trees.audit import TextCommand


class Command(TextCommand):
    help = "Send the webhook deliveries that are due (with --loop, keep sending)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--loop", action="store_true", help="Keep running, looking every --interval seconds."
        )
        parser.add_argument("--interval", type=float, default=5.0, help="Seconds between looks (default 5).")
        parser.add_argument("--limit", type=int, default=100, help="Deliveries sent per look (default 100).")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            sent = deliveries_send(limit=max(options["limit"], 1))
            if sent or not options["loop"]:
                delivered = sum(1 for delivery in sent if delivery.status == Delivery.Status.DELIVERED)
                failed = sum(1 for delivery in sent if delivery.status == Delivery.Status.FAILED)
                self.stdout.write(
                    f"{len(sent)} sent: {delivered} delivered, {failed} failed, "
                    f"{len(sent) - delivered - failed} to retry"
                )
            if not options["loop"]:
                return
            if len(sent) < options["limit"]:
                time.sleep(max(options["interval"], 0.1))
