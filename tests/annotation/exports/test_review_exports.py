"""Exports of reviewed work: "accepted" keeps only what a reviewer accepted, in every
door (the service, the command, the project page's download); work sent back is a draft
again, so it leaves the submitted export too, and comes back once resubmitted.

Alice, Bob and Carol annotate the same two items; Rita reviews.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.exports import annotations_export
from annotation.models import Assignment, Project
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over

pytestmark = pytest.mark.django_db

CONFIG = """\
annotation_schemes:
  - {annotation_type: radio, name: overall, description: Overall, labels: [Helpful, Unhelpful]}
assignment: {annotations_per_item: 3}
"""


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("alice", "bob", "carol", "rita")}


@pytest.fixture
def project(people: dict[str, Any]) -> Project:
    """Everyone submitted both items; Rita accepted Alice's conv_001 and Bob's conv_002,
    sent Carol's conv_001 back, and has not looked at the rest."""
    project = project_over(
        "support",
        CONFIG,
        [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}],
        [people["alice"], people["bob"], people["carol"]],
        reviewers=[people["rita"]],
    )
    for name in ("alice", "bob", "carol"):
        for _ in range(2):
            held = item_next(project=project, user=people[name])
            item_submit(
                project=project,
                tree=held.tree,
                user=people[name],
                answers={"overall": {"label": "Helpful"}},
                version=held.version,
            )
    for name, item, decision in (("alice", "conv_001", "accepted"), ("bob", "conv_002", "accepted")):
        work = Assignment.objects.get(project=project, user=people[name], tree__external_id=item)
        review_decide(reviewer=people["rita"], assignment=work, decision=decision, version=work.version)
    carols = Assignment.objects.get(project=project, user=people["carol"], tree__external_id="conv_001")
    review_decide(
        reviewer=people["rita"],
        assignment=carols,
        decision="rejected",
        comment="Why?",
        version=carols.version,
    )
    return project


def records(lines: Any) -> list[tuple[str, str]]:
    return [(record["id"], record["user"]) for record in map(json.loads, lines)]


def test_an_accepted_export_holds_only_accepted_work(project):
    assert records(annotations_export(project=project, format_name="potato", status="accepted")) == [
        ("conv_001", "alice"),
        ("conv_002", "bob"),
    ]


def test_work_sent_back_leaves_the_submitted_export_until_it_is_resubmitted(project, people):
    submitted = records(annotations_export(project=project, format_name="potato"))
    assert ("conv_001", "carol") not in submitted
    assert len(submitted) == 5

    held = item_next(project=project, user=people["carol"])
    item_submit(
        project=project,
        tree=held.tree,
        user=people["carol"],
        answers={"overall": {"label": "Unhelpful"}},
        version=held.version,
    )

    assert ("conv_001", "carol") in records(annotations_export(project=project, format_name="potato"))
    assert ("conv_001", "carol") not in records(
        annotations_export(project=project, format_name="potato", status="accepted")
    )


def test_accepted_and_one_annotator_combine(project, people):
    lines = annotations_export(project=project, format_name="potato", status="accepted", user=people["bob"])

    assert records(lines) == [("conv_002", "bob")]


def test_the_command_exports_accepted_work_with_status_accepted(project):
    out, err = io.StringIO(), io.StringIO()

    call_command(
        "export_annotations", "support", "--format", "potato", "--status", "accepted", stdout=out, stderr=err
    )

    assert records(out.getvalue().splitlines()) == [("conv_001", "alice"), ("conv_002", "bob")]
    assert err.getvalue().strip() == "exported 2 records of support"


def test_the_project_page_download_gives_accepted_work_to_reviewers(project, people):
    client = Client()
    client.force_login(people["rita"])
    url = reverse("annotation:export", args=["support"])

    response = client.get(url, {"format": "potato", "status": "accepted"})

    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="support.accepted.potato.jsonl"'
    assert records(b"".join(response.streaming_content).decode().splitlines()) == [
        ("conv_001", "alice"),
        ("conv_002", "bob"),
    ]
    assert client.get(url, {"format": "potato"}).headers["Content-Disposition"] == (
        'attachment; filename="support.potato.jsonl"'
    )


def test_the_download_refuses_annotators_and_says_what_is_wrong_with_a_request(project, people):
    client = Client()
    client.force_login(people["alice"])
    url = reverse("annotation:export", args=["support"])
    assert client.get(url, {"format": "potato"}).status_code == 403

    client.force_login(people["rita"])
    response = client.get(url, {"format": "yaml", "status": "accepted"})

    assert response.status_code == 400
    assert response.content.decode() == (
        "cannot export: format: Select a valid choice. yaml is not one of the available choices.\n"
    )
