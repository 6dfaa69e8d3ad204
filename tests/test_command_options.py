"""Every management command of the project takes its options only as spelled in full.

argparse reads an abbreviation as the one option it begins, so a mistyped or missing
option silently becomes another: ``export_trees --format csv --speaker USER=user`` was
read as ``--speaker-column USER=user``. The rules:

- every command of the project's apps subclasses ``trees.audit.TextCommand``, which
  turns abbreviations off in one place;
- on the command line, each option of each command (Django's own too) cut short by one
  character is refused as an unrecognised argument, with exit code 2, before the command
  runs;
- options spelled in full still work, ``--name=value`` included.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand

from trees.audit import TextCommand

ROOT = Path(__file__).resolve().parents[1]


def project_commands() -> dict[str, str]:
    """The commands whose app is one of the project's (not Django's or a library's): name → app."""
    found = {}
    for name, app in get_commands().items():
        path = Path(importlib.import_module(app).__file__).resolve()
        if path.is_relative_to(ROOT) and ".venv" not in path.relative_to(ROOT).parts:
            found[name] = app
    return found


def command(name: str) -> BaseCommand:
    return load_command_class(project_commands()[name], name)


def minimal_argv(parser: argparse.ArgumentParser) -> list[str]:
    """Arguments that satisfy the parser's required positionals and options."""
    argv: list[str] = []
    for action in parser._actions:
        value = str(action.choices[0]) if action.choices else "1" if action.type is int else "x"
        if not action.option_strings:
            if action.nargs not in ("?", "*"):
                argv.append(value)
        elif action.required:
            argv.append(f"{action.option_strings[-1]}={value}")
    return argv


def abbreviations(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    """Each long option cut short by one character (unless that is an option itself)."""
    spelled = {option for action in parser._actions for option in action.option_strings}
    cut = []
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and len(option) > 3 and option[:-1] not in spelled:
                cut.append((option[:-1], action))
    return cut


def refused(name: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run ``manage.py NAME ARGV`` as from a shell, without letting the command itself run."""
    instance = command(name)
    ran = []
    instance.execute = lambda *args, **options: ran.append(options)  # type: ignore[method-assign]
    with pytest.raises(SystemExit) as exited:
        instance.run_from_argv(["manage.py", name, *argv])
    assert ran == []
    return exited.value.code, capsys.readouterr().err


def test_every_command_of_the_project_takes_options_as_text_command_does():
    commands = project_commands()
    assert {"import_trees", "export_trees", "usernames_check", "agreement", "load_demo"} <= commands.keys()
    assert sorted(name for name in commands if not isinstance(command(name), TextCommand)) == []


@pytest.mark.parametrize("name", sorted(project_commands()))
def test_each_option_cut_short_is_refused_with_exit_code_2(name, capsys):
    parser = command(name).create_parser("manage.py", name)
    assert not parser.allow_abbrev
    base = minimal_argv(parser)
    cut = abbreviations(parser)
    assert any(short == "--verbosit" for short, _ in cut)
    for short, action in cut:
        if action.nargs == 0:
            given = [short]
        else:
            value = str(action.choices[0]) if action.choices else "1" if action.type is int else "x"
            given = [f"{short}={value}"]

        code, err = refused(name, [*base, *given], capsys)

        assert code == 2, (short, err)
        assert f"unrecognized arguments: {given[0]}" in err, (short, err)


def test_export_trees_refuses_speaker_instead_of_reading_it_as_speaker_column(capsys):
    code, err = refused("export_trees", ["demo", "--format", "csv", "--speaker", "USER=user"], capsys)

    assert code == 2
    assert "unrecognized arguments: --speaker USER=user" in err


def test_options_spelled_in_full_still_work():
    export = command("export_trees").create_parser("manage.py", "export_trees")
    imports = command("import_trees").create_parser("manage.py", "import_trees")

    exported = export.parse_args(["demo", "--format=csv", "--speaker-column", "who", "-o", "out.csv"])
    imported = imports.parse_args(["demo", "in.csv", "--format", "csv", "--speaker", "Agent=assistant"])

    assert (exported.format_name, exported.speaker_column, exported.output) == ("csv", "who", "out.csv")
    assert (imported.speaker, imported.speaker_column) == (["Agent=assistant"], "speaker")
