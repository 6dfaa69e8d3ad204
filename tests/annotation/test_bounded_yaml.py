"""Every YAML the platform reads goes through one loader with bounds (``annotation.bounded_yaml``):
project configs (with ``quality:`` and ``workflow:``), Potato's configs and rubrics.

- An alias counts as the values it stands for: a 2.8 KB rubric of nested aliases ("billion
  laughs") stood for billions of values and took 10.7 s and 339 MB to read; it is refused
  at the alias that passes ``BRANCHPOINT_YAML_MAX_NODES``, having composed a few hundred.
- At most ``BRANCHPOINT_YAML_MAX_ALIASES`` aliases, and none inside what it stands for.
- Collections nest at most ``BRANCHPOINT_YAML_MAX_DEPTH`` levels: a ``config_yaml`` nested
  5,000 deep was a server error (RecursionError).
- What is read is JSON: text that cannot be stored (YAML's escapes spell NUL and lone
  surrogates), ``.inf``, ``!!binary`` and the like are refused; dates stay strings.

Each refusal is a problem with the line and column, the way the API, the admin and the
commands already show a config's problems.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.bounded_yaml import load_yaml
from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import parse_config
from evaluation.models import Rubric
from evaluation.rubrics import parse_rubric
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items


def laughs(levels: int, width: int = 9) -> str:
    """The classic alias bomb: each level a list of ``width`` aliases to the level before."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def rubric_bomb(levels: int = 6) -> str:
    """A rubric whose one criterion's check is ``levels`` levels of nine ``any`` aliases deep
    (six: a million checks, which took about 10 s and 300 MB to read; seven: minutes)."""
    lines = ["name: bomb", "x0: &c0 {exists: metadata.a}"]
    for level in range(1, levels + 1):
        lines.append(f"x{level}: &c{level} {{any: [{', '.join([f'*c{level - 1}'] * 9)}]}}")
    lines += [
        "criteria:",
        f"  - {{key: k, question: q, weight: 1, check: *c{levels}}}",
        "outcomes:",
        "  - {name: done}",
    ]
    return "\n".join(lines) + "\n"


def problems(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as caught:
        load_yaml(text)
    return [str(problem) for problem in caught.value.problems]


# -- aliases -------------------------------------------------------------------------------------


def test_an_alias_bomb_is_refused_at_the_alias_that_passes_the_bound():
    assert problems(laughs(9)) == [
        "line 7 column 10: the document holds more than 100,000 values, aliases counted as the values "
        "they stand for (BRANCHPOINT_YAML_MAX_NODES)"
    ]


def test_the_rubric_alias_bomb_is_refused_as_a_rubric():
    text = rubric_bomb()
    assert len(text) < 3000

    with pytest.raises(ProblemsError) as caught:
        parse_rubric(text)

    assert [problem.code for problem in caught.value.problems] == ["yaml_too_large"]


def test_aliases_within_the_bounds_are_read_as_yaml_reads_them():
    assert load_yaml(laughs(3, width=3))["l3"] == [[["lol"] * 3] * 3] * 3


def test_the_bounds_are_settings(settings: Any):
    settings.BRANCHPOINT_YAML_MAX_NODES = 10

    assert problems(laughs(2, width=3)) == [
        "line 3 column 10: the document holds more than 10 values, aliases counted as the values they "
        "stand for (BRANCHPOINT_YAML_MAX_NODES)"
    ]


def test_aliases_are_counted(settings: Any):
    settings.BRANCHPOINT_YAML_MAX_ALIASES = 5

    assert problems("a: &a 1\nb: [" + ", ".join(["*a"] * 6) + "]\n") == [
        "line 2 column 25: more than 5 aliases (BRANCHPOINT_YAML_MAX_ALIASES)"
    ]


def test_an_alias_inside_what_it_stands_for_is_refused():
    assert problems("a: &a [1, *a]\n") == [
        "line 1 column 11: the alias *a is inside what it stands for (a cycle)"
    ]


# -- depth ---------------------------------------------------------------------------------------


def test_nesting_past_the_bound_is_refused_however_deep():
    deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"

    assert problems(deep) == ["line 1 column 67: nests more than 64 levels deep (BRANCHPOINT_YAML_MAX_DEPTH)"]


@pytest.mark.django_db
def test_a_project_config_nested_5000_deep_is_a_400_not_a_server_error():
    root = person("root", is_superuser=True, is_staff=True)
    dataset_with("deep-trees", potato_items("d", "D", 1))
    client = Client()
    client.force_login(root)
    config = (
        "annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\nx: "
        + "[" * 5000
        + "]" * 5000
    )

    response = client.post(
        "/api/v1/projects",
        data=json.dumps({"name": "deep", "dataset": "deep-trees", "config_yaml": config}),
        content_type="application/json",
    )

    assert response.status_code == 400, response.content
    [error] = response.json()["errors"]
    assert error["path"] == "config_yaml.line 3 column 67"
    assert not Project.objects.exists()


# -- what is read --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            'a: "\\ud800"\n',
            "line 1 column 4: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored",
        ),
        ('a: "x\\0y"\n', "line 1 column 4: contains a NUL character (\\u0000), which cannot be stored"),
        (
            '"\\udfff": 1\n',
            "line 1 column 1: contains a lone UTF-16 surrogate (\\udfff), which is not text and cannot be stored",
        ),
        ("a: .inf\n", "line 1 column 4: .inf is not a finite number, which JSON cannot hold"),
        ("a: 1.0e+400\n", "line 1 column 4: 1.0e+400 is not a finite number, which JSON cannot hold"),
        ("a: !!binary aGk=\n", "line 1 column 4: !!binary values are not read (only what JSON holds)"),
        ("a: !!set {x}\n", "line 1 column 4: !!set values are not read (only what JSON holds)"),
        (
            "a: !!timestamp 2025-03-11\n",
            "line 1 column 4: !!timestamp values are not read (only what JSON holds)",
        ),
    ],
    ids=[
        "a lone surrogate",
        "a NUL",
        "a key",
        "infinity",
        "a number too large",
        "binary",
        "a set",
        "a timestamp",
    ],
)
def test_only_what_json_holds_and_a_database_stores_is_read(text: str, problem: str):
    assert problems(text) == [problem]


def test_dates_stay_the_strings_they_are_written_as():
    assert load_yaml("start: 2025-03-11\nat: 2025-03-11 10:00:00\n") == {
        "start": "2025-03-11",
        "at": "2025-03-11 10:00:00",
    }


def test_a_project_config_with_an_escape_that_is_not_text_is_refused_by_line():
    config = 'annotation_schemes:\n  - annotation_type: text\n    name: note\n    description: "\\udc80"\n'

    with pytest.raises(ProblemsError) as caught:
        parse_config(config)

    assert [str(problem) for problem in caught.value.problems] == [
        "line 4 column 18: contains a lone UTF-16 surrogate (\\udc80), which is not text and cannot be stored"
    ]


@pytest.mark.django_db
def test_create_rubric_exits_2_on_an_alias_bomb(tmp_path: Any):
    path = tmp_path / "bomb.yaml"
    path.write_text(rubric_bomb())
    err = io.StringIO()

    with pytest.raises(CommandError) as caught:
        call_command("create_rubric", str(path), stdout=io.StringIO(), stderr=err)

    assert caught.value.returncode == 2
    assert "(BRANCHPOINT_YAML_MAX_NODES)" in err.getvalue()
    assert not Rubric.objects.exists()


@pytest.mark.parametrize("text", ["\x9e", "name: a\x85b\x07"])
def test_a_character_yaml_does_not_allow_is_a_problem_with_its_place_not_an_error(text: str):
    with pytest.raises(ProblemsError) as refused:
        load_yaml(text)
    [problem] = refused.value.problems
    assert problem.code == "yaml"
    assert problem.path.startswith("character ")
