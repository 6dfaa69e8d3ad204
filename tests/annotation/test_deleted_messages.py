"""A message a moderator deleted is read only by those who moderate where it was deleted
(issue 16, "moderator-deleted messages stay readable").

Hank writes a prompt with a phone number in the garden collect project; Alice holds a
task to review it; Maggie (garden's manager) deletes it, reason "PII". Rita reviews garden.
Judge is an annotate project over garden's trees: Dana manages it, Bob annotates it.

- Every read of the message's text goes through ``permissions.DeletedText``: its text (and
  its rendered HTML) is shown to admins and garden's managers and reviewers; everyone else
  reads ``DELETED_TEXT`` (and ``DELETED_HTML``) in its place (the message keeps its place and ``deleted`` flag), and
  never the reason.
- So, per path: the collected tree and the task (API, page) for garden's annotators; the
  item and the annotate page for judge's annotator; the review page, the project's export,
  the trees API and the dataset's export for judge's manager, who does not moderate garden.
- The moderators still read it everywhere; the operators' tools (commands, admin) too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.collection.moderation import message_delete
from annotation.collection.tasks import task_next
from annotation.models import Membership
from annotation.permissions import DELETED_HTML, DELETED_TEXT
from annotation.projects.services import membership_add, project_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.collection.collect import collect_project, person, prompt
from trees.services import trees_export

pytestmark = pytest.mark.django_db

PII = "call me on 555-0199"
JUDGE = "annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n"


@pytest.fixture
def garden() -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita", "alice", "hank", "dana", "bob")}
    project = collect_project([people["alice"], people["hank"]])
    membership_add(project=project, user=people["maggie"], role=Membership.Role.MANAGER)
    membership_add(project=project, user=people["rita"], role=Membership.Role.REVIEWER)
    message = prompt(project, people["hank"], f"My basil wilts, {PII}")
    task = task_next(project=project, user=people["alice"], task_type="label_initial_prompt", message=message)
    message_delete(project=project, message=message, by=people["maggie"], reason="PII")
    judge = project_create(name="judge", dataset=project.dataset, config_yaml=JUDGE)
    membership_add(project=judge, user=people["dana"], role=Membership.Role.MANAGER)
    membership_add(project=judge, user=people["bob"], role=Membership.Role.ANNOTATOR)
    return {"people": people, "project": project, "message": message, "task": task, "judge": judge}


def client(world: dict[str, Any], name: str) -> Client:
    signed_in = Client()
    signed_in.force_login(world["people"][name])
    return signed_in


def collected_url(world: dict[str, Any]) -> str:
    return reverse(
        "collect-api:tree-detail",
        kwargs={"name": world["project"].name, "tree_id": world["message"].external_id},
    )


def test_garden_annotators_read_the_placeholder_in_the_collected_tree_and_never_the_reason(garden):
    response = client(garden, "alice").get(collected_url(garden))

    [shown] = response.json()["messages"]
    assert (shown["text"], shown["deleted"]) == (DELETED_TEXT, True)
    assert PII not in response.content.decode() and "PII" not in response.content.decode()


@pytest.mark.parametrize("moderator", ["maggie", "rita"])
def test_garden_moderators_read_the_deleted_text(garden, moderator):
    [shown] = client(garden, moderator).get(collected_url(garden)).json()["messages"]

    assert (PII in shown["text"], shown["deleted"]) == (True, True)


def test_a_task_on_the_deleted_message_shows_its_holder_the_placeholder(garden):
    name, task = garden["project"].name, garden["task"]
    api = client(garden, "alice").get(
        reverse("collect-api:task-detail", kwargs={"name": name, "task_id": task.pk})
    )
    page = client(garden, "alice").get(
        reverse("collection:task", kwargs={"name": name, "task_id": task.pk}), follow=True
    )

    assert [turn["text"] for turn in api.json()["conversation"]] == [DELETED_TEXT]
    assert PII not in page.content.decode() and DELETED_TEXT in page.content.decode()


def test_another_projects_annotator_reads_the_placeholder_in_the_item_and_on_the_page(garden):
    bob = client(garden, "bob")
    item = bob.post(reverse("api:item-next", kwargs={"name": "judge"}))
    tree_id = item.json()["tree"]["id"]
    page = bob.get(reverse("annotation:item", kwargs={"name": "judge", "tree_id": tree_id}))

    assert [message["text"] for message in item.json()["tree"]["messages"]] == [DELETED_TEXT]
    assert [message["html"] for message in item.json()["tree"]["messages"]] == [DELETED_HTML]
    assert page.status_code == 200
    assert PII not in page.content.decode() and DELETED_TEXT in page.content.decode()


def test_another_projects_manager_reads_the_placeholder_wherever_she_looks(garden):
    bob = garden["people"]["bob"]
    held = item_next(project=garden["judge"], user=bob)
    item_submit(
        project=garden["judge"],
        tree=held.tree,
        user=bob,
        answers={"note": {"text": "ok"}},
        version=held.version,
    )
    dana, dataset = client(garden, "dana"), garden["project"].dataset.name
    reads = {
        "review page": dana.get(
            reverse("annotation:review-item", kwargs={"name": "judge", "tree_id": held.tree_id})
        ),
        "trees API": dana.get(reverse("api:tree", kwargs={"tree_id": held.tree_id})),
        "dataset export": dana.get(reverse("api:dataset-export", kwargs={"name": dataset}) + "?format=oasst"),
        "project export": dana.get(
            reverse("api:project-export", kwargs={"name": "judge"}) + "?format=ccpe&status=all"
        ),
    }

    assert {path: response.status_code for path, response in reads.items()} == dict.fromkeys(reads, 200)
    contents = {path: _content(response) for path, response in reads.items()}
    assert [path for path, content in contents.items() if PII in content] == []
    assert all(DELETED_TEXT in content for content in contents.values())
    assert json.loads(contents["trees API"])["root"]["text"] == DELETED_TEXT


def test_moderators_and_operators_still_read_it_through_the_dataset(garden):
    dataset = garden["project"].dataset
    maggie = client(garden, "maggie")

    tree = maggie.get(reverse("api:tree", kwargs={"tree_id": garden["message"].tree_id}))
    exported = maggie.get(reverse("api:dataset-export", kwargs={"name": dataset.name}) + "?format=oasst")

    assert PII in tree.json()["root"]["text"]
    assert PII in _content(exported)
    assert PII in "".join(trees_export(dataset=dataset, format_name="oasst"))  # export_trees, the admin


def _content(response: Any) -> str:
    return (b"".join(response.streaming_content) if response.streaming else response.content).decode()
