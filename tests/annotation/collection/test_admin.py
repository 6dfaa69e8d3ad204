"""The collection admin: read-only lists whose actions call the moderation and
scoring services — halt, resume, retry scoring, export; soft-delete and undo.

Ada is a superuser; Alice, Bob, Carol, Dave and Erin grow a ``SMALL`` tree.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotation.collection import scoring
from annotation.collection.models import CollectedTree, Deletion
from tests.annotation.collection.collect import (
    collect_project,
    draw_lottery,
    fresh,
    person,
    prompt,
    rank,
    reply,
    review,
    state,
)
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


@pytest.fixture
def ada() -> Client:
    client = Client()
    client.force_login(StaffFactory(username="ada"))
    return client


def act(client: Client, model: str, action: str, pks: list[int]) -> list[str]:
    response = client.post(
        f"/admin/collection/{model}/",
        {"action": action, "_selected_action": [str(pk) for pk in pks]},
        follow=True,
    )
    assert response.status_code == 200
    return [str(message) for message in response.context["messages"]]


def growing(team):
    alice, bob, carol, *_ = team
    project = collect_project(team)
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    return project, root


def test_every_list_opens(ada, team):
    project, root = growing(team)
    reply(project, team[1], root)

    for model in ("collectedtree", "task", "moderatedmessage", "deletion", "report"):
        assert ada.get(f"/admin/collection/{model}/").status_code == 200, model
    assert ada.get("/admin/collection/collectedtree/?state=growing").status_code == 200


def test_halting_and_resuming_trees(ada, team):
    _project, root = growing(team)

    assert act(ada, "collectedtree", "halt", [root.tree_id]) == [
        f"{root.tree.external_id}: now halted by moderator"
    ]
    assert state(root) == "halted_by_moderator"
    assert act(ada, "collectedtree", "halt", [root.tree_id]) == [
        f"{root.tree.external_id}: this tree is already halted",
        "nothing was changed",
    ]
    assert act(ada, "collectedtree", "resume", [root.tree_id]) == [f"{root.tree.external_id}: now growing"]


def test_retrying_the_scoring_of_trees(ada, team, monkeypatch):
    alice, bob, carol, dave, erin = team
    project, root = growing(team)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    review(project, [dave, erin], reply(project, alice, first))
    monkeypatch.setattr(scoring, "ranked_pairs", lambda rankings: 1 / 0)
    rank(project, dave, root, [second, first])
    rank(project, erin, root, [second, first])
    monkeypatch.undo()
    assert state(root) == "scoring_failed"

    assert act(ada, "collectedtree", "retry_scoring", [root.tree_id]) == [
        f"{project.name}: 1 scored, 0 failed again, 0 back to ranking (rankings missing)"
    ]
    assert (state(root), fresh(second).rank) == ("ready_for_export", 0)


def test_soft_deleting_a_message_and_undoing_it(ada, team):
    _alice, bob, *_ = team
    project, root = growing(team)
    answer = reply(project, bob, root)

    assert act(ada, "moderatedmessage", "soft_delete", [answer.pk]) == [f"{answer}: deleted with 0 replies"]
    assert fresh(answer).deleted is True
    deletion = Deletion.objects.get()
    assert deletion.by.username == "ada"

    assert act(ada, "deletion", "undo", [deletion.pk]) == [f"{deletion}: 1 messages restored"]
    assert fresh(answer).deleted is False


def test_exporting_trees_from_the_admin(ada, team):
    _project, root = growing(team)

    response = ada.post(
        "/admin/collection/collectedtree/",
        {"action": "export_oasst", "_selected_action": [str(CollectedTree.objects.get().pk)]},
    )

    lines = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(tree["message_tree_id"], tree["tree_state"]) for tree in lines] == [
        (root.external_id, "growing")
    ]
