"""A project's webhooks over the API: managers add, read, change and delete them; the
secret is written and never read back; a URL that is not http(s), an event that is not
one, or a short secret is a 400 naming the field; deliveries are listed with their status.

In project support Maggie manages and Rita reviews.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from annotation.projects.services import membership_add, project_create
from annotation.webhooks.events import deliveries_record
from annotation.webhooks.models import Webhook
from tests.annotation.annotator_items import person
from tests.api.world import dataset_with, potato_items, session_client
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

BODY = {"url": "https://hooks.example.com/in", "secret": "a-long-enough-secret", "events": ["item.submitted"]}


@pytest.fixture
def support() -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita")}
    project = project_create(
        name="support",
        dataset=dataset_with("support-trees", potato_items("s", "S", 1)),
        config_yaml="annotation_schemes: [{annotation_type: text, name: note, description: Note}]\n",
    )
    membership_add(project=project, user=people["maggie"], role="manager")
    membership_add(project=project, user=people["rita"], role="reviewer")
    return people | {"project": project}


def url(webhook_id: int | None = None, suffix: str = "") -> str:
    if webhook_id is None:
        return reverse("api:webhooks", kwargs={"name": "support"})
    name = "api:webhook-deliveries" if suffix else "api:webhook"
    return reverse(name, kwargs={"name": "support", "webhook_id": webhook_id})


def send(client: Any, method: str, where: str, body: Any) -> Any:
    return getattr(client, method)(where, data=json.dumps(body), content_type="application/json")


def test_a_manager_adds_a_webhook_whose_secret_is_never_read_back(support: dict[str, Any]) -> None:
    client = session_client(support["maggie"])
    created = send(client, "post", url(), BODY)
    assert created.status_code == 201, created.content
    assert "secret" not in created.json()
    assert Webhook.objects.get().secret == BODY["secret"]
    listed = client.get(url()).json()["results"]
    assert [(row["url"], row["events"]) for row in listed] == [(BODY["url"], ["item.submitted"])]
    assert "a-long-enough-secret" not in client.get(url(listed[0]["id"])).content.decode()
    assert AuditEntry.objects.filter(action="webhook.create").count() == 1


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"url": "ftp://hooks.example.com/in"}, "url"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"events": ["item.deleted"]}, "events[0]"),
        ({"events": []}, "events"),
        ({"secret": "short"}, "secret"),
    ],
)
def test_what_cannot_be_sent_is_refused_naming_the_field(
    support: dict[str, Any], change: Any, path: str
) -> None:
    response = send(session_client(support["maggie"]), "post", url(), BODY | change)
    assert response.status_code == 400
    assert path in [error["path"] for error in response.json()["errors"]]
    assert not Webhook.objects.exists()


def test_a_host_outside_the_allow_list_is_refused(support: dict[str, Any], settings: Any) -> None:
    settings.BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS = ["hooks.internal.example"]
    response = send(session_client(support["maggie"]), "post", url(), BODY)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "url"


def test_changing_and_deleting(support: dict[str, Any]) -> None:
    client = session_client(support["maggie"])
    webhook_id = send(client, "post", url(), BODY).json()["id"]
    changed = send(client, "patch", url(webhook_id), {"active": False, "events": ["review.decided"]})
    assert (changed.json()["active"], changed.json()["events"]) == (False, ["review.decided"])
    assert client.delete(url(webhook_id)).status_code == 204
    assert not Webhook.objects.exists()


def test_deliveries_are_listed_with_their_status(support: dict[str, Any]) -> None:
    client = session_client(support["maggie"])
    webhook_id = send(client, "post", url(), BODY).json()["id"]
    deliveries_record(support["project"].pk, "item.submitted", {"item": "s-0"})
    [row] = client.get(url(webhook_id, "deliveries")).json()["results"]
    assert (row["event"], row["status"], row["attempts"]) == ("item.submitted", "pending", 0)


def test_reviewers_may_not_see_webhooks(support: dict[str, Any]) -> None:
    assert session_client(support["rita"]).get(url()).status_code == 403


@pytest.mark.parametrize("count", [1, 4])
def test_webhooks_and_deliveries_are_listed_in_fixed_queries(
    support: dict[str, Any], django_assert_num_queries: Any, count: int
) -> None:
    client = session_client(support["maggie"])
    ids = [send(client, "post", url(), BODY).json()["id"] for _ in range(count)]
    for _ in range(count):
        deliveries_record(support["project"].pk, "item.submitted", {"item": "s-0"})
    client.get(url())
    with django_assert_num_queries(6):
        assert len(client.get(url()).json()["results"]) == count
    with django_assert_num_queries(7):
        assert len(client.get(url(ids[0], "deliveries")).json()["results"]) == count
