"""Datasets over the API: list, create, read; import trees (a multipart file or a JSON list of
items) with the command's own report; export them streamed in every format, and read the
export back.

Root is a superuser; Maggie manages the support project (over the support dataset), Rita
reviews it and Alice annotates it; the other dataset belongs to no project of theirs.

Who may add trees to a dataset (``permissions.can_import_trees``): a new tree becomes an
item of every project over the dataset, so admins, staff with the permission to add trees,
and whoever manages every project over it — not the manager of just one of the projects
sharing it (issue 16), nor its reviewers. Anyone else who may read the dataset gets a 403.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Membership, ProjectItem
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client
from trees.formats import FORMATS
from trees.models import ConversationTree, Dataset

pytestmark = pytest.mark.django_db

DATASETS = reverse("api:datasets")
CONFIG = "annotation_schemes:\n  - {annotation_type: text, name: note, description: Note}\n"


def dataset_url(name: str, action: str = "") -> str:
    if action:
        return reverse(f"api:dataset-{action}", kwargs={"name": name})
    return reverse("api:dataset", kwargs={"name": name})


@pytest.fixture
def people() -> dict[str, Any]:
    """root, maggie (manager), rita (reviewer), alice (annotator) of project support."""
    people = {
        "root": person("root", is_superuser=True, is_staff=True),
        "maggie": person("maggie"),
        "rita": person("rita"),
        "alice": person("alice"),
    }
    support = dataset_with("support-trees", potato_items("support", "SUPPORT", 2))
    dataset_with("other-trees", potato_items("other", "OTHER", 1))
    project = project_create(name="support", dataset=support, config_yaml=CONFIG)
    for name, role in (("maggie", "manager"), ("rita", "reviewer"), ("alice", "annotator")):
        membership_add(project=project, user=people[name], role=role)
    return people


def as_user(people: dict[str, Any], name: str) -> Client:
    return session_client(people[name])


def post_json(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def chain(item_id: str, *texts: str) -> dict[str, Any]:
    """A Potato item whose messages form one dialogue, user and assistant taking turns."""
    nodes = [
        {"id": str(index), "role": "user" if index % 2 == 0 else "assistant", "content": text}
        for index, text in enumerate(texts)
    ]
    for parent, child in itertools.pairwise(nodes):
        parent["children"] = [child]
    return {"id": item_id, "tree": nodes[0]}


def jsonl(items: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(item) + "\n" for item in items).encode()


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content)


# List, create, read


def test_the_list_shows_the_datasets_the_caller_may_read_with_their_sizes(people: dict[str, Any]) -> None:
    listed = {
        name: [row["name"] for row in as_user(people, name).get(DATASETS).json()["results"]]
        for name in ("root", "maggie", "rita", "alice")
    }

    assert listed == {
        "root": ["other-trees", "support-trees"],
        "maggie": ["support-trees"],
        "rita": ["support-trees"],
        "alice": [],  # annotators see trees only as the items handed to them
    }
    [support] = as_user(people, "maggie").get(DATASETS).json()["results"]
    assert support | {"created_at": None, "updated_at": None} == {
        "name": "support-trees",
        "description": "",
        "tree_count": 2,
        "message_count": 6,
        "created_at": None,
        "updated_at": None,
    }


def test_the_list_is_paginated_by_page_number(people: dict[str, Any]) -> None:
    page = as_user(people, "root").get(DATASETS, {"page_size": 1}).json()

    assert page["count"] == 2
    assert [row["name"] for row in page["results"]] == ["other-trees"]
    second = as_user(people, "root").get(page["next"]).json()
    assert [row["name"] for row in second["results"]] == ["support-trees"]
    assert second["next"] is None


def test_the_list_costs_the_same_queries_for_few_datasets_or_many(
    people: dict[str, Any], django_assert_max_num_queries: Any
) -> None:
    client = as_user(people, "root")
    with django_assert_max_num_queries(6) as few:
        client.get(DATASETS)
    for index in range(5):
        dataset_with(f"more-{index}", potato_items(f"more-{index}", "MORE", 2))

    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(DATASETS)

    assert response.json()["count"] == 7


def test_an_admin_creates_an_empty_dataset(people: dict[str, Any]) -> None:
    response = post_json(
        as_user(people, "root"), DATASETS, {"name": "fresh", "description": "Chats from May"}
    )

    assert response.status_code == 201, response.content
    assert response.json()["name"] == "fresh"
    assert response.json()["description"] == "Chats from May"
    assert response.json()["tree_count"] == 0
    assert as_user(people, "root").get(dataset_url("fresh")).json() == response.json()


def test_staff_given_the_permission_may_create_datasets_and_others_may_not(people: dict[str, Any]) -> None:
    staffer = person("staffer", is_staff=True)
    assert post_json(session_client(staffer), DATASETS, {"name": "fresh"}).status_code == 403
    staffer.user_permissions.add(Permission.objects.get(codename="add_dataset"))

    assert post_json(session_client(staffer), DATASETS, {"name": "fresh"}).status_code == 201
    refused = post_json(as_user(people, "maggie"), DATASETS, {"name": "fresh-2"})
    assert refused.status_code == 403
    assert refused.json() == {"code": "permission_denied", "message": "you may not create datasets"}


@pytest.mark.parametrize(
    ("body", "path", "code"),
    [
        ({}, "name", "required"),
        ({"name": "has spaces"}, "name", "invalid"),
        ({"name": "support-trees"}, "name", "unique"),
        ({"name": "x" * 101}, "name", "max_length"),
        ({"name": "fine", "description": ["a"]}, "description", "invalid"),
    ],
)
def test_a_bad_new_dataset_is_a_400_naming_the_field(
    people: dict[str, Any], body: dict[str, Any], path: str, code: str
) -> None:
    response = post_json(as_user(people, "root"), DATASETS, body)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    [error] = response.json()["errors"]
    assert (error["path"], error["code"]) == (path, code)
    assert response.json()["message"].startswith(f"{path}: ")
    assert Dataset.objects.count() == 2


def test_one_dataset_is_read_by_name_and_others_are_not_found(people: dict[str, Any]) -> None:
    assert as_user(people, "rita").get(dataset_url("support-trees")).json()["tree_count"] == 2

    for name in ("other-trees", "no-such-dataset"):
        response = as_user(people, "rita").get(dataset_url(name))
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "message": "no such dataset"}


# Import


def test_importing_json_items_answers_the_commands_report_and_makes_them_items(
    people: dict[str, Any], tmp_path: Any
) -> None:
    items = [chain("new-1", "Hi", "Hello"), chain("new-2", "Bye")]

    response = post_json(
        as_user(people, "maggie"),
        dataset_url("support-trees", "import"),
        {"format": "potato", "items": items},
    )

    assert response.status_code == 200, response.content
    path = tmp_path / "items.jsonl"
    path.write_bytes(jsonl(items))
    out = io.StringIO()
    call_command("import_trees", "twin", str(path), "--format", "potato", "--json", stdout=out)
    expected = json.loads(out.getvalue())
    assert response.json() == expected | {
        "dataset": "support-trees",
        "summary": "imported into support-trees: 2 trees created, 3 messages",
    }
    support = ProjectItem.objects.filter(project__name="support")
    assert sorted(support.values_list("tree__external_id", flat=True)) == [
        "new-1",
        "new-2",
        "support-0",
        "support-1",
    ]


def test_importing_a_file_answers_the_same_report(people: dict[str, Any]) -> None:
    upload = SimpleUploadedFile("items.jsonl", jsonl([chain("new-1", "Hi", "Hello")]))

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "potato", "file": upload}
    )

    assert response.status_code == 200, response.content
    assert response.json()["summary"] == "imported into other-trees: 1 tree created, 2 messages"
    assert response.json()["committed"] is True
    assert response.json()["errors"] == []


def test_a_gzipped_file_is_read_as_such(people: dict[str, Any]) -> None:
    upload = SimpleUploadedFile("items.jsonl.gz", gzip.compress(jsonl([chain("zipped", "Hi")])))

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "potato", "file": upload}
    )

    assert response.json()["trees_created"] == 1


def test_a_bad_item_refuses_the_whole_import_locating_each_problem_in_the_body(
    people: dict[str, Any],
) -> None:
    duplicate = chain("bad", "Hi")
    duplicate["tree"]["children"] = [
        {"id": "a", "role": "assistant", "content": "one"},
        {"id": "a", "role": "assistant", "content": "two"},
    ]
    items = [chain("good", "Hi"), duplicate, {"id": "no-tree"}, chain("support-0", "Again")]

    response = post_json(
        as_user(people, "maggie"),
        dataset_url("support-trees", "import"),
        {"format": "potato", "items": items},
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "import_failed"
    assert body["message"] == "nothing imported into support-trees: 3 errors in 4 items"
    assert [(error["path"], error["message"]) for error in body["errors"]] == [
        ("items[1].tree.children[1]", 'duplicate node id "a" (first at tree.children[0])'),
        ("items[2].tree", 'missing "tree"'),
        (
            "items[3]",
            'item "support-0" already exists in dataset "support-trees" (import with replace to overwrite it)',
        ),
    ]
    assert body["report"]["committed"] is False
    assert ConversationTree.objects.filter(dataset__name="support-trees").count() == 2


def test_a_bad_file_locates_each_problem_by_line(people: dict[str, Any]) -> None:
    content = jsonl([chain("good", "Hi")]) + b"{not json\n" + jsonl([{"id": "x", "tree": []}])
    upload = SimpleUploadedFile("items.jsonl", content)

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "potato", "file": upload}
    )

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [(error["line"], error["path"]) for error in errors] == [(2, ""), (3, "tree")]
    assert all(error["code"] == "invalid" and error["message"] for error in errors)
    assert [issue["text"] for issue in response.json()["report"]["errors"]][1].startswith("line 3: tree: ")


def test_skipping_invalid_items_imports_the_rest_and_lists_the_skipped(people: dict[str, Any]) -> None:
    items = [chain("good", "Hi"), {"id": "no-tree"}]

    response = post_json(
        as_user(people, "root"),
        dataset_url("other-trees", "import"),
        {"format": "potato", "items": items, "skip_invalid": True},
    )

    assert response.status_code == 200
    assert response.json()["summary"] == (
        "imported into other-trees: 1 tree created, 1 message, 1 invalid item skipped"
    )
    assert response.json()["errors"] == [
        {
            "line": None,
            "path": "items[1].tree",
            "message": 'missing "tree"',
            "text": 'items[1].tree: missing "tree"',
        }
    ]


def test_replacing_trees_needs_the_right_to_change_them(people: dict[str, Any]) -> None:
    body = {"format": "potato", "items": [chain("support-0", "Reworded")], "replace": True}

    refused = post_json(as_user(people, "maggie"), dataset_url("support-trees", "import"), body)
    done = post_json(as_user(people, "root"), dataset_url("support-trees", "import"), body)

    assert refused.status_code == 403
    assert refused.json()["message"] == "you may not replace trees"
    assert done.json()["trees_replaced"] == 1
    replaced = ConversationTree.objects.get(dataset__name="support-trees", external_id="support-0")
    assert list(replaced.messages.values_list("text", flat=True)) == ["Reworded"]


def test_reviewers_and_annotators_may_not_import(people: dict[str, Any]) -> None:
    body = {"format": "potato", "items": [chain("new", "Hi")]}

    assert post_json(as_user(people, "rita"), dataset_url("support-trees", "import"), body).status_code == 403
    assert (
        post_json(as_user(people, "alice"), dataset_url("support-trees", "import"), body).status_code == 404
    )


@pytest.fixture
def shared(people: dict[str, Any]) -> Any:
    """A second project, rival, over the support dataset: Bob annotates it, Maggie has no role."""
    bob = person("bob")
    rival = project_create(
        name="rival", dataset=Dataset.objects.get(name="support-trees"), config_yaml=CONFIG
    )
    membership_add(project=rival, user=bob, role=Membership.Role.ANNOTATOR)
    return rival


def test_the_manager_of_one_project_over_a_shared_dataset_may_not_add_to_it(
    people: dict[str, Any], shared: Any
) -> None:
    body = {"format": "potato", "items": [chain("pushed", "Do this for me")]}

    refused = post_json(as_user(people, "maggie"), dataset_url("support-trees", "import"), body)

    assert refused.status_code == 403
    assert refused.json() == {
        "code": "permission_denied",
        "message": "you may not import into this dataset: its new trees would become items of every "
        "project over it, and you do not manage them all",
    }
    assert not ConversationTree.objects.filter(external_id="pushed").exists()
    assert not ProjectItem.objects.filter(project=shared, tree__external_id="pushed").exists()


def test_who_manages_every_project_over_a_dataset_may_add_to_it(people: dict[str, Any], shared: Any) -> None:
    membership_add(project=shared, user=people["maggie"], role=Membership.Role.MANAGER)
    body = {"format": "potato", "items": [chain("pushed", "Hello")]}

    response = post_json(as_user(people, "maggie"), dataset_url("support-trees", "import"), body)

    assert response.status_code == 200
    assert ProjectItem.objects.filter(project=shared, tree__external_id="pushed").exists()


def test_staff_with_the_permission_to_add_trees_may_add_to_any_dataset(
    people: dict[str, Any], shared: Any
) -> None:
    staffer = person("stan", is_staff=True)
    staffer.user_permissions.add(*Permission.objects.filter(codename="view_dataset"))
    body = {"format": "potato", "items": [chain("pushed", "Hello")]}

    # A dataset no project uses is staff's too: seeing it is not enough to add to it.
    refused = post_json(session_client(staffer), dataset_url("other-trees", "import"), body)
    staffer.user_permissions.add(*Permission.objects.filter(codename="add_conversationtree"))
    staffer = type(staffer).objects.get(pk=staffer.pk)  # permissions are cached on the object
    shared_done = post_json(session_client(staffer), dataset_url("support-trees", "import"), body)
    other_done = post_json(session_client(staffer), dataset_url("other-trees", "import"), body)

    assert refused.status_code == 403
    assert (shared_done.status_code, other_done.status_code) == (200, 200)


def test_csv_comes_as_a_file_with_its_columns_and_speakers(people: dict[str, Any]) -> None:
    content = b"conv,turn,who,said\nd1,0,customer,Hello\nd1,1,agent,Hi there\n"
    fields = {
        "format": "csv",
        "dialog_column": "conv",
        "index_column": "turn",
        "speaker_column": "who",
        "text_column": "said",
        "speaker": ["customer=user", "agent=assistant"],
    }

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), fields | {"file": SimpleUploadedFile("chats.csv", content)}
    )
    as_items = post_json(
        as_user(people, "root"), dataset_url("other-trees", "import"), fields | {"items": [{"conv": "d2"}]}
    )

    assert response.status_code == 200, response.content
    tree = ConversationTree.objects.get(external_id="d1")
    assert list(tree.messages.order_by("depth").values_list("role", "text")) == [
        ("user", "Hello"),
        ("assistant", "Hi there"),
    ]
    assert as_items.status_code == 400
    assert as_items.json()["errors"][0]["path"] == "items"


def test_a_bad_csv_row_is_located_by_its_row(people: dict[str, Any]) -> None:
    content = b"dialog_id,utterance_index,speaker,text\nd1,0,USER,Hello\nd1,zero,ASSISTANT,Hi\n"

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "csv", "file": SimpleUploadedFile("c.csv", content)}
    )

    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["row"] == 3
    assert "line" not in error
    assert response.json()["report"]["errors"][0]["row"] == 3


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"items": []}, "format"),
        ({"format": "yaml", "items": []}, "format"),
        ({"format": "potato"}, "items"),
        ({"format": "potato", "items": {"id": 1}}, "items"),
        ({"format": "csv", "items": [], "speaker": ["narrator=robot"]}, "speaker[0]"),
        ({"format": "potato", "items": [], "skip_invalid": "perhaps"}, "skip_invalid"),
    ],
)
def test_bad_import_options_are_a_400_naming_them(
    people: dict[str, Any], body: dict[str, Any], path: str
) -> None:
    response = post_json(as_user(people, "root"), dataset_url("other-trees", "import"), body)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert path in [error["path"] for error in response.json()["errors"]]


def test_a_file_that_is_not_utf8_is_refused_saying_so(people: dict[str, Any]) -> None:
    upload = SimpleUploadedFile("items.jsonl", b'{"id": "\xff\xfe"}\n')

    response = as_user(people, "root").post(
        dataset_url("other-trees", "import"), {"format": "potato", "file": upload}
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["message"].startswith("the file is not UTF-8 text")


# Export


def test_an_export_streams_a_named_download(people: dict[str, Any]) -> None:
    response = as_user(people, "rita").get(dataset_url("support-trees", "export"), {"format": "potato"})

    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="support-trees.potato.jsonl"'
    lines = body_of(response).decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["support-0", "support-1"]


def test_potato_exports_as_one_array_with_the_keys_asked_for(people: dict[str, Any]) -> None:
    response = as_user(people, "rita").get(
        dataset_url("support-trees", "export"),
        {"format": "potato", "layout": "array", "id_key": "item_id", "tree_key": "conversation"},
    )

    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="support-trees.potato.json"'
    items = json.loads(body_of(response))
    assert [sorted(item) for item in items] == [["conversation", "item_id"]] * 2


@pytest.mark.parametrize("format_name", sorted(FORMATS))
def test_every_format_exports_what_imports_back_to_the_same_export(
    people: dict[str, Any], format_name: str
) -> None:
    """Dialogues (one reply per message) survive every format, dialogue formats included."""
    root = as_user(people, "root")
    for name in ("dialogues", "copy"):
        assert post_json(root, DATASETS, {"name": name}).status_code == 201
    items = [chain("d1", "Hello", "Hi, how can I help?", "Book a table"), chain("d2", "Thanks")]
    post_json(root, dataset_url("dialogues", "import"), {"format": "potato", "items": items})

    exported = root.get(dataset_url("dialogues", "export"), {"format": format_name})
    assert exported.status_code == 200
    first = body_of(exported)
    upload = SimpleUploadedFile(f"dialogues.{format_name}", first)
    imported = root.post(dataset_url("copy", "import"), {"format": format_name, "file": upload})
    again = body_of(root.get(dataset_url("copy", "export"), {"format": format_name}))

    assert imported.status_code == 200, imported.content
    assert imported.json()["trees_created"] == 2
    assert again == first
    kind = FORMATS[format_name].FILE
    assert exported["Content-Type"] == f"{kind.media_type}; charset=utf-8"


def test_a_parquet_upload_of_message_rows_is_known_by_its_first_bytes(
    people: dict[str, Any], fixture_path: Any
) -> None:
    root = as_user(people, "root")
    assert post_json(root, DATASETS, {"name": "hub"}).status_code == 201
    upload = SimpleUploadedFile("rows.bin", fixture_path("oasst/en_10_trees.messages.parquet").read_bytes())

    response = root.post(dataset_url("hub", "import"), {"format": "oasst-messages", "file": upload})

    assert response.status_code == 200, response.content
    assert (response.json()["trees_created"], response.json()["messages"]) == (10, 106)


@pytest.mark.parametrize("format_name", ["potato", "oasst", "flat"])
def test_branching_trees_come_back_whole_from_the_tree_formats(
    people: dict[str, Any], format_name: str
) -> None:
    root = as_user(people, "root")
    post_json(root, DATASETS, {"name": "copy"})

    first = body_of(root.get(dataset_url("support-trees", "export"), {"format": format_name}))
    upload = SimpleUploadedFile("trees", first)
    root.post(dataset_url("copy", "import"), {"format": format_name, "file": upload})

    assert body_of(root.get(dataset_url("copy", "export"), {"format": format_name})) == first
    assert ConversationTree.objects.filter(dataset__name="copy").count() == 2


@pytest.mark.parametrize(
    ("query", "path"),
    [({}, "format"), ({"format": "docx"}, "format"), ({"format": "potato", "layout": "xml"}, "layout")],
)
def test_a_bad_export_option_is_a_json_400_naming_it(
    people: dict[str, Any], query: dict[str, str], path: str
) -> None:
    response = as_user(people, "root").get(dataset_url("support-trees", "export"), query)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert [error["path"] for error in response.json()["errors"]] == [path]


def test_the_command_and_the_api_export_the_same_bytes(people: dict[str, Any], tmp_path: Any) -> None:
    path = tmp_path / "out.jsonl"
    try:
        call_command("export_trees", "support-trees", "--format", "oasst", "--output", str(path))
    except CommandError as error:  # pragma: no cover - a clearer failure than a traceback
        pytest.fail(str(error))

    api = body_of(as_user(people, "rita").get(dataset_url("support-trees", "export"), {"format": "oasst"}))

    assert api == path.read_bytes()


def test_membership_changes_what_a_reviewer_may_read(people: dict[str, Any]) -> None:
    other = project_create(name="other", dataset=Dataset.objects.get(name="other-trees"), config_yaml=CONFIG)
    membership_add(project=other, user=people["alice"], role=Membership.Role.REVIEWER)

    response = as_user(people, "alice").get(DATASETS)

    assert [row["name"] for row in response.json()["results"]] == ["other-trees"]
