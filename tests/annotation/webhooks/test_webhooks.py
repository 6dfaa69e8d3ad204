"""Webhooks, sent to a real HTTP receiver on 127.0.0.1.

In project support Maggie manages, Rita reviews, Alice annotates; the project has a
webhook for every event, pointing at the test's receiver.

- An event is recorded as a delivery once its transaction commits (nothing for a rolled
  back one, nothing for a project without webhooks, nothing for an event not subscribed),
  and a failure to record it never fails the request.
- Sending POSTs the JSON body, signed: ``X-Branchpoint-Signature: t=<unix>,v1=<hmac>``
  verifies with the secret over ``"<t>." + body``.
- A receiver that fails is retried with backoff, then the delivery is failed, with its
  attempts, status code and last error; a redirect is never followed.
- Replaying from the admin sends it again, and it is delivered; the replay is audited.
- Each event: item.submitted, review.decided, item.finalised, tree.ready_for_export,
  evaluation.finished.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse

from annotation.models import Membership
from annotation.projects.services import membership_add, project_create
from annotation.review.services import review_decide
from annotation.review.signals import item_finalised
from annotation.webhooks import events
from annotation.webhooks.models import Delivery, Webhook
from annotation.webhooks.sending import deliveries_send
from annotation.webhooks.services import webhook_create
from annotation.webhooks.signing import HEADER, signature, signature_valid
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person
from tests.annotation.webhooks.receiver import receiver
from tests.api.world import dataset_with, potato_items, session_client
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

SECRET = "s3cret-s3cret-s3cret"
CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
"""


@pytest.fixture
def support() -> dict[str, Any]:
    people = {name: person(name) for name in ("maggie", "rita", "alice")}
    project = project_create(
        name="support", dataset=dataset_with("support-trees", potato_items("s", "S", 2)), config_yaml=CONFIG
    )
    for name, role in (("maggie", "manager"), ("rita", "reviewer"), ("alice", "annotator")):
        membership_add(project=project, user=people[name], role=role)
    return people | {"project": project}


@pytest.fixture
def hook(support: dict[str, Any]) -> Any:
    with receiver() as received:
        webhook_create(
            project=support["project"], url=received.url, secret=SECRET, events=list(events.EVENTS)
        )
        yield received


def submit(support: dict[str, Any]) -> Any:
    held = item_next(project=support["project"], user=support["alice"])
    return item_submit(
        project=support["project"],
        tree=held.tree,
        user=support["alice"],
        answers={"quality": {"rating": 4}},
        version=held.version,
    )


# -- signing (pure) -------------------------------------------------------------------------


def test_a_signature_verifies_only_for_its_body_secret_and_time() -> None:
    header = signature(SECRET, b'{"a":1}', 1_700_000_000)
    assert signature_valid(SECRET, b'{"a":1}', header, now=1_700_000_100)
    assert not signature_valid(SECRET, b'{"a":2}', header, now=1_700_000_100)
    assert not signature_valid("another-secret-xx", b'{"a":1}', header, now=1_700_000_100)
    assert not signature_valid(SECRET, b'{"a":1}', header, now=1_700_000_000 + 301)
    assert not signature_valid(SECRET, b'{"a":1}', "garbage", now=1_700_000_000)


# -- recording ------------------------------------------------------------------------------


def test_a_submission_is_recorded_once_it_commits(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        work = submit(support)
    [delivery] = Delivery.objects.all()
    assert delivery.event == "item.submitted"
    assert delivery.payload["data"] == {
        "tree_id": work.tree_id,
        "item": work.tree.external_id,
        "annotator": "alice",
        "version": work.version,
    }


def test_nothing_is_recorded_for_a_rolled_back_change_or_an_unsubscribed_event(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        submit(support)
        transaction.set_rollback(True)
    Webhook.objects.update(events=["review.decided"])
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    assert not Delivery.objects.exists()


def test_a_failure_to_record_never_fails_the_request(
    support: dict[str, Any], hook: Any, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    def broken(*args: Any) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(events, "deliveries_record", broken)
    held = item_next(project=support["project"], user=support["alice"])
    url = reverse("api:item-submit", kwargs={"name": "support", "tree_id": held.tree_id})
    body = {"annotations": {"quality": {"rating": 4}}, "version": held.version}
    with django_capture_on_commit_callbacks(execute=True):
        response = session_client(support["alice"]).post(
            url, data=json.dumps(body), content_type="application/json"
        )
    assert response.status_code == 200


# -- sending --------------------------------------------------------------------------------


def test_a_delivery_is_posted_signed_and_verifies(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    [sent] = deliveries_send()
    assert (sent.status, sent.attempts, sent.response_code) == ("delivered", 1, 200)
    [request] = hook.received
    assert signature_valid(SECRET, request.body, request.headers[HEADER], now=int(time.time()))
    body = json.loads(request.body)
    assert (body["id"], body["event"], body["project"]) == (sent.pk, "item.submitted", "support")
    assert request.headers["X-Branchpoint-Event"] == "item.submitted"


def test_a_failing_receiver_is_retried_with_backoff_then_failed_and_a_replay_delivers(
    support: dict[str, Any], hook: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.BRANCHPOINT_WEBHOOK_MAX_ATTEMPTS = 3
    settings.BRANCHPOINT_WEBHOOK_BACKOFF_SECONDS = 60
    hook.status = 500
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    [first] = deliveries_send()
    assert (first.status, first.attempts, first.last_error) == ("pending", 1, "HTTP 500")
    assert deliveries_send() == []  # not due for a minute
    Delivery.objects.update(next_attempt_at=first.created_at)
    [second] = deliveries_send()
    delay = (second.next_attempt_at - second.updated_at).total_seconds()
    assert 119 <= delay <= 121  # doubled
    Delivery.objects.update(next_attempt_at=first.created_at)
    [third] = deliveries_send()
    assert (third.status, third.attempts, third.response_code) == ("failed", 3, 500)
    assert len(hook.received) == 3

    hook.status = 200
    root = person("root", is_superuser=True, is_staff=True)
    changelist = reverse("admin:webhooks_delivery_changelist")
    response = session_client(root).post(changelist, {"action": "replay", "_selected_action": [third.pk]})
    assert response.status_code == 302
    replayed = Delivery.objects.get(pk=third.pk)
    assert (replayed.status, replayed.attempts, replayed.last_error) == ("delivered", 1, "")
    assert len(hook.received) == 4
    assert AuditEntry.objects.filter(action="webhook.replay", actor=root).count() == 1


def test_a_redirect_is_not_followed(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    hook.status, hook.location = 307, "http://169.254.169.254/latest/meta-data"
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    [sent] = deliveries_send()
    assert sent.status == "pending"
    assert "not followed" in sent.last_error
    assert len(hook.received) == 1


def test_a_host_outside_the_allow_list_is_not_sent_to(
    support: dict[str, Any], hook: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    settings.BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    [sent] = deliveries_send()
    assert "BRANCHPOINT_WEBHOOK_ALLOWED_HOSTS" in sent.last_error
    assert hook.received == []


def test_the_command_sends_what_is_due(
    support: dict[str, Any], hook: Any, capsys: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    call_command("send_webhooks")
    assert "1 sent: 1 delivered" in capsys.readouterr().out
    assert Delivery.objects.get().status == "delivered"


# -- the other events -----------------------------------------------------------------------


def test_a_review_decision_is_an_event(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    work = submit(support)
    with django_capture_on_commit_callbacks(execute=True):
        review_decide(reviewer=support["rita"], assignment=work, decision="accepted", version=work.version)
    [delivery] = Delivery.objects.filter(event="review.decided")
    assert delivery.payload["data"] | {"version": 0} == {
        "tree_id": work.tree_id,
        "item": work.tree.external_id,
        "annotator": "alice",
        "reviewer": "rita",
        "decision": "accepted",
        "comment": "",
        "version": 0,
    }


def test_an_item_finalised_is_an_event(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        item_finalised.send(sender=support["project"], tree_id="s-0", version=3, by=support["maggie"])
    [delivery] = Delivery.objects.filter(event="item.finalised")
    assert delivery.payload["data"] == {"item": "s-0", "version": 3, "by": "maggie"}


def test_a_collected_tree_ready_for_export_is_an_event(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from annotation.collection.states import tree_finished

    project = support["project"]
    with django_capture_on_commit_callbacks(execute=True):
        for tree_id, state in ((7, "halted_by_moderator"), (8, "ready_for_export")):
            tree_finished.send(
                sender=None,
                project_id=project.pk,
                now=None,
                tree_id=tree_id,
                external_id=f"t-{tree_id}",
                state=state,
            )
    [delivery] = Delivery.objects.filter(event="tree.ready_for_export")
    assert delivery.payload["data"] == {"tree_id": 8, "tree": "t-8", "state": "ready_for_export"}


def test_an_evaluation_run_is_an_event(
    support: dict[str, Any], hook: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from evaluation.services import project_evaluate
    from tests.factories import RubricFactory

    rubric = RubricFactory()
    with django_capture_on_commit_callbacks(execute=True):
        project_evaluate(project=support["project"], rubric=rubric)
    [delivery] = Delivery.objects.filter(event="evaluation.finished")
    assert delivery.payload["data"]["rubric"] == rubric.name
    assert delivery.payload["data"]["items"] == 2


def test_a_project_without_webhooks_records_nothing(
    support: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    membership_add(project=support["project"], user=support["alice"], role=Membership.Role.ANNOTATOR)
    with django_capture_on_commit_callbacks(execute=True):
        submit(support)
    assert not Delivery.objects.exists()
