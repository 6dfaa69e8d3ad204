"""The collection loop over the JSON API (/api/v1/projects/<name>/collect/): available
counts, next task by type, ack, nack, submit, tree state and moderation — every
refusal a JSON error with a code and a sentence, never a server error.

Alice, Bob, Carol, Dave and Erin annotate; Maggie manages the project;
Charlie is signed in but not a member.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from annotation.collection.models import Task
from annotation.models import Membership
from annotation.projects.services import membership_add
from tests.annotation.collection.collect import collect_project, draw_lottery, person, prompt, review, state
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


@pytest.fixture
def project(team):
    project = collect_project(team, max_active_trees=1, max_initial_prompt_review=1)
    membership_add(project=project, user=person("maggie"), role=Membership.Role.MANAGER)
    return project


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def base(project) -> str:
    return f"/api/v1/projects/{project.name}/collect"


def post(client: Client, url: str, data: Any = None) -> Any:
    return client.post(url, data=data if data is not None else {}, content_type="application/json")


def test_the_whole_loop_over_the_api(project, team):
    alice, bob, carol, dave, _erin = team
    api = base(project)

    # min(max_active_trees 1 + max_initial_prompt_review 1, max_prompt_lottery_waiting 250) prompts wanted.
    assert client_for(alice).get(f"{api}/available").json() == {
        "random": 2,
        "initial_prompt": 2,
        "label_initial_prompt": 0,
        "assistant_reply": 0,
        "label_assistant_reply": 0,
        "prompter_reply": 0,
        "label_prompter_reply": 0,
        "rank_assistant_replies": 0,
        "rank_prompter_replies": 0,
    }
    as_alice = client_for(alice)
    task = post(as_alice, f"{api}/tasks/next", {"type": "initial_prompt"})
    assert task.status_code == 201
    task = task.json()
    assert {key: task[key] for key in ("type", "status", "tree", "conversation", "acked_at")} == {
        "type": "initial_prompt",
        "status": "leased",
        "tree": None,
        "conversation": [],
        "acked_at": None,
    }
    assert post(as_alice, f"{api}/tasks/{task['id']}/ack").json()["acked_at"] is not None
    done = post(as_alice, f"{api}/tasks/{task['id']}/submit", {"text": "How do I keep basil alive?"}).json()
    tree_id = done["tree"]["id"]
    assert (done["status"], done["tree"]["state"], done["created_message_id"]) == (
        "done",
        "initial_prompt_review",
        tree_id,
    )

    for reviewer in (bob, carol):
        client = client_for(reviewer)
        label = post(client, f"{api}/tasks/next", {"type": "label_initial_prompt"}).json()
        assert label["conversation"] == [
            {"id": tree_id, "role": "user", "text": "How do I keep basil alive?", "lang": "en"}
        ]
        assert label["labels"]["mode"] == "full" and label["labels"]["mandatory"] == ["spam"]
        assert label["labels"]["descriptions"][0] == {
            "name": "spam",
            "kind": "flag",
            "widget": "yes_no",
            "display_text": "Seems to be intentionally low-quality or irrelevant",
            "help_text": "",
        }
        submitted = post(
            client, f"{api}/tasks/{label['id']}/submit", {"labels": {"spam": 0, "lang_mismatch": 0}}
        )
        assert submitted.status_code == 200, submitted.content

    tree = client_for(dave).get(f"{api}/trees/{tree_id}").json()
    assert (tree["state"], tree["active"], tree["goal_tree_size"]) == ("prompt_lottery_waiting", False, 4)
    assert tree["messages"][0] | {"text": "…"} == {
        "id": tree_id,
        "parent_id": None,
        "role": "user",
        "text": "…",
        "lang": "en",
        "review_count": 2,
        "review_result": True,
        "rank": None,
        "deleted": False,
        "synthetic": False,
    }

    reply = post(client_for(dave), f"{api}/tasks/next", {"type": "assistant_reply"}).json()
    assert (reply["tree"]["state"], [turn["id"] for turn in reply["conversation"]]) == ("growing", [tree_id])
    skipped = post(client_for(dave), f"{api}/tasks/{reply['id']}/nack", {"reason": "no idea"}).json()
    assert skipped["status"] == "skipped"
    assert Task.objects.get(pk=reply["id"]).dont_show_again is True


def test_refusals_are_json_with_a_code_and_a_message(project, team):
    alice, bob, *_ = team
    api = base(project)
    as_bob = client_for(bob)

    nothing = post(as_bob, f"{api}/tasks/next", {"type": "rank_assistant_replies"})
    assert (nothing.status_code, nothing.json()) == (
        404,
        {
            "code": "no_task",
            "message": 'no "rank_assistant_replies" tasks are waiting for you right now; please try again later',
        },
    )
    unknown = post(as_bob, f"{api}/tasks/next", {"type": "poem"})
    assert (unknown.status_code, unknown.json()["code"], unknown.json()["errors"][0]["path"]) == (
        400,
        "invalid",
        "type",
    )
    task = post(as_bob, f"{api}/tasks/next", {"type": "initial_prompt"}).json()
    empty = post(as_bob, f"{api}/tasks/{task['id']}/submit", {"text": ""})
    assert (empty.status_code, empty.json()) == (
        400,
        {
            "code": "invalid",
            "message": "text: must not be empty",
            "errors": [{"code": "required", "path": "text", "message": "must not be empty"}],
        },
    )
    not_hers = post(client_for(alice), f"{api}/tasks/{task['id']}/submit", {"text": "Hi"})
    assert (not_hers.status_code, not_hers.json()) == (
        404,
        {"code": "not_found", "message": "no such task of yours in this project"},
    )
    post(as_bob, f"{api}/tasks/{task['id']}/submit", {"text": "Hi"})
    again = post(as_bob, f"{api}/tasks/{task['id']}/submit", {"text": "Hi"})
    assert (again.status_code, again.json()) == (
        409,
        {"code": "task_done", "message": "you already submitted this task"},
    )


def test_the_pending_limit_is_a_429(team):
    alice = team[0]
    project = collect_project(team, max_pending_tasks_per_user=1)
    api = base(project)
    as_alice = client_for(alice)
    post(as_alice, f"{api}/tasks/next", {"type": "initial_prompt"})

    refused = post(as_alice, f"{api}/tasks/next", {"type": "initial_prompt"})

    assert (refused.status_code, refused.json()["code"]) == (429, "too_many_pending")


def test_who_may_do_what(project, team):
    alice = team[0]
    api = base(project)
    maggie, charlie = person("maggie"), person("charlie")
    root = prompt(project, alice)
    tree = f"{api}/trees/{root.external_id}"

    # Not a member: the project does not exist for them.
    assert client_for(charlie).get(f"{api}/available").status_code == 404
    # A manager who does not annotate may read and moderate, not take tasks.
    as_maggie = client_for(maggie)
    assert as_maggie.get(tree).status_code == 200
    forbidden = post(as_maggie, f"{api}/tasks/next")
    assert (forbidden.status_code, forbidden.json()) == (
        403,
        {"code": "permission_denied", "message": "you are not an annotator in this project"},
    )
    # An annotator may not moderate.
    refused = post(client_for(alice), f"{tree}/halt")
    assert (refused.status_code, refused.json()["message"]) == (403, "you may not moderate this project")
    # A project that does not collect has no collection API.
    other = ProjectFactory(name="annotated")
    membership_add(project=other, user=alice, role=Membership.Role.ANNOTATOR)
    elsewhere = client_for(alice).get("/api/v1/projects/annotated/collect/available")
    assert (elsewhere.status_code, elsewhere.json()) == (
        404,
        {"code": "not_collect_project", "message": '"annotated" does not collect trees'},
    )


def test_moderation_over_the_api(project, team):
    alice, bob, carol, dave, _erin = team
    api = base(project)
    as_maggie = client_for(person("maggie"))
    root = prompt(project, alice)
    review(project, [bob, carol], root)
    draw_lottery(project)
    tree = f"{api}/trees/{root.external_id}"

    assert post(as_maggie, f"{tree}/halt").json()["state"] == "halted_by_moderator"
    again = post(as_maggie, f"{tree}/halt")
    assert (again.status_code, again.json()) == (
        409,
        {"code": "already_halted", "message": "this tree is already halted"},
    )
    assert post(as_maggie, f"{tree}/resume").json()["state"] == "growing"

    deletion = post(as_maggie, f"{tree}/messages/{root.external_id}/delete", {"reason": "duplicate"})
    assert deletion.status_code == 201
    assert (deletion.json()["deleted"], deletion.json()["reason"], state(root)) == (
        1,
        "duplicate",
        "halted_by_moderator",
    )
    undone = post(as_maggie, f"{api}/deletions/{deletion.json()['id']}/undo")
    assert undone.json()["undone_at"] is not None

    report = post(client_for(dave), f"{tree}/messages/{root.external_id}/report", {"reason": "odd"})
    assert (report.status_code, report.json()["reason"]) == (201, "odd")
    missing = post(client_for(dave), f"{tree}/messages/nope/report")
    assert (missing.status_code, missing.json()) == (
        404,
        {"code": "not_found", "message": "no such message in this tree"},
    )


# Queries each endpoint costs, whatever the project's history. Every request starts with four:
# the session, the user, the throttle's count, the project with the caller's roles.
# + the working trees and prompt tasks out; one candidate query per kind of work with trees to work on.
AVAILABLE_QUERIES = 6
# + the trees and prompt tasks out; in a savepoint (two statements): the caller's tasks, the candidates
# (one kind asked for), the new task, its audit entry; then the task's tree and messages to show it.
NEXT_QUERIES = 13
# PostgreSQL locks rows where SQLite holds the whole database: the caller's row (their pending
# tasks), the candidate's row, and the check again under that lock.
NEXT_LOCKS_ON_POSTGRES = 3
# + in a savepoint (two statements): the task, the tree, the message, the reviewer's annotation read
# and written, the message's review count, the task, its audit entry; then the task's tree and
# messages to show it.
SUBMIT_QUERIES = 16


def test_the_loop_costs_a_fixed_number_of_queries(project, team, django_assert_num_queries):
    alice, bob, *_ = team
    prompt(project, alice)
    as_bob = client_for(bob)
    api = base(project)
    as_bob.get(f"{api}/available")  # the session is warm

    with django_assert_num_queries(AVAILABLE_QUERIES):
        as_bob.get(f"{api}/available")
    locks = NEXT_LOCKS_ON_POSTGRES if connection.vendor == "postgresql" else 0
    with django_assert_num_queries(NEXT_QUERIES + locks):
        task = post(as_bob, f"{api}/tasks/next", {"type": "label_initial_prompt"}).json()
    with django_assert_num_queries(SUBMIT_QUERIES):
        post(as_bob, f"{api}/tasks/{task['id']}/submit", {"labels": {"spam": 0}})
