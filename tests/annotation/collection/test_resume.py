"""The picker offers the tasks a person started and left, first, quoting a few words of the
message each is about — never the text of a message deleted since."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from annotation.collection.tasks import task_next
from annotation.collection.views import ABOUT_CHARACTERS
from tests.annotation.collection.collect import collect_project, person, prompt

pytestmark = pytest.mark.django_db


def picker_html(user: Any, project: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.get(f"/collect/{project.name}/").content.decode()


@pytest.fixture
def held() -> tuple[Any, Any, Any, Any]:
    alice, bob = person("alice"), person("bob")
    project = collect_project([alice, bob], max_active_trees=1, max_initial_prompt_review=1)
    message = prompt(project, alice, "Tell me " + "about basil " * 20)
    task_next(project=project, user=bob, task_type="label_initial_prompt")
    return project, bob, message, alice


def test_a_long_message_is_quoted_in_a_few_words(held: tuple[Any, Any, Any, Any]) -> None:
    project, bob, _, _ = held

    html = picker_html(bob, project)

    quoted = html.split("Resume: review a prompt — “", 1)[1].split("”", 1)[0]
    assert len(quoted) == ABOUT_CHARACTERS
    assert quoted.startswith("Tell me about basil about basil")
    assert quoted.endswith("…")


def test_a_message_deleted_since_is_not_quoted(held: tuple[Any, Any, Any, Any]) -> None:
    project, bob, message, _ = held
    message.deleted = True
    message.save(update_fields=["deleted"])

    html = picker_html(bob, project)

    assert "Resume: review a prompt</a>" in html
    assert "basil" not in html


def test_nothing_to_resume_means_no_resume_section(held: tuple[Any, Any, Any, Any]) -> None:
    project, _, _, alice = held  # she wrote the prompt: her task is done

    html = picker_html(alice, project)

    assert "data-picker" in html
    assert "data-resume" not in html
