"""Agreement snapshots in the admin: read-only, each with its answer count and a link to the
project's agreement page, and an action that recomputes them.

Persona: Alice is a superuser; Ann, Ben and Cleo's answers were imported.
"""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from evaluation.agreement.project import agreement_current
from evaluation.models import AgreementSnapshot
from tests.evaluation.agreement.test_agreement_page import rated_project
from tests.factories import StaffFactory

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:evaluation_agreementsnapshot_changelist")


@pytest.fixture
def as_alice(client: Client) -> Client:
    alice = StaffFactory(username="alice")
    alice.save(update_fields=["password"])
    client.force_login(alice)
    return client


@pytest.fixture
def snapshot():
    project = rated_project(
        "rated", {name: StaffFactory(username=name) for name in ("dana", "erin", "alice")}
    )
    agreement_current(project)
    return AgreementSnapshot.objects.get(project=project)


def test_the_list_shows_each_snapshot_with_its_answers_and_a_link_to_the_page(as_alice, snapshot):
    response = as_alice.get(CHANGELIST)

    html = response.content.decode()
    assert response.status_code == 200
    assert '<td class="field-answers">30</td>' in html
    assert f'<a href="{reverse("evaluation:agreement", args=["rated"])}">Agreement in rated</a>' in html


def test_snapshots_are_read_only(as_alice, snapshot):
    change = reverse("admin:evaluation_agreementsnapshot_change", args=[snapshot.pk])

    assert as_alice.post(change, {"stamp": "edited"}).status_code == 403
    assert as_alice.get(reverse("admin:evaluation_agreementsnapshot_add")).status_code == 403


def test_the_recompute_action_recomputes_and_keeps_the_figures(as_alice, snapshot):
    AgreementSnapshot.objects.filter(pk=snapshot.pk).update(stamp="stale", figures={})

    response = as_alice.post(
        CHANGELIST, {"action": "recompute", "_selected_action": [snapshot.pk]}, follow=True
    )

    (message,) = [str(m) for m in get_messages(response.wsgi_request)]
    assert message.startswith("rated: recomputed from 30 answers in ")
    kept = AgreementSnapshot.objects.get(pk=snapshot.pk)
    assert kept.stamp != "stale"
    assert kept.figures["annotations"] == 30
    assert agreement_current(snapshot.project).recomputed is False


def test_the_projects_admin_page_links_to_its_agreement_and_rubric_reports(as_alice, snapshot):
    response = as_alice.get(reverse("admin:annotation_project_change", args=[snapshot.project.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert f'href="/projects/{snapshot.project.name}/agreement/"' in html
    assert f'href="/projects/{snapshot.project.name}/rubrics/"' in html
