"""The documentation says what the code does: README.md and docs/*.md, checked against it.

The rules, each a test per place in the docs (its id names the file and line):

- A shell command (a fenced ``sh`` block) runs as written from the checkout's root
  after ``make run``. So a ``manage.py`` command is run with the Makefile's
  ``.venv/bin/python`` and no variable to set; the command exists (its ``--help``
  runs) and its own parser accepts the arguments shown, without running it. A
  ``bench/`` script's parser accepts them too; a ``make`` target exists; a file the
  command names from the repository is there.
- A usage line (a fenced ``text`` block line starting with ``manage.py``) names a
  command that exists, and only options it has, with values it takes.
- A page address (``/projects/...``, ``/collect/...``, ``/admin/...``, ``/api/...``,
  ``/accounts/...``) resolves once its placeholders (``<name>``, ``<tree_id>``,
  ``$ITEM``) are filled in; an API address reaches an endpoint, not the JSON 404,
  and the endpoint takes the method written before it.
- The README's tour works: an annotator signs in, opens a project's page, starts
  annotating and lands on the annotate page at the address the README gives; on
  the demo, with the logins ``load_demo`` prints and the README's own commands.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import BaseCommand, CommandError
from django.urls import Resolver404, resolve, reverse

from tests.factories import PASSWORD, ChainTreeFactory, MembershipFactory, ProjectFactory, UserFactory

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The interpreter the Makefile installs into (``VENV := .venv``, ``BIN := $(VENV)/bin``).
VENV_PYTHON = ".venv/bin/python"
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
REPOSITORY_DIRS = ("platform/", "tests/", "bench/", "config/", "docs/", "static/", "templates/")


# -- reading the docs -------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Command:
    """One simple command of a shell line: ``env`` assignments, then ``words``."""

    place: Place
    text: str
    env: tuple[str, ...]
    words: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.place}: `{self.text}`"


@dataclass(frozen=True)
class Usage:
    place: Place
    text: str
    command: str
    rest: str = field(repr=False)


@dataclass(frozen=True)
class Address:
    place: Place
    method: str
    path: str

    def __str__(self) -> str:
        return f"{self.place}: {self.method + ' ' if self.method else ''}{self.path}"


def fenced_blocks(path: Path) -> list[tuple[str, list[tuple[int, str]]]]:
    """(language, [(line number, text)]) of each fenced block, its indentation taken off."""
    blocks, current, fence, indent, language = [], [], None, 0, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        opening = re.match(r"^(\s*)(```|~~~)\s*([\w+-]*)", line)
        if fence is None and opening:
            indent, fence, language, current = len(opening.group(1)), opening.group(2), opening.group(3), []
        elif fence is not None and line.strip() == fence:
            blocks.append((language, current))
            fence = None
        elif fence is not None:
            current.append((number, line[indent:] if line[:indent].isspace() else line))
    return blocks


def logical_lines(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lines with their ``\\`` continuations joined, each with the number of its first line;
    here-document bodies left out."""
    joined, start, parts, heredoc_end = [], None, [], None
    for number, text in lines:
        if heredoc_end is not None:
            if text.strip() == heredoc_end:
                heredoc_end = None
            continue
        start = number if start is None else start
        if text.rstrip().endswith("\\"):
            parts.append(text.rstrip()[:-1])
            continue
        parts.append(text)
        whole = " ".join(part.strip() for part in parts)
        joined.append((start, whole))
        heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", whole)
        heredoc_end = heredoc.group(1) if heredoc else None
        start, parts = None, []
    return joined


def simple_commands(place: Place, line: str) -> list[Command]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as error:
        raise ValueError(f"{place}: not a shell line ({error}): {line}") from None
    commands, words = [], []
    for token in [*tokens, ";"]:
        if set(token) <= set("();<>|&"):
            env = tuple(words[: _assignments(words)])
            if words[len(env) :]:  # a bare assignment (TOKEN=$(...)) runs nothing itself
                commands.append(Command(place, line, env, tuple(words[len(env) :])))
            words = []
        else:
            words.append(token)
    return commands


def _assignments(words: list[str]) -> int:
    count = 0
    while count < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[count]):
        count += 1
    return count


def commands_in(languages: set[str]) -> tuple[Command, ...]:
    found = []
    for path in DOCS:
        for language, lines in fenced_blocks(path):
            if language in languages:
                for number, line in logical_lines(lines):
                    found += simple_commands(Place(path, number), line)
    return tuple(found)


@cache
def shell_commands() -> tuple[Command, ...]:
    """The commands of ``sh`` blocks: they run as written after ``make run``."""
    return commands_in(SHELL_LANGUAGES)


@cache
def template_commands() -> tuple[Command, ...]:
    """The commands of ``text`` blocks: usage lines and templates to fill in (production's)."""
    return commands_in({"text"})


@cache
def usages() -> tuple[Usage, ...]:
    """``manage.py NAME ...`` lines of ``text`` blocks, with their indented continuation lines."""
    found: list[Usage] = []
    for path in DOCS:
        for language, lines in fenced_blocks(path):
            if language != "text":
                continue
            in_usage = False
            for number, text in lines:
                usage = re.match(r"^(?:\S*python\S* )?manage\.py (\S+)(.*)$", text)
                if usage:
                    found.append(Usage(Place(path, number), text.strip(), usage.group(1), usage.group(2)))
                elif in_usage and text.startswith((" ", "\t")):
                    last = found.pop()
                    found.append(
                        Usage(last.place, f"{last.text} {text.strip()}", last.command, f"{last.rest} {text}")
                    )
                in_usage = bool(usage) or (in_usage and text.startswith((" ", "\t")))
    return tuple(found)


ADDRESS = re.compile(
    r"(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?"
    r"(?:https?://(?:127\.0\.0\.1|localhost)(?::\d+)?|(?<![\w.:/<>$-]))"
    r"(/(?:admin|api|projects|collect|accounts)(?:/[^\s`'\"()\[\]|,;]*)?)"
)


@cache
def addresses() -> tuple[Address, ...]:
    """Every page or API address the docs give, once per file, with the method written before it."""
    found, seen = [], set()
    for path in DOCS:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in ADDRESS.finditer(line):
                address = match.group(2)
                address = address if address.endswith("...") else address.rstrip(".:")
                key = (path, match.group(1) or "", address)
                if key not in seen:
                    seen.add(key)
                    found.append(Address(Place(path, number), match.group(1) or "", address))
    return tuple(found)


def filled_in(address: str, **values: str) -> str:
    """The address with its query left off and its placeholders filled in: ``<name>`` and
    ``{name}`` with ``values[name]`` (else ``1`` for an id, ``example`` for a name), ``$X`` with 1."""

    def value(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        return values.get(name, "1" if name == "id" or name.endswith("_id") else "example")

    path = re.split(r"[?#]", address, maxsplit=1)[0]
    path = re.sub(r"<([a-z_]+)>|\{([a-z_]+)\}", value, path)
    return re.sub(r"\$[A-Z_]+", "1", path)


def manage_commands() -> list[Command]:
    return [command for command in shell_commands() if "manage.py" in command.words]


def command_id(command: Command) -> str:
    words = command.words
    name = words[words.index("manage.py") + 1] if "manage.py" in words else " ".join(words[:2])
    return f"{command.place} {name}"


@cache
def django_command(name: str) -> BaseCommand | None:
    app = get_commands().get(name)
    return None if app is None else load_command_class(app, name)


# -- shell commands -----------------------------------------------------------------------------


def test_the_docs_show_commands_and_addresses_to_check():
    assert len(manage_commands()) >= 40, "fewer manage.py commands than the docs have: is the parser broken?"
    assert len(usages()) >= 10
    assert len(addresses()) >= 60


def branchpoint_commands() -> list[str]:
    return sorted(
        name
        for name, app in get_commands().items()
        if app.split(".")[0] in {"trees", "annotation", "evaluation"}
    )


@pytest.mark.parametrize("name", branchpoint_commands())
def test_every_branchpoint_command_has_a_usage_line(name):
    if name not in {usage.command for usage in usages()}:
        pytest.fail(f"manage.py {name} has no usage line in README.md or docs/*.md (a `text` block)")


@pytest.mark.parametrize("command", manage_commands(), ids=command_id)
def test_a_manage_py_command_runs_with_the_makefiles_python_and_nothing_to_set(command):
    position = command.words.index("manage.py")
    interpreter = command.words[position - 1] if position else None
    assert interpreter == VENV_PYTHON and position == 1, (
        f"{command}: run manage.py as `{VENV_PYTHON} manage.py ...`, the venv `make run` installs into"
    )
    assert not command.env, (
        f"{command}: sets {', '.join(command.env)}; after `make run` nothing needs setting "
        "(var/local.env has DEBUG and SECRET_KEY)"
    )


@pytest.mark.parametrize("command", manage_commands(), ids=command_id)
def test_a_documented_command_exists_and_shows_its_help(command, capsys):
    name = command.words[command.words.index("manage.py") + 1]
    if django_command(name) is None:
        pytest.fail(f"{command}: there is no manage.py command {name!r}")

    with pytest.raises(SystemExit) as exited:
        load_command_class(get_commands()[name], name).run_from_argv(["manage.py", name, "--help"])

    assert exited.value.code in (0, None), f"{command}: `manage.py {name} --help` failed"
    assert f"usage: manage.py {name}" in capsys.readouterr().out


@pytest.mark.parametrize("command", manage_commands(), ids=command_id)
def test_a_documented_command_takes_the_arguments_shown(command, capsys):
    words = command.words
    name, arguments = words[words.index("manage.py") + 1], list(words[words.index("manage.py") + 2 :])
    found = django_command(name)
    if found is None:
        pytest.fail(f"{command}: there is no manage.py command {name!r}")
    parser = found.create_parser("manage.py", name)

    try:
        parser.parse_args(arguments)
    except (SystemExit, CommandError) as refused:
        pytest.fail(
            f"{command}: manage.py {name} refuses these arguments: {refused} {capsys.readouterr().err}"
        )


BENCH_ARGUMENTS_ONLY = """
import argparse, runpy, sys

class Parsed(Exception):
    pass

parse_args = argparse.ArgumentParser.parse_args

def parse_and_stop(self, args=None, namespace=None):
    parse_args(self, args, namespace)
    raise Parsed

argparse.ArgumentParser.parse_args = parse_and_stop
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except Parsed:
    sys.exit(0)
sys.exit("the script ended without parsing its arguments")
"""


def bench_commands() -> list[Command]:
    return [c for c in shell_commands() if len(c.words) > 1 and c.words[1].startswith("bench/")]


@pytest.mark.parametrize("command", bench_commands(), ids=command_id)
def test_a_documented_benchmark_takes_the_arguments_shown(command):
    script = ROOT / command.words[1]
    assert command.words[0] == VENV_PYTHON, f"{command}: run the benchmarks with {VENV_PYTHON}"
    assert script.is_file(), f"{command}: there is no {command.words[1]}"

    parsed = subprocess.run(
        [sys.executable, "-c", BENCH_ARGUMENTS_ONLY, *command.words[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    if parsed.returncode != 0:
        pytest.fail(f"{command}: the script refuses these arguments:\n{parsed.stderr}")


def make_commands() -> list[Command]:
    return [c for c in (*shell_commands(), *template_commands()) if c.words[0] == "make"]


@pytest.mark.parametrize("command", make_commands(), ids=command_id)
def test_a_documented_make_target_exists(command):
    targets = set(re.findall(r"^([A-Za-z0-9_.-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE))
    words = command.words[command.words.index("make") + 1 :]
    for target in [word for word in words if not word.startswith("-") and "=" not in word]:
        assert target in targets, f"{command}: the Makefile has no target {target!r}"


def commands_naming_files() -> list[Command]:
    return [
        command
        for command in (*shell_commands(), *template_commands())
        if any(word.startswith(REPOSITORY_DIRS) for word in command.words)
    ]


@pytest.mark.parametrize("command", commands_naming_files(), ids=command_id)
def test_the_files_a_command_names_are_in_the_repository(command):
    for word in command.words:
        if word.startswith(REPOSITORY_DIRS) and not (ROOT / word).exists():
            pytest.fail(f"{command}: {word} is not in the repository")


# -- usage lines -------------------------------------------------------------------------------


@pytest.mark.parametrize("usage", usages(), ids=lambda usage: f"{usage.place} {usage.command}")
def test_a_usage_line_names_a_command_with_the_options_shown(usage):
    command = django_command(usage.command)
    if command is None:
        pytest.fail(f"{usage.place}: there is no manage.py command {usage.command!r}")
    actions = command.create_parser("manage.py", usage.command)._option_string_actions

    for option, value in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)(?:(?=[ =](\S+)))?", usage.rest):
        if option not in actions:
            pytest.fail(f"{usage.place}: manage.py {usage.command} has no option {option}")
        choices = actions[option].choices
        listed = re.fullmatch(r"([a-z0-9_-]+(?:\|[a-z0-9_-]+)+)\]?", value or "")
        if choices is not None and listed:
            unknown = [choice for choice in listed.group(1).split("|") if choice not in choices]
            if unknown:
                pytest.fail(
                    f"{usage.place}: {option} of manage.py {usage.command} takes no {', '.join(unknown)} "
                    f"(it takes {', '.join(map(str, choices))})"
                )


# -- addresses ---------------------------------------------------------------------------------


def endpoint_of(path: str):
    """The view an address reaches, or None (no route, or the API's JSON 404 for the rest)."""
    try:
        match = resolve(path)
    except Resolver404:
        return None
    if match.url_name is None and match.route == "api/v1/":
        return None  # the API's catch-all: a JSON 404 for every address it does not have
    return match


def is_api_prefix(address: str) -> bool:
    """``/api/v1/.../`` or ``.../...``: a place under which endpoints are, not an endpoint."""
    path = filled_in(address)
    return address.endswith(("...", "…")) or (path.startswith("/api/v1/") and path.endswith("/"))


@pytest.mark.parametrize("address", addresses(), ids=str)
def test_a_documented_address_reaches_a_page_or_endpoint(address):
    if is_api_prefix(address.path):
        prefix = filled_in(address.path.rstrip(".…"))
        under = [
            other
            for other in addresses()
            if not is_api_prefix(other.path)
            and filled_in(other.path).startswith(prefix)
            and endpoint_of(filled_in(other.path))
        ]
        assert under, f"{address}: the docs give no endpoint under {prefix} that exists"
        return

    match = endpoint_of(filled_in(address.path))

    if match is None:
        pytest.fail(f"{address}: no page or endpoint has this address")
    view = getattr(match.func, "view_class", None)
    if address.method and view is not None and not hasattr(view, address.method.lower()):
        taken = ", ".join(method.upper() for method in view.http_method_names if hasattr(view, method))
        pytest.fail(f"{address}: the endpoint does not take {address.method} (it takes {taken})")


# -- the README's tour -------------------------------------------------------------------------


def readme_addresses(view_name: str) -> list[str]:
    return [
        address.path
        for address in addresses()
        if address.place.path.name == "README.md"
        and address.place.path.parent == ROOT
        and (match := endpoint_of(filled_in(address.path)))
        and match.view_name == view_name
    ]


def address_pattern(address: str, **values: str) -> re.Pattern:
    """A regular expression of the address with its placeholders as what may stand there."""
    parts = re.split(r"(<[a-z_]+>)", address)
    return re.compile(
        "".join(
            re.escape(values.get(part[1:-1], "")) or r"\d+" if part.startswith("<") else re.escape(part)
            for part in parts
        )
    )


@pytest.mark.django_db
def test_the_readme_route_from_a_project_page_to_the_annotate_page(client):
    (login,) = set(readme_addresses("login"))
    projects = [a for a in readme_addresses("annotation:project") if not a.startswith("/projects/<")]
    annotate = [a for a in readme_addresses("annotation:item") if a.startswith("/projects/<name>/")]
    assert projects, "README.md shows no project page to start annotating from"
    assert annotate, "README.md gives no annotate page address (/projects/<name>/items/<tree_id>/)"
    tree = ChainTreeFactory()
    project = ProjectFactory(name="tour", dataset=tree.dataset)
    MembershipFactory(project=project, user=UserFactory(username="alice"), role="annotator")

    signed_in = client.post(login, {"username": "alice", "password": PASSWORD})
    project_page = re.sub(r"^/projects/[^/]+/", f"/projects/{project.name}/", projects[0])
    page = client.get(project_page)
    started = client.post(project_page)

    assert signed_in.status_code == 302, f"README.md's sign-in page {login} did not sign the annotator in"
    assert page.status_code == 200 and "Start annotating" in page.text
    # Start annotating answers with the leased item's annotate page, which names its own address.
    assert "annotation/annotate.html" in [template.name for template in started.templates]
    shown = annotate_page_address(started)
    for expected in annotate:
        assert address_pattern(expected, name=project.name).fullmatch(shown), (
            f"Start annotating showed {shown}, not README.md's annotate page {expected}"
        )
    item = client.get(shown)
    assert item.status_code == 200
    assert "annotation/annotate.html" in [template.name for template in item.templates]


def annotate_page_address(response: Any) -> str:
    """The address an annotate page's script shows (``urls.page`` of its data)."""
    found = re.search(
        r'<script id="annotate-data" type="application/json">(.*?)</script>', response.text, re.S
    )
    assert found, "the answer is not an annotate page"
    return json.loads(found.group(1))["urls"]["page"]


def demo_logins(printed: str) -> dict[str, str]:
    return dict(re.findall(r"user '([^']+)'\s+password '([^']+)'", printed))


@pytest.fixture
def checkout_copy(tmp_path, monkeypatch):
    """A working directory like the checkout's (its sample files, an empty var/), where the
    README's commands write their files."""
    for name in ("tests", "platform"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "var").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.django_db
def test_the_readme_tour_runs_on_the_demo(client, checkout_copy):
    printed = io.StringIO()
    call_command("load_demo", "--force", stdout=printed)
    logins = demo_logins(printed.getvalue())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    assert {"admin", "annotator"} <= logins.keys(), f"load_demo printed no such logins:\n{printed.getvalue()}"
    for username, password in logins.items():
        assert f"`{username}`" in readme and f"`{password}`" in readme, (
            f"README.md does not give the demo login {username} / {password}"
        )
    for command in [c for c in manage_commands() if c.place.path == ROOT / "README.md"]:
        arguments = command.words[command.words.index("manage.py") + 1 :]
        try:
            call_command(*arguments, stdout=io.StringIO(), stderr=io.StringIO())
        except CommandError as error:
            pytest.fail(f"{command}: failed on the demo: {error}")

    sign_in(client, "annotator", logins["annotator"])
    for project_page in [a for a in readme_addresses("annotation:project") if "<" not in a]:
        started = client.post(project_page)
        assert started.status_code == 200 and "annotate-data" in started.text, (
            f"README.md: Start annotating on {project_page} handed out nothing"
        )
        shown, annotate = annotate_page_address(started), f"{project_page}items/<tree_id>/"
        assert address_pattern(annotate).fullmatch(shown), f"{shown} is not {annotate}"
        assert client.get(shown).status_code == 200

    sign_in(client, "admin", logins["admin"])
    for address in [a for a in addresses() if a.place.path == ROOT / "README.md" and "<" not in a.path]:
        if address.path.startswith("/api/"):
            continue
        answer = client.get(address.path, follow=True)
        assert answer.status_code == 200, f"{address}: answered {answer.status_code} on the demo (as admin)"


def sign_in(client: Any, username: str, password: str) -> None:
    """Sign in through the login page, as a person does (the lockout needs the request)."""
    client.logout()
    answer = client.post(reverse("login"), {"username": username, "password": password})
    assert answer.status_code == 302, f"README.md: the demo login {username} / {password} is refused"


@pytest.mark.django_db
def test_the_demo_prints_the_addresses_it_is_served_on(checkout_copy):
    printed = io.StringIO()
    call_command("load_demo", "--force", "--address", "127.0.0.1:8080", stdout=printed)
    assert "ready at http://127.0.0.1:8080/" in printed.getvalue()
    assert "admin:     http://127.0.0.1:8080/admin/" in printed.getvalue()
    assert ":8000" not in printed.getvalue()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "load_demo --address $(RUN_ADDRESS)" in makefile, "make run must tell load_demo where it serves"
