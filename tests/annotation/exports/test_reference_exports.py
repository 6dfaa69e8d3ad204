"""Exports and a corpus's reference answers: left out by default, in only when asked.

The rules:

- every export (the service, the project page's download, the API) leaves the
  reference answers out by default;
- ``reference=include`` (``--include-reference``) adds them beside the annotators',
  ``reference=only`` (``--reference-only``) gives them alone;
- the page offers the choice only in a project that has reference answers, and an
  unknown choice is refused with the reason, on the page as in the API.

Dana manages a CCPE project of one dialogue whose corpus brings its spans (held by
ccpe-gold); Alice and Bob annotate it.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.exports import annotations_export
from annotation.models import Membership
from annotation.projects.references import REFERENCE_USERNAME
from annotation.projects.services import membership_add
from tests.annotation.annotator_items import person
from tests.annotation.projects.test_ccpe_projects import ORIGINAL_FILE, two_annotators_submit_nothing
from tests.evaluation.agreement.test_agreement_page import rated_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def dana() -> Any:
    return person("dana")


@pytest.fixture
def project(dana):
    project = two_annotators_submit_nothing()
    membership_add(project=project, user=dana, role=Membership.Role.MANAGER)
    return project


def users(lines: Any) -> list[str]:
    return [json.loads(line)["user"] for line in lines]


def download(client: Any, url: str) -> list[str]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return users(b"".join(response.streaming_content).decode().splitlines())


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_export_leaves_the_reference_out_by_default(project):
    assert users(annotations_export(project=project, format_name="potato")) == ["alice", "bob"]


def test_an_export_asked_to_include_the_reference_has_its_records_too(project):
    lines = list(annotations_export(project=project, format_name="potato", reference="include"))

    assert users(lines) == ["alice", "bob", REFERENCE_USERNAME]
    assert len(json.loads(lines[2])["annotations"]["preferences"]["spans"]) == 45


def test_an_export_of_the_reference_only_has_nothing_else(project):
    assert users(annotations_export(project=project, format_name="potato", reference="only")) == [
        REFERENCE_USERNAME
    ]


def test_the_command_includes_the_reference_when_asked(project):
    plain, both = io.StringIO(), io.StringIO()
    call_command("export_annotations", project.name, "--format", "potato", stdout=plain, stderr=io.StringIO())
    call_command(
        "export_annotations",
        project.name,
        "--format",
        "potato",
        "--include-reference",
        stdout=both,
        stderr=io.StringIO(),
    )

    assert users(plain.getvalue().splitlines()) == ["alice", "bob"]
    assert users(both.getvalue().splitlines()) == ["alice", "bob", REFERENCE_USERNAME]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["alice", "bob"]),
        ("&reference=exclude", ["alice", "bob"]),
        ("&reference=include", ["alice", "bob", REFERENCE_USERNAME]),
        ("&reference=only", [REFERENCE_USERNAME]),
    ],
)
def test_the_page_download_leaves_the_reference_out_unless_asked(project, dana, query, expected):
    url = reverse("annotation:export", args=[project.name]) + "?format=potato" + query

    assert download(signed_in(dana), url) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["alice", "bob"]),
        ("&reference=include", ["alice", "bob", REFERENCE_USERNAME]),
        ("&reference=only", [REFERENCE_USERNAME]),
    ],
)
def test_the_api_export_leaves_the_reference_out_unless_asked(project, dana, query, expected):
    client = APIClient()
    client.force_authenticate(dana)

    assert download(client, f"/api/v1/projects/{project.name}/export?format=potato{query}") == expected


def test_the_page_download_of_the_reference_alone_is_the_corpus_and_says_so_in_its_name(project, dana):
    url = reverse("annotation:export", args=[project.name]) + "?format=ccpe&reference=only"

    response = signed_in(dana).get(url)

    assert response["Content-Disposition"].endswith('filename="movies.reference.ccpe.json"')
    assert json.loads(b"".join(response.streaming_content)) == json.loads(ORIGINAL_FILE.read_text())


def test_an_unknown_choice_is_refused_with_the_reason(project, dana):
    client = APIClient()
    client.force_authenticate(dana)

    api = client.get(f"/api/v1/projects/{project.name}/export?format=potato&reference=some")
    page = signed_in(dana).get(
        reverse("annotation:export", args=[project.name]) + "?format=potato&reference=some"
    )

    assert api.status_code == 400 and [error["path"] for error in api.json()["errors"]] == ["reference"]
    assert page.status_code == 400 and page.content.decode().startswith("cannot export: reference:")


def test_the_project_page_offers_the_reference_only_where_there_is_one(project, dana):
    other = rated_project("rated", {"dana": dana, "alice": person("ann1"), "erin": person("erin")})

    with_reference = signed_in(dana).get(reverse("annotation:project", args=[project.name]))
    without = signed_in(dana).get(reverse("annotation:project", args=[other.name]))

    assert 'name="reference"' in with_reference.content.decode()
    assert 'name="reference"' not in without.content.decode()
