"""Judges in the admin: made, changed and deleted through the judges' services (each logged), the
name fixed once made (it names the account), and a link to the judge's report in each project."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.llm.models import Judge
from evaluation.llm.services import endpoint_create
from tests.factories import StaffFactory
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_a_judge_made_changed_and_deleted_in_the_admin_keeps_its_account_and_is_logged():
    endpoint = endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    client = Client()
    client.force_login(StaffFactory(username="root"))
    form = {
        "name": "helpful",
        "kind": "rubric",
        "endpoint": endpoint.pk,
        "system_prompt": "",
        "prompt_template": "",
        "sampling": "{}",
        "max_attempts": "3",
    }

    made = client.post(reverse("admin:llm_judge_add"), form)
    assert made.status_code == 302, made.content.decode()[:2000]
    judge = Judge.objects.get(name="helpful")
    assert judge.user.username == "judge:helpful"
    page = client.get(reverse("admin:llm_judge_change", args=[judge.pk])).content.decode()
    assert "judge:helpful" in page and "no answers in any project yet" in page

    changed = client.post(
        reverse("admin:llm_judge_change", args=[judge.pk]), {**form, "name": "renamed", "max_attempts": "5"}
    )
    assert changed.status_code == 302
    judge.refresh_from_db()
    assert (judge.name, judge.max_attempts) == ("helpful", 5)

    client.post(reverse("admin:llm_judge_delete", args=[judge.pk]), {"post": "yes"})
    assert not Judge.objects.exists()
    actions = list(
        AuditEntry.objects.filter(action__startswith="judge.").order_by("id").values_list("action", "via")
    )
    assert actions == [("judge.create", "admin"), ("judge.update", "admin"), ("judge.delete", "admin")]
