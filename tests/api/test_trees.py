"""Trees over the API: a list filtered by dataset, project, state, metadata and whether they
were annotated, read a page at a time by cursor; one tree read whole, nested, at any depth,
for the same few queries whatever its size.

Root is a superuser; Rita reviews the chats project (over the chats dataset), Alice annotates
it; the archive dataset belongs to no project of theirs.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import bushy_item, person
from tests.api.world import dataset_with, potato_items, session_client
from tests.factories import AnnotationFactory
from trees.formats.jsonstream import allowed_nesting
from trees.models import ConversationTree
from trees.services import tree_import

pytestmark = pytest.mark.django_db

TREES = reverse("api:trees")
CONFIG = "annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n"
# Every request: the session, its user, the throttle's count; then one page of trees
# (with their message counts), or the tree (with its count), its record and its messages.
LIST_QUERIES = 4
DETAIL_QUERIES = 6


def tree_url(tree_id: int) -> str:
    return reverse("api:tree", kwargs={"tree_id": tree_id})


@pytest.fixture
def chats() -> dict[str, Any]:
    """Four chats with metadata and states, one annotated; an archive of one more."""
    dataset = dataset_with("chats", potato_items("chat", "CHAT", 4))
    dataset_with("archive", potato_items("old", "OLD", 1))
    trees = {tree.external_id: tree for tree in ConversationTree.objects.filter(dataset=dataset)}
    metadata = {
        "chat-0": {"model": "alpha", "turns": 3, "final_state": {"booking": {"status": "confirmed"}}},
        "chat-1": {"model": "beta", "turns": 5, "flagged": True},
        "chat-2": {"model": "alpha", "turns": "3", "reviewer": None},
        "chat-3": {},
    }
    for external_id, values in metadata.items():
        ConversationTree.objects.filter(pk=trees[external_id].pk).update(metadata=values)
    ConversationTree.objects.filter(pk=trees["chat-3"].pk).update(state="growing")
    project = project_create(name="chats", dataset=dataset, config_yaml=CONFIG)
    root, rita, alice = person("root", is_superuser=True, is_staff=True), person("rita"), person("alice")
    membership_add(project=project, user=rita, role="reviewer")
    membership_add(project=project, user=alice, role="annotator")
    AnnotationFactory(
        project=project, tree=trees["chat-1"], user=alice, scheme="note", payload={"text": "ok"}
    )
    AnnotationFactory(
        project=project, tree=trees["chat-2"], user=alice, scheme="note", payload={}, status="draft"
    )
    return {"root": session_client(root), "rita": session_client(rita), "alice": session_client(alice)}


def ids(client: Client, **query: Any) -> list[str]:
    response = client.get(TREES, query)
    assert response.status_code == 200, response.content
    return [row["external_id"] for row in response.json()["results"]]


# The list and its filters


def test_the_list_shows_each_tree_with_its_dataset_state_metadata_and_size(chats: dict[str, Any]) -> None:
    rows = chats["rita"].get(TREES).json()["results"]

    assert [row["external_id"] for row in rows] == ["chat-0", "chat-1", "chat-2", "chat-3"]
    first = rows[0]
    assert set(first) == {
        "id",
        "dataset",
        "external_id",
        "state",
        "metadata",
        "message_count",
        "created_at",
        "updated_at",
    }
    assert (first["dataset"], first["state"], first["message_count"]) == ("chats", "ready_for_export", 3)
    assert first["metadata"]["final_state"] == {"booking": {"status": "confirmed"}}


def test_each_caller_sees_the_trees_of_the_datasets_they_may_read(chats: dict[str, Any]) -> None:
    assert ids(chats["root"]) == ["chat-0", "chat-1", "chat-2", "chat-3", "old-0"]
    assert ids(chats["rita"], dataset="archive") == []
    assert ids(chats["alice"]) == []  # annotators see trees only as the items handed to them


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"dataset": "archive"}, ["old-0"]),
        ({"project": "chats"}, ["chat-0", "chat-1", "chat-2", "chat-3"]),
        ({"project": "nobody-knows"}, []),
        ({"state": "growing"}, ["chat-3"]),
        ({"metadata_key": "model"}, ["chat-0", "chat-1", "chat-2"]),
        ({"metadata_key": "model", "metadata_value": "alpha"}, ["chat-0", "chat-2"]),
        ({"metadata_key": "turns", "metadata_value": "3"}, ["chat-0", "chat-2"]),  # 3 and "3"
        ({"metadata_key": "turns", "metadata_value": "5"}, ["chat-1"]),
        ({"metadata_key": "flagged", "metadata_value": "true"}, ["chat-1"]),
        ({"metadata_key": "reviewer", "metadata_value": "null"}, ["chat-2"]),
        ({"metadata_key": "final_state.booking.status", "metadata_value": "confirmed"}, ["chat-0"]),
        ({"metadata_key": "final_state.booking.status", "metadata_value": "cancelled"}, []),
        ({"has_annotations": "true"}, ["chat-1"]),  # a draft is not an annotation yet
        ({"has_annotations": "false"}, ["chat-0", "chat-2", "chat-3", "old-0"]),
        ({"has_annotations": "false", "dataset": "chats", "state": "ready_for_export"}, ["chat-0", "chat-2"]),
    ],
)
def test_filters_narrow_the_list(chats: dict[str, Any], query: dict[str, str], expected: list[str]) -> None:
    assert ids(chats["root"], **query) == expected


def test_annotations_count_only_in_projects_the_caller_may_see(chats: dict[str, Any]) -> None:
    """Rita reviews chats; answers in a project she is not in do not mark a tree for her."""
    hidden = project_create(
        name="hidden", dataset=ConversationTree.objects.get(external_id="chat-0").dataset, config_yaml=CONFIG
    )
    AnnotationFactory(project=hidden, tree=ConversationTree.objects.get(external_id="chat-0"), scheme="note")

    assert ids(chats["rita"], has_annotations="true") == ["chat-1"]
    assert ids(chats["root"], has_annotations="true") == ["chat-0", "chat-1"]
    assert ids(chats["root"], has_annotations="true", project="chats") == ["chat-1"]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"state": "finished"}, "state"),
        ({"metadata_value": "alpha"}, "metadata_value"),
        ({"metadata_key": "a..b"}, "metadata_key"),
        ({"metadata_key": ".".join("k" * 11)}, "metadata_key"),
        ({"has_annotations": "perhaps"}, "has_annotations"),
        ({"page_size": "many"}, None),
    ],
)
def test_a_bad_filter_is_a_400_naming_it(
    chats: dict[str, Any], query: dict[str, str], path: str | None
) -> None:
    response = chats["root"].get(TREES, query)

    if path is None:  # DRF falls back to the default page size
        assert response.status_code == 200
        return
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert [error["path"] for error in response.json()["errors"]] == [path]


# Cursor pagination


def walk(client: Client, url: str = TREES, **query: Any) -> list[list[str]]:
    """The pages from ``url`` on, following each page's ``next``."""
    pages, response = [], client.get(url, query)
    while True:
        body = response.json()
        pages.append([row["external_id"] for row in body["results"]])
        if body["next"] is None:
            return pages
        response = client.get(body["next"])


def test_the_list_is_read_a_page_at_a_time_by_cursor_in_id_order(chats: dict[str, Any]) -> None:
    assert walk(chats["root"], page_size=2) == [["chat-0", "chat-1"], ["chat-2", "chat-3"], ["old-0"]]


def test_trees_added_while_reading_are_neither_repeated_nor_skipped(chats: dict[str, Any]) -> None:
    client = chats["root"]
    first = client.get(TREES, {"page_size": 3}).json()
    dataset = ConversationTree.objects.get(external_id="chat-0").dataset
    items = "\n".join(json.dumps(item) for item in potato_items("late", "LATE", 2))
    tree_import(dataset=dataset, source=io.BytesIO(items.encode()), format_name="potato")

    rest = walk(client, first["next"])

    read = [row["external_id"] for row in first["results"]] + [tree for page in rest for tree in page]
    assert read == ["chat-0", "chat-1", "chat-2", "chat-3", "old-0", "late-0", "late-1"]


def test_filters_hold_on_every_page(chats: dict[str, Any]) -> None:
    assert walk(chats["root"], page_size=1, metadata_key="model", metadata_value="alpha") == [
        ["chat-0"],
        ["chat-2"],
    ]


def test_a_broken_cursor_is_a_json_error_not_a_server_error(chats: dict[str, Any]) -> None:
    response = chats["root"].get(TREES, {"cursor": "not-a-cursor"})

    assert response.status_code == 404
    assert response.json() == {"code": "not_found", "message": "Invalid cursor"}


def test_pages_are_capped_at_a_thousand_trees(chats: dict[str, Any]) -> None:
    response = chats["root"].get(TREES, {"page_size": 5000})

    assert response.status_code == 200
    assert len(response.json()["results"]) == 5


# One tree, nested


def test_a_tree_is_read_whole_with_every_message_nested_under_its_parent(chats: dict[str, Any]) -> None:
    tree = ConversationTree.objects.get(external_id="chat-0")

    body = chats["rita"].get(tree_url(tree.pk)).json()

    assert body["external_id"] == "chat-0"
    assert body["dataset"] == "chats"
    assert body["message_count"] == 3
    root = body["root"]
    assert (root["id"], root["role"], root["text"]) == ("root", "user", "CHAT question 0")
    assert [(child["id"], child["text"], child["children"]) for child in root["children"]] == [
        ("a1", "CHAT answer one", []),
        ("a2", "CHAT answer two", []),
    ]
    assert set(root) == {
        "id",
        "role",
        "text",
        "lang",
        "model_name",
        "synthetic",
        "deleted",
        "rank",
        "review_count",
        "review_result",
        "metadata",
        "children",
    }


def test_a_tree_the_caller_may_not_read_is_not_found(chats: dict[str, Any]) -> None:
    archived = ConversationTree.objects.get(external_id="old-0")

    for client, tree_id in (
        (chats["rita"], archived.pk),
        (chats["alice"], archived.pk),
        (chats["root"], 10**9),
    ):
        response = client.get(tree_url(tree_id))
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "message": "no such tree"}


def test_a_tree_without_messages_has_a_null_root(chats: dict[str, Any]) -> None:
    empty = ConversationTree.objects.create(dataset=ConversationTree.objects.first().dataset, external_id="e")

    body = chats["root"].get(tree_url(empty.pk)).json()

    assert (body["root"], body["message_count"]) == (None, 0)


def test_a_ten_thousand_deep_conversation_is_read_like_any_other(chats: dict[str, Any]) -> None:
    depth = 10_000
    lines = "".join(
        json.dumps(
            {
                "tree_id": "deep",
                "id": f"n{level}",
                "parent_id": f"n{level - 1}" if level else None,
                "role": "user" if level % 2 == 0 else "assistant",
                "text": f"m{level}",
            }
        )
        + "\n"
        for level in range(depth)
    )
    dataset = ConversationTree.objects.get(external_id="chat-0").dataset
    report = tree_import(dataset=dataset, source=io.BytesIO(lines.encode()), format_name="flat")
    assert report.committed, report.summary()
    tree = ConversationTree.objects.get(external_id="deep")
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # Python's usual limit: reading the tree must not need more
    try:
        response = chats["root"].get(tree_url(tree.pk))
    finally:
        sys.setrecursionlimit(raised)

    assert response.status_code == 200
    with allowed_nesting(2 * depth + 10):  # an object and a list per level
        node, levels = json.loads(response.content)["root"], 0
    while node["children"]:
        [node] = node["children"]
        levels += 1
    assert (levels, node["id"], node["text"]) == (depth - 1, f"n{depth - 1}", f"m{depth - 1}")


# Queries


@pytest.mark.parametrize("size", [3, 400])
def test_reading_a_tree_costs_the_same_queries_whatever_its_size(
    chats: dict[str, Any], size: int, django_assert_num_queries: Any
) -> None:
    dataset = ConversationTree.objects.get(external_id="chat-0").dataset
    item = json.dumps(bushy_item("sized", size))
    tree_import(dataset=dataset, source=io.BytesIO(item.encode()), format_name="potato")
    tree = ConversationTree.objects.get(external_id="sized")

    with django_assert_num_queries(DETAIL_QUERIES):
        response = chats["root"].get(tree_url(tree.pk))

    assert response.json()["message_count"] == size


@pytest.mark.parametrize("count", [1, 60])
def test_a_page_of_trees_costs_the_same_queries_whatever_their_number_and_size(
    count: int, django_assert_num_queries: Any
) -> None:
    dataset = dataset_with("many", [bushy_item(f"t{index}", 2 + index) for index in range(count)])
    project = project_create(name="many", dataset=dataset, config_yaml=CONFIG)
    root = person("root", is_superuser=True, is_staff=True)
    AnnotationFactory(project=project, tree=dataset.trees.first(), scheme="note", payload={"text": "ok"})
    client = session_client(root)

    with django_assert_num_queries(LIST_QUERIES):
        response = client.get(TREES, {"metadata_key": "none", "has_annotations": "false"})
    with django_assert_num_queries(LIST_QUERIES):
        response = client.get(TREES, {"project": "many", "page_size": 1000})

    assert len(response.json()["results"]) == count
    assert Annotation.objects.count() == 1
