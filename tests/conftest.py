"""Fixtures shared by every test package."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixture_path() -> Callable[[str], Path]:
    """Path of a file under tests/fixtures/."""
    return lambda name: FIXTURES / name


@pytest.fixture
def as_bytes() -> Callable[[Any], io.BytesIO]:
    """A byte stream holding ``value``: str as is, anything else as JSON."""

    def make(value: Any) -> io.BytesIO:
        text = value if isinstance(value, str) else json.dumps(value)
        return io.BytesIO(text.encode("utf-8"))

    return make


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests that need parts this machine lacks, saying how to enable them.

    ``BRANCHPOINT_REQUIRE_BROWSER=1`` (set by CI) turns a missing browser into
    a failure instead of a skip.
    """
    from django.conf import settings

    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    chromium = shutil.which("chromium") or os.path.exists("/usr/bin/chromium")
    require_browser = os.environ.get("BRANCHPOINT_REQUIRE_BROWSER") == "1"
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(
                pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL=postgres://... (CI does)")
            )
        if "browser" in item.keywords and not chromium and not require_browser:
            item.add_marker(
                pytest.mark.skip(
                    reason="needs Debian's chromium: apt-get install chromium (CI installs it and sets "
                    "BRANCHPOINT_REQUIRE_BROWSER=1)"
                )
            )
