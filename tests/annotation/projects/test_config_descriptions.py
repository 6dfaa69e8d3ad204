"""Potato's ``description`` keys: what each scheme is for, and what the path is for.

The rules:

- every scheme of ``annotation_schemes`` has a ``description``, as Potato requires:
  a config without one is refused, the problem naming the scheme's key path, at
  every door that takes a config in (the command, the admin's form, the API, an
  update of a project's config);
- a ``node_scheme`` inside ``tree_annotation`` needs none (Potato asks for none there);
- a project saved before the rule keeps working: its own text is read back without it,
  and the rule applies when its config is next edited;
- ``path_selection.description`` says what to choose, "Select the best response path"
  (Potato's default) when the config gives none; it reaches the annotate page.

Root is a superuser; Alice annotates.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Project
from annotation.problems import ProblemsError
from annotation.projects.config import parse_config, project_config
from annotation.projects.services import project_config_update
from annotation.schemes.tree import DEFAULT_PATH_DESCRIPTION
from annotation.work.assignment import item_next
from tests.annotation.annotator_items import BEST_PATH, SEED_CONFIGS, SEED_ITEM, person, project_over
from tests.factories import DatasetFactory, ProjectFactory

pytestmark = pytest.mark.django_db

# Three schemes, the third without the description Potato requires.
UNDESCRIBED = """\
annotation_schemes:
  - {annotation_type: likert, name: quality, description: "How good is the reply?", size: 5}
  - {annotation_type: text, name: notes, description: "Anything else?"}
  - {annotation_type: radio, name: verdict, labels: [good, bad]}
"""
REFUSED = (
    "annotation_schemes[2].description: is required (Potato requires every scheme to have a description)"
)
PATH_ONLY = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: best
    description: Find the best conversation
    path_selection: {enabled: true}
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        parse_config(text)
    return [str(problem) for problem in error.value.problems]


# Required


def test_a_scheme_without_a_description_is_refused_naming_its_key_path():
    assert problems_of(UNDESCRIBED) == [REFUSED]


def test_the_missing_description_is_reported_with_the_schemes_other_problems():
    text = "annotation_schemes:\n  - {annotation_type: likert, name: quality, size: 1}\n"

    assert problems_of(text) == [
        "annotation_schemes[0].description: is required (Potato requires every scheme to have a description)",
        "annotation_schemes[0].size: must be an integer ≥ 2",
    ]


def test_every_documented_potato_config_has_its_descriptions_and_loads():
    assert [parse_config(text).schemes[0].description for text in SEED_CONFIGS] == [
        "Evaluate the conversation tree",
        "Rate each response in the conversation",
        "Navigate the conversation tree",
        "Evaluate each response on multiple criteria",
        "Compare response options at each decision point",
    ]


def test_a_node_scheme_needs_no_description_of_its_own():
    # The documented multi_criteria config: its multirate node scheme has none.
    [scheme] = parse_config(SEED_CONFIGS[3]).schemes

    assert scheme.node_scheme.description == ""


# At every door


def test_the_command_refuses_it_with_exit_status_2(tmp_path):
    DatasetFactory(name="support")
    config = tmp_path / "config.yaml"
    config.write_text(UNDESCRIBED)
    err = io.StringIO()

    with pytest.raises(CommandError) as error:
        call_command("create_project", "judging", "--dataset", "support", "--config", str(config), stderr=err)

    assert error.value.returncode == 2
    assert err.getvalue().splitlines() == [REFUSED]
    assert not Project.objects.exists()


def test_the_admin_shows_it_on_the_form():
    dataset = DatasetFactory(name="support")
    client = Client()
    client.force_login(person("root", is_staff=True, is_superuser=True))
    form = {
        "name": "judging",
        "title": "",
        "dataset": dataset.pk,
        "mode": "annotate",
        "config_yaml": UNDESCRIBED,
        "instructions": "",
        "memberships-TOTAL_FORMS": 0,
        "memberships-INITIAL_FORMS": 0,
        "memberships-MIN_NUM_FORMS": 0,
        "memberships-MAX_NUM_FORMS": 1000,
    }

    response = client.post(reverse("admin:annotation_project_add"), form)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["config_yaml"] == [REFUSED]
    assert not Project.objects.exists()


def test_the_api_answers_a_400_naming_the_key():
    DatasetFactory(name="support")
    client = Client()
    client.force_login(person("root", is_staff=True, is_superuser=True))
    body = {"name": "judging", "dataset": "support", "config_yaml": UNDESCRIBED}

    response = client.post("/api/v1/projects", data=json.dumps(body), content_type="application/json")

    assert response.status_code == 400
    assert [(error["path"], error["message"]) for error in response.json()["errors"]] == [
        (
            "config_yaml.annotation_schemes[2].description",
            "is required (Potato requires every scheme to have a description)",
        )
    ]


# Projects saved before the rule


@pytest.fixture
def saved_before() -> Project:
    """A project whose config was saved before descriptions were required (written past the services)."""
    project = ProjectFactory()
    Project.objects.filter(pk=project.pk).update(config_yaml=UNDESCRIBED)
    project.refresh_from_db()
    return project


def test_a_project_saved_before_the_rule_keeps_working(saved_before):
    assert [scheme.description for scheme in project_config(saved_before).schemes] == [
        "How good is the reply?",
        "Anything else?",
        "",
    ]


def test_the_rule_applies_when_its_config_is_next_edited(saved_before):
    with pytest.raises(ProblemsError) as error:
        project_config_update(project=saved_before, config_yaml=UNDESCRIBED + "assignment: {order: random}\n")

    assert [str(problem) for problem in error.value.problems] == [REFUSED]


# path_selection.description


def test_the_path_is_described_as_potato_does_when_the_config_does_not_say():
    [scheme] = parse_config(PATH_ONLY).schemes

    assert scheme.as_config()["path_selection"] == {"enabled": True, "description": DEFAULT_PATH_DESCRIPTION}
    assert DEFAULT_PATH_DESCRIPTION == "Select the best response path"


def test_a_path_description_the_config_gives_is_kept():
    [scheme] = parse_config(BEST_PATH).schemes

    assert scheme.path_description == "Click on responses to build the best conversation path"


def test_the_annotate_page_gets_the_descriptions():
    alice = person("alice")
    project = project_over("paths", PATH_ONLY, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    client = Client()
    client.force_login(alice)

    response = client.get(reverse("annotation:item", kwargs={"name": project.name, "tree_id": held.tree_id}))

    [scheme] = response.context["page_data"]["schemes"]
    assert (scheme["description"], scheme["path_selection"]["description"]) == (
        "Find the best conversation",
        "Select the best response path",
    )
