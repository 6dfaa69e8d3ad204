"""A project's answers out of the API, streamed in every export format — the same bytes
``export_annotations`` writes — and back in through the import.

Alice and Bob judge Potato's documented conversation over the API (rate the replies, pick the
best path, compare the first two replies) with their tokens; Maggie manages the project and
exports it, Rita reviews it. Nobody else may.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.api.tokens import token_create
from annotation.exports import EXPORTS
from annotation.models import Annotation, Project
from annotation.projects.services import membership_add, project_create
from tests.annotation.annotator_items import SEED_ITEM, person
from tests.api.world import dataset_with

pytestmark = pytest.mark.django_db

CONFIG = """annotation_schemes:
  - annotation_type: tree_annotation
    name: judged
    description: Judged
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
  - {annotation_type: text, name: note, description: Note}
assignment: {annotations_per_item: 2}
"""
SECOND_ITEM = {**SEED_ITEM, "id": "conv_002"}


def export_url(name: str) -> str:
    return reverse("api:project-export", kwargs={"name": name})


def import_url(name: str) -> str:
    return reverse("api:project-import", kwargs={"name": name})


def post_json(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def with_token(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=user, name='tests').secret}")


def judge(client: Client, project: str, rating_a: int, note: str, *, submit: bool = True) -> None:
    """Take the next item and answer it over the API: resp_a rated ``rating_a``, resp_b 2,
    the path through resp_a, resp_a better than resp_b."""
    item = client.post(reverse("api:item-next", kwargs={"name": project})).json()
    shown = item["annotations"]["judged"]["branch_comparisons"]["root"]["shown_order"]
    a, b = ("resp_a", "resp_b") if shown == ["resp_a", "resp_b"] else ("resp_b", "resp_a")
    label = "Better" if a == "resp_a" else "Worse"
    answers = {
        "judged": {
            "node_annotations": {"resp_a": {"rating": rating_a}, "resp_b": {"rating": 2}},
            "selected_path": ["root", "resp_a", "user_2"],
            "branch_comparisons": {
                "root": {"shown_order": shown, "pairs": [{"a": a, "b": b, "label": label}]}
            },
        },
        "note": {"text": note},
    }
    action = "item-submit" if submit else "item-draft"
    url = reverse(f"api:{action}", kwargs={"name": project, "tree_id": item["tree"]["id"]})
    method = client.post if submit else client.put
    response = method(
        url, data=json.dumps({"annotations": answers, "version": 1}), content_type="application/json"
    )
    assert response.status_code == 200, response.content


@pytest.fixture
def judged() -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita", "alice", "bob", "carol")}
    dataset = dataset_with("support-trees", [SEED_ITEM, SECOND_ITEM])
    project = project_create(name="support", dataset=dataset, config_yaml=CONFIG)
    for name, role in (
        ("maggie", "manager"),
        ("rita", "reviewer"),
        ("alice", "annotator"),
        ("bob", "annotator"),
    ):
        membership_add(project=project, user=people[name], role=role)
    clients = {name: with_token(user) for name, user in people.items()}
    judge(clients["alice"], "support", 5, "clear")
    judge(clients["bob"], "support", 4, "fine")
    judge(clients["alice"], "support", 3, "unsure", submit=False)  # a draft: left out by default
    return {"people": people, "clients": clients, "project": project}


def download(client: Client, project: str, **query: Any) -> tuple[Any, bytes]:
    response = client.get(export_url(project), query)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def command_output(project: str, *args: str) -> bytes:
    out = io.StringIO()
    call_command("export_annotations", project, *args, stdout=out)
    return out.getvalue().encode()


@pytest.mark.parametrize("format_name", list(EXPORTS))
def test_every_format_streams_what_the_command_writes(judged: dict[str, Any], format_name: str) -> None:
    response, body = download(judged["clients"]["maggie"], "support", format=format_name)

    assert response.status_code == 200
    assert response.streaming
    kind = EXPORTS[format_name].FILE
    assert response["Content-Type"] == f"{kind.media_type}; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="support.{format_name}.{kind.extension}"'
    )
    assert body == command_output("support", "--format", format_name)
    assert body


def test_potato_holds_one_record_per_item_and_annotator_with_every_scheme(judged: dict[str, Any]) -> None:
    _, body = download(judged["clients"]["rita"], "support", format="potato")

    records = [json.loads(line) for line in body.splitlines()]
    assert [(record["id"], record["user"]) for record in records] == [
        ("conv_001", "alice"),
        ("conv_001", "bob"),
    ]
    alice = records[0]["annotations"]
    assert alice["note"] == {"text": "clear"}
    assert alice["judged"]["selected_path"] == ["root", "resp_a", "user_2"]
    assert alice["judged"]["node_annotations"]["resp_a"] == {"rating": 5}


def test_pairs_and_sft_turn_the_judgements_into_training_data(judged: dict[str, Any]) -> None:
    client = judged["clients"]["maggie"]
    pairs = [json.loads(line) for line in download(client, "support", format="pairs")[1].splitlines()]
    paths = [json.loads(line) for line in download(client, "support", format="sft")[1].splitlines()]

    chosen = {(pair["chosen"][-1]["content"], pair["rejected"][-1]["content"]) for pair in pairs}
    assert chosen == {
        (SEED_ITEM["tree"]["children"][0]["content"], SEED_ITEM["tree"]["children"][1]["content"])
    }
    assert all(
        pair["prompt"] == [{"role": "user", "content": SEED_ITEM["tree"]["content"]}] for pair in pairs
    )
    assert len(paths) == 2
    assert [message["role"] for message in paths[0]["messages"]] == ["user", "assistant", "user"]


def test_drafts_come_with_status_all_and_one_annotator_with_user(judged: dict[str, Any]) -> None:
    client = judged["clients"]["maggie"]

    everything = download(client, "support", format="potato", status="all")[1]
    bobs = download(client, "support", format="potato", user="bob")[1]

    assert [json.loads(line)["id"] for line in everything.splitlines()] == [
        "conv_001",
        "conv_001",
        "conv_002",
    ]
    assert everything == command_output("support", "--format", "potato", "--status", "all")
    assert [json.loads(line)["user"] for line in bobs.splitlines()] == ["bob"]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({}, "format"),
        ({"format": "xlsx"}, "format"),
        ({"format": "potato", "status": "draft"}, "status"),
        ({"format": "potato", "user": "nobody"}, "user"),
        ({"format": "potato", "status": "final", "user": "alice"}, "user"),
        ({"format": "potato", "status": "final", "reference": "include"}, "reference"),
    ],
)
def test_a_bad_export_option_is_a_json_400_naming_it(
    judged: dict[str, Any], query: dict[str, str], path: str
) -> None:
    response, _ = download(judged["clients"]["maggie"], "support", **query)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert [error["path"] for error in response.json()["errors"]] == [path]


def test_exports_are_for_managers_and_reviewers(judged: dict[str, Any]) -> None:
    annotator, _ = download(judged["clients"]["alice"], "support", format="potato")
    outsider, _ = download(judged["clients"]["carol"], "support", format="potato")

    assert annotator.status_code == 403
    assert annotator.json()["message"] == "exports are for the project's managers and reviewers"
    assert outsider.status_code == 404


def test_an_export_imports_into_another_project_and_exports_the_same(judged: dict[str, Any]) -> None:
    maggie = judged["clients"]["maggie"]
    copy = project_create(name="copy", dataset=judged["project"].dataset, config_yaml=CONFIG)
    membership_add(project=copy, user=judged["people"]["maggie"], role="manager")
    exported = download(maggie, "support", format="potato")[1]
    records = [json.loads(line) for line in exported.splitlines()]

    response = post_json(maggie, import_url("copy"), {"records": records})

    assert response.status_code == 200, response.content
    assert response.json()["committed"] is True
    assert response.json()["annotations"] == 4
    assert download(maggie, "copy", format="potato")[1] == exported
    assert set(Annotation.objects.filter(project=copy).values_list("source", flat=True)) == {"import"}


def test_an_import_file_is_all_or_nothing_with_each_problem_located(judged: dict[str, Any]) -> None:
    maggie = judged["clients"]["maggie"]
    lines = [
        {"id": "conv_001", "user": "carol", "annotations": {"note": {"text": "ok"}}},
        {"id": "conv_404", "user": "carol", "annotations": {"note": {"text": "ok"}}},
        {"id": "conv_002", "user": "carol", "annotations": {"judged": {"selected_path": ["resp_b"]}}},
    ]
    upload = SimpleUploadedFile("answers.jsonl", "".join(json.dumps(line) + "\n" for line in lines).encode())

    response = maggie.post(import_url("support"), {"file": upload})

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "import_failed"
    assert [error["line"] for error in body["errors"]] == [2, 3]
    assert body["report"]["committed"] is False
    assert not Annotation.objects.filter(user__username="carol").exists()


def test_imports_are_for_managers(judged: dict[str, Any]) -> None:
    body = {"records": [{"id": "conv_001", "user": "rita", "annotations": {"note": {"text": "mine"}}}]}

    response = post_json(judged["clients"]["rita"], import_url("support"), body)

    assert response.status_code == 403
    assert not Project.objects.get(name="support").annotations.filter(user__username="rita").exists()
