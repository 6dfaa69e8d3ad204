"""The collection pages through Django's test client: the picker with its counts,
"I'm feeling lucky", and the task pages' forms (write, review, rank, skip).

Alice, Bob, Carol, Dave and Erin annotate in ``SMALL`` projects; Charlie is not a member.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from annotation.collection.models import Task
from tests.annotation.collection.collect import (
    collect_project,
    draw_lottery,
    fresh,
    person,
    prompt,
    reply,
    review,
    state,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def counts_shown(html: str) -> dict[str, int]:
    rows = re.findall(
        r'data-task-type="([a-z_]+)">\s*<th scope="row">[^<]*</th>\s*<td data-count>(\d+)</td>', html
    )
    return {task_type: int(count) for task_type, count in rows}


def test_the_picker_shows_what_is_waiting_for_each_type(team):
    alice, bob, *_ = team
    project = collect_project(team, max_active_trees=1, max_initial_prompt_review=1)
    prompt(project, alice)

    page = client_for(bob).get(f"/collect/{project.name}/")

    assert page.status_code == 200
    assert counts_shown(page.content.decode()) == {
        "initial_prompt": 1,
        "label_initial_prompt": 1,
        "assistant_reply": 0,
        "label_assistant_reply": 0,
        "prompter_reply": 0,
        "label_prompter_reply": 0,
        "rank_assistant_replies": 0,
        "rank_prompter_replies": 0,
    }
    assert "2 tasks waiting for you" in page.content.decode()


def test_the_projects_page_of_a_collect_project_leads_to_the_picker(team):
    project = collect_project(team)

    assert client_for(team[0]).get(f"/projects/{project.name}/").url == f"/collect/{project.name}/"


def test_writing_a_prompt_through_the_pages(team):
    alice = team[0]
    project = collect_project(team)
    as_alice = client_for(alice)

    started = as_alice.post(f"/collect/{project.name}/next", {"type": "initial_prompt"})
    task = Task.objects.get(user=alice)
    assert started.url == f"/collect/{project.name}/tasks/{task.pk}/"
    page = as_alice.get(started.url)
    assert page.status_code == 200 and "Your prompt" in page.content.decode()
    assert Task.objects.get(pk=task.pk).acked_at is not None  # shown, so acknowledged

    done = as_alice.post(started.url, {"text": "How do I keep basil alive?", "lang": "en"})

    assert done.url == f"/collect/{project.name}/"
    assert Task.objects.get(pk=task.pk).created_message.text == "How do I keep basil alive?"
    # Asking again for the same type while holding none starts a new task.
    assert as_alice.post(f"/collect/{project.name}/next", {"type": "initial_prompt"}).url != started.url


def test_asking_again_goes_back_to_the_task_you_hold(team):
    alice = team[0]
    project = collect_project(team)
    as_alice = client_for(alice)

    first = as_alice.post(f"/collect/{project.name}/next", {"type": "random"}).url
    again = as_alice.post(f"/collect/{project.name}/next", {"type": "random"}).url

    assert first == again and Task.objects.count() == 1


def test_a_review_with_a_problem_is_shown_again_with_it(team):
    alice, bob, *_ = team
    project = collect_project(team)
    prompt(project, alice, "Tell me about basil.")
    as_bob = client_for(bob)
    url = as_bob.post(f"/collect/{project.name}/next", {"type": "label_initial_prompt"}).url
    page = as_bob.get(url).content.decode()
    assert "Tell me about basil." in page and 'name="label-spam"' in page and 'name="label-pii"' in page

    refused = as_bob.post(url, {"label-quality": "0.75"})  # spam not answered

    assert refused.status_code == 400
    assert "labels.spam: is required" in refused.content.decode()
    done = as_bob.post(url, {"label-spam": "0", "label-pii": "1", "label-quality": "0.75"})
    assert done.status_code == 302
    assert Task.objects.get(user=bob).result == {
        "labels": {
            "spam": 0.0,
            "lang_mismatch": 0.0,
            "pii": 1.0,
            "not_appropriate": 0.0,
            "hate_speech": 0.0,
            "sexual_content": 0.0,
            "quality": 0.75,
        }
    }


def test_ranking_through_the_page_form(team):
    alice, bob, carol, dave, erin = team
    project = collect_project(team, goal_tree_size=3)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    first, second = reply(project, bob, root, "First answer"), reply(project, carol, root, "Second answer")
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    as_dave = client_for(dave)
    url = as_dave.post(f"/collect/{project.name}/next", {"type": "rank_assistant_replies"}).url
    page = as_dave.get(url).content.decode()
    assert "First answer" in page and "Second answer" in page and "data-ranking" in page

    as_dave.post(url, {"ranking": [second.external_id, first.external_id]})

    assert Task.objects.get(user=dave, type="rank_assistant_replies").result == {
        "ranking": [second.external_id, first.external_id]
    }
    assert state(root) == "ranking"


def test_skipping_from_the_page(team):
    alice, bob, *_ = team
    project = collect_project(team)
    prompt(project, alice)
    as_bob = client_for(bob)
    url = as_bob.post(f"/collect/{project.name}/next", {"type": "label_initial_prompt"}).url

    back = as_bob.post(f"{url}skip")

    assert back.url == f"/collect/{project.name}/"
    assert Task.objects.get(user=bob).status == "skipped"
    follow = as_bob.post(f"/collect/{project.name}/next", {"type": "label_initial_prompt"}, follow=True)
    assert 'No "label_initial_prompt" tasks are waiting for you right now' in follow.content.decode().replace(
        "&quot;", '"'
    )


def test_only_annotators_of_the_project_see_its_pages(team):
    alice = team[0]
    project = collect_project(team)
    task = Task.objects.create(project=project, user=alice, type="initial_prompt", expires_at=fresh_time())

    assert client_for(person("charlie")).get(f"/collect/{project.name}/").status_code == 404
    assert client_for(team[1]).get(f"/collect/{project.name}/tasks/{task.pk}/").status_code == 404


def fresh_time():
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() + timedelta(minutes=5)


def test_a_replied_to_message_shows_in_the_conversation(team):
    alice, bob, carol, dave, _erin = team
    project = collect_project(team)
    root = prompt(project, alice, "What soil does basil like?")
    review(project, [bob, carol], root)
    draw_lottery(project)
    as_dave = client_for(dave)
    url = as_dave.post(f"/collect/{project.name}/next", {"type": "assistant_reply"}).url

    page = as_dave.get(url).content.decode()
    as_dave.post(url, {"text": "Well-drained soil."})

    assert "What soil does basil like?" in page and "Your reply, as the assistant" in page
    assert [m.text for m in fresh(root).children.all()] == ["Well-drained soil."]


def test_reporting_the_message_of_a_task(team):
    alice, bob, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)
    as_bob = client_for(bob)
    url = as_bob.post(f"/collect/{project.name}/next", {"type": "label_initial_prompt"}).url

    back = as_bob.post(f"{url}report", {"reason": "personal data"})

    assert back.url == url
    from annotation.collection.models import Report

    assert Report.objects.filter(message=root).values_list("user__username", "reason").get() == (
        "bob",
        "personal data",
    )


def test_a_form_field_with_a_nul_is_shown_again_with_it_and_nothing_is_written(team):
    """The pages read their forms' fields themselves: a NUL (which PostgreSQL cannot store)
    was a server error there."""
    alice = team[0]
    project = collect_project(team)
    as_alice = client_for(alice)
    url = as_alice.post(f"/collect/{project.name}/next", {"type": "initial_prompt"}).url

    refused = as_alice.post(url, {"text": "How do I keep\x00 basil alive?", "lang": "en"})
    skipped = as_alice.post(f"{url}skip", {"reason": "\x00"})

    assert refused.status_code == 400
    assert "text: contains a NUL character (\\u0000), which cannot be stored" in refused.content.decode()
    assert skipped.status_code == 302
    task = Task.objects.get(user=alice)
    assert (task.status, task.created_message) == ("leased", None)
