"""The collection's commands: a collect project from the ready-made config, and the
refusals of retry_scoring and export_collected (exit status 2, a sentence)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Project
from annotation.projects.config import project_config
from annotation.projects.workflow_config import WorkflowConfig
from tests.factories import DatasetFactory, ProjectFactory

pytestmark = pytest.mark.django_db
COLLECT_YAML = Path(__file__).resolve().parents[3] / "platform" / "configs" / "collect.yaml"


def test_the_ready_made_config_makes_a_collect_project_with_open_assistants_defaults(capsys):
    DatasetFactory(name="grown")

    call_command(
        "create_project", "garden", "--dataset", "grown", "--config", str(COLLECT_YAML), "--mode", "collect"
    )

    project = Project.objects.get(name="garden")
    assert (project.mode, project.title) == ("collect", "Grow conversations")
    assert project_config(project).workflow == WorkflowConfig()
    assert capsys.readouterr().out == "created project garden over dataset grown: 0 items\n"


@pytest.mark.parametrize("command", ["retry_scoring", "export_collected"])
def test_the_commands_refuse_unknown_projects_and_projects_that_do_not_collect(command):
    ProjectFactory(name="annotated")

    with pytest.raises(CommandError, match='no project named "nowhere"') as error:
        call_command(command, "nowhere")
    assert error.value.returncode == 2
    with pytest.raises(CommandError, match='"annotated" does not collect trees'):
        call_command(command, "annotated")
