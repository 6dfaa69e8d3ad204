"""The local settings file: a fresh checkout runs manage.py with nothing exported.

Rules (config/settings.py, docs/deploying.md):

- ``make run`` writes ``var/local.env`` once: ``DEBUG=1`` and a SECRET_KEY made
  with Python's ``secrets``, readable by its owner only; an existing file is
  never overwritten.
- The settings read that file when the environment gives no SECRET_KEY; what
  the environment gives wins over the file, key by key.
- An environment that gives SECRET_KEY (production, the tests, the
  benchmarks) reads no file; ``BRANCHPOINT_LOCAL_ENV`` names another file, or
  none when empty.
- Without the file, and with DEBUG off, the settings still refuse to load
  without a SECRET_KEY.

Each case loads the settings in a child process with an environment of its
own, as ``manage.py`` would on that machine.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import json, config.settings as s; "
    "print(json.dumps({'DEBUG': s.DEBUG, 'SECRET_KEY': s.SECRET_KEY, 'ALLOWED_HOSTS': s.ALLOWED_HOSTS, "
    "'LOCAL_SETTINGS_FILE': s.LOCAL_SETTINGS_FILE}))"
)


def load_settings(tmp_path: Path, **environ: str) -> subprocess.CompletedProcess:
    """Import config.settings in a child process whose environment holds only ``environ``
    (plus PATH, and a var/ directory under ``tmp_path`` so nothing is written to the checkout)."""
    env = {"PATH": os.environ.get("PATH", ""), "BRANCHPOINT_VAR_DIR": str(tmp_path / "var")} | environ
    return subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


def loaded(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, f"the settings did not load:\n{result.stderr}"
    return json.loads(result.stdout)


@pytest.fixture
def local_env(tmp_path: Path) -> Path:
    path = tmp_path / "local.env"
    path.write_text("# written by make run\nDEBUG=1\nSECRET_KEY=from-the-local-file\n")
    return path


def test_the_settings_read_the_local_file_when_the_environment_gives_no_secret_key(tmp_path, local_env):
    values = loaded(load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(local_env)))

    assert values["DEBUG"] is True
    assert values["SECRET_KEY"] == "from-the-local-file"
    assert values["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost"]
    assert values["LOCAL_SETTINGS_FILE"] == str(local_env)


def test_the_environment_wins_over_the_file_key_by_key(tmp_path, local_env):
    values = loaded(load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(local_env), DEBUG="0"))

    assert values["DEBUG"] is False
    assert values["SECRET_KEY"] == "from-the-local-file"


def test_an_environment_that_gives_a_secret_key_reads_no_file(tmp_path, local_env):
    values = loaded(
        load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(local_env), SECRET_KEY="from-the-environment")
    )

    assert values["SECRET_KEY"] == "from-the-environment"
    assert values["DEBUG"] is False, "DEBUG=1 came from a file production must never read"
    assert values["LOCAL_SETTINGS_FILE"] == ""


def test_without_a_file_or_debug_a_missing_secret_key_still_stops_the_start(tmp_path):
    result = load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(tmp_path / "absent.env"))

    assert result.returncode != 0
    assert "SECRET_KEY must be set unless DEBUG=1" in result.stderr


def test_a_file_without_secret_key_or_debug_does_not_lift_the_requirement(tmp_path):
    stray = tmp_path / "local.env"
    stray.write_text("ALLOWED_HOSTS=example.org\n")

    result = load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(stray))

    assert result.returncode != 0
    assert "SECRET_KEY must be set unless DEBUG=1" in result.stderr


def test_an_empty_file_setting_reads_no_file_not_even_the_checkouts(tmp_path):
    # The checkout's own var/local.env may exist (after make run): it must not be read.
    result = load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV="")

    assert result.returncode != 0
    assert "SECRET_KEY must be set unless DEBUG=1" in result.stderr


def test_a_malformed_line_is_reported_with_its_file_and_line(tmp_path):
    bad = tmp_path / "local.env"
    bad.write_text("DEBUG=1\n\nexport SECRET_KEY abc\n")

    result = load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(bad))

    assert result.returncode != 0
    assert f"{bad} line 3: expected KEY=VALUE, got 'export SECRET_KEY abc'" in result.stderr


def test_comments_blank_lines_and_quotes_are_read_as_people_write_them(tmp_path):
    from config.settings import local_settings_read

    path = tmp_path / "local.env"
    path.write_text("# mine\n\n  DEBUG = 1\nSECRET_KEY=\"a b=c\"\nLOG_LEVEL='INFO'\nEMPTY=\n")

    assert local_settings_read(str(path)) == {
        "DEBUG": "1",
        "SECRET_KEY": "a b=c",
        "LOG_LEVEL": "INFO",
        "EMPTY": "",
    }


def test_the_test_suite_reads_no_local_file():
    assert os.environ["BRANCHPOINT_LOCAL_ENV"] == ""
    assert settings.LOCAL_SETTINGS_FILE == ""


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make (make test runs the suite with it)")
def test_make_writes_the_file_once_with_a_new_key_for_its_owner_only(tmp_path):
    path = tmp_path / "var" / "local.env"

    def make_local_env() -> None:
        subprocess.run(
            ["make", "-s", "local-env", f"LOCAL_ENV={path}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            timeout=60,
        )

    make_local_env()
    first = path.read_text()
    make_local_env()

    assert path.read_text() == first, "make local-env overwrote an existing file"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = dict(line.split("=", 1) for line in first.splitlines() if line and not line.startswith("#"))
    assert lines["DEBUG"] == "1"
    assert len(lines["SECRET_KEY"]) >= 50
    values = loaded(load_settings(tmp_path, BRANCHPOINT_LOCAL_ENV=str(path)))
    assert values["DEBUG"] is True
    assert values["SECRET_KEY"] == lines["SECRET_KEY"]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make (make test runs the suite with it)")
def test_make_leaves_a_file_someone_wrote_alone(tmp_path):
    path = tmp_path / "local.env"
    path.write_text("DEBUG=1\nSECRET_KEY=mine\nDATABASE_URL=postgres://me@localhost/branchpoint\n")

    subprocess.run(
        ["make", "-s", "local-env", f"LOCAL_ENV={path}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )

    assert path.read_text() == "DEBUG=1\nSECRET_KEY=mine\nDATABASE_URL=postgres://me@localhost/branchpoint\n"
