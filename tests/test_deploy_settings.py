"""Production settings come from the environment with safe defaults (config/settings.py,
docs/security.md "Production settings: HTTPS, HSTS, CSP"):

- With the documented production environment (read from docs/security.md, so the
  docs and the check cannot drift apart), ``manage.py check --deploy`` finds
  nothing, at warning level. Left out of it, ``SECURE_HSTS_PRELOAD`` (the domain
  owner's commitment, off by default) is the only finding.
- Production redirects http to https and sends HSTS (a year, subdomains) and the
  Content-Security-Policy; cookies are secure. ``X-Forwarded-Proto`` is believed only
  when trusted proxies are named (``BRANCHPOINT_TRUSTED_PROXIES``).
- ``CSP_REPORT_ONLY=1`` sends the same policy as report-only; ``CSP_REPORT_URI`` adds
  where to report.
- DEBUG (development) drops the https rules but keeps the policy enforced.

Each case runs Django afresh in a subprocess: settings are read once, at start.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

DOCS = ROOT / "docs" / "security.md"


def documented_environment() -> dict[str, str]:
    """The production environment docs/security.md shows (its ``sh`` block after "The
    production environment"), with a fresh secret for its ``SECRET_KEY=...``."""
    text = DOCS.read_text()
    block = text[text.index("**The production environment**") :]
    block = block[block.index("```sh\n") + len("```sh\n") :]
    block = block[: block.index("```")]
    env = {}
    for line in block.splitlines():
        name, _, value = line.split("#")[0].strip().partition("=")
        env[name] = value
    assert env.pop("SECRET_KEY") == "..."
    return env | {"SECRET_KEY": secrets.token_urlsafe(50)}


PRODUCTION = documented_environment()


# A request through Django's test client, answered as JSON: status and the headers that matter.
REQUEST = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
settings.ALLOWED_HOSTS = ["branchpoint.example.org"]
response = Client(HTTP_HOST="branchpoint.example.org").get("/accounts/logout/", **{extra})
print(json.dumps({{
    "status": response.status_code,
    "location": response.get("Location"),
    "hsts": response.get("Strict-Transport-Security"),
    "csp": response.get("Content-Security-Policy"),
    "csp_report_only": response.get("Content-Security-Policy-Report-Only"),
    "cookies_secure": [settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE],
}}))
"""


def environment(**changes: str | None) -> dict[str, str]:
    """Only what a production host would set (nothing of the test run's own environment, and
    not the checkout's var/local.env that ``make run`` writes, which would supply a key)."""
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "BRANCHPOINT_LOCAL_ENV": "",
        **PRODUCTION,
    }
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def check_deploy(**changes: str | None) -> subprocess.CompletedProcess[str]:
    return run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], environment(**changes))


def request(
    https: bool = False, headers: dict[str, str] | None = None, **changes: str | None
) -> dict[str, Any]:
    extra = {"secure": https, **(headers or {})}
    done = run(["-c", REQUEST.format(extra=repr(extra))], environment(**changes))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


# check --deploy


def test_check_deploy_is_clean_with_the_documented_production_environment() -> None:
    done = check_deploy()

    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_without_asking_for_preload_the_only_finding_is_preload() -> None:
    done = check_deploy(SECURE_HSTS_PRELOAD=None)

    assert done.returncode == 1
    found = [
        line.split(")")[0] for line in (done.stdout + done.stderr).splitlines() if line.startswith("?: (")
    ]
    assert found == ["?: (security.W021"]


def test_production_refuses_to_start_without_a_secret_key() -> None:
    done = check_deploy(SECRET_KEY=None)

    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


# What production answers


def test_production_redirects_http_to_https() -> None:
    answer = request(https=False)

    assert answer["status"] == 301
    assert answer["location"] == "https://branchpoint.example.org/accounts/logout/"


def test_production_sends_hsts_and_the_policy_and_secures_its_cookies() -> None:
    answer = request(https=True)

    assert answer["status"] == 405
    assert answer["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "default-src 'self'" in answer["csp"]
    assert answer["csp_report_only"] is None
    assert answer["cookies_secure"] == [True, True]


def test_x_forwarded_proto_is_believed_only_from_trusted_proxies() -> None:
    forwarded = {"HTTP_X_FORWARDED_PROTO": "https"}

    assert request(headers=forwarded)["status"] == 405
    assert request(headers=forwarded, BRANCHPOINT_TRUSTED_PROXIES=None)["status"] == 301


def test_hsts_settings_come_from_the_environment() -> None:
    answer = request(
        https=True, SECURE_HSTS_SECONDS="600", SECURE_HSTS_INCLUDE_SUBDOMAINS="0", SECURE_HSTS_PRELOAD="0"
    )

    assert answer["hsts"] == "max-age=600"


def test_the_policy_can_be_report_only_with_a_report_address() -> None:
    answer = request(https=True, CSP_REPORT_ONLY="1", CSP_REPORT_URI="https://reports.example.org/csp")

    assert answer["csp"] is None
    assert "default-src 'self'" in answer["csp_report_only"]
    assert "report-uri https://reports.example.org/csp" in answer["csp_report_only"]


def test_development_drops_the_https_rules_but_keeps_the_policy() -> None:
    answer = request(https=False, DEBUG="1")

    assert answer["status"] == 405
    assert answer["hsts"] is None
    assert "default-src 'self'" in answer["csp"]
    assert answer["cookies_secure"] == [False, False]


@pytest.mark.parametrize("name", ["SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"])
def test_each_https_rule_can_be_turned_off_for_a_site_that_must(name: str) -> None:
    code = "import django; django.setup(); from django.conf import settings; print(getattr(settings, {!r}))"

    done = run(["-c", code.format(name)], environment(**{name: "0"}))

    assert done.stdout.strip() == "False"
