"""Shared set-up for the benchmark scripts: a fresh, migrated database per run.

Each benchmark runs its measurements in a child process per database, so that
Django's settings (read once per process) point at the database being
measured and peak memory is that run's own.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/branchpoint_bench")


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(_admin_url(POSTGRES_URL), connect_timeout=3):
            return True
    except Exception:
        return False


def _admin_url(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/postgres"


def fresh_database(kind: str) -> str:
    """A DATABASE_URL for an empty database of ``kind`` (sqlite or postgres)."""
    if kind == "sqlite":
        directory = tempfile.mkdtemp(prefix="branchpoint-bench-")
        return f"sqlite:///{directory}/bench.sqlite3"
    import psycopg

    name = POSTGRES_URL.rsplit("/", 1)[1]
    with psycopg.connect(_admin_url(POSTGRES_URL), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return POSTGRES_URL


def django_setup(database_url: str, *, migrate: bool = True) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # Django's test client speaks plain http; production settings would redirect it to https.
    os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    if migrate:
        call_command("migrate", verbosity=0)


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
