"""The integration script the docs show (docs/integration.md, the file docs/integration.py)
runs as written against a live server: it imports a dataset, creates a project with a
webhook, runs the annotator's loop, pulls the answers and receives the signed webhook.

``manage.py send_webhooks --loop`` is played by sending what is due after each request
the server answers (in the server's own thread, so the test database is used by one
thread at a time).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.signals import request_finished

from annotation.api.tokens import token_create
from annotation.webhooks.models import Delivery
from annotation.webhooks.sending import deliveries_send
from tests.annotation.annotator_items import person

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "integration.py"


def test_the_page_shows_the_script_as_it_is() -> None:
    page = (ROOT / "docs" / "integration.md").read_text()
    [shown] = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert shown == SCRIPT.read_text()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def sender() -> Iterator[None]:
    def send_due(**kwargs: Any) -> None:
        deliveries_send()

    request_finished.connect(send_due, dispatch_uid="integration-sender")
    try:
        yield
    finally:
        request_finished.disconnect(dispatch_uid="integration-sender")


def test_the_integration_script_runs_against_a_live_server(
    live_server: Any, sender: None, settings: Any
) -> None:
    settings.API_THROTTLE_RATES = {"user": "off", "anon": "off", "loop": "off"}
    admin, annotator = person("admin", is_superuser=True, is_staff=True), person("annotator")
    env = os.environ | {
        "BRANCHPOINT_URL": live_server.url,
        "ADMIN_TOKEN": token_create(user=admin, name="script").secret,
        "ANNOTATOR_TOKEN": token_create(user=annotator, name="script").secret,
        "HOOK_PORT": str(free_port()),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Ids are the database's: on PostgreSQL, sequences go on from earlier tests.
    printed = [re.sub(r"webhook \d+ ", "webhook 1 ", line) for line in done.stdout.splitlines()]
    assert printed == [
        "schema: 11 operations used, all there",
        "dataset integration-trees: 2 trees imported",
        "project integration: annotator added, webhook 1 subscribed to item.submitted",
        "annotator submitted 2 items",
        "finals: 2 records, from ['annotator']",
        "webhook: item.submitted for integration-0 by annotator, signature verified",
    ]
    assert Delivery.objects.filter(status="delivered").count() >= 1
