"""The admin's pages for models in the loop, as an admin uses them in a browser: the endpoint's
page with its Test connection button, "Grow branches with a model" on a dataset, and "Run on a
project…" for a judge — each with no accessibility violation at 1280 and 390 px (screenshots in
artifacts/), and each doing what it says: the test answers, the grown tree has its replies, the
judge's answers are there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Annotation
from evaluation.llm.judges import judge_create
from tests.evaluation.llm.judging_projects import rubric_project, rubric_reply
from tests.factories import ChainTreeFactory, DatasetFactory, StaffFactory
from tests.test_csp_browser import axe_clean
from tests.trees.test_admin import saved
from trees.models import Message

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "artifacts")


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"llm-admin-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def axe_checked(page: Page) -> None:
    """``axe_clean``, leaving out what the policy refused axe itself: its probes of the admin's
    forms insert inline styles, which the site's policy rightly refuses (no page of ours does)."""
    before = len(page.csp_refused)
    axe_clean(page)
    probes = page.csp_refused[before:]
    assert all(text.startswith("style-src-elem refused inline") for text in probes), probes
    del page.csp_refused[before:]


def action_on(page: Page, row_text: str, action: str) -> None:
    """Tick the row and run the action, as an admin does on a list."""
    page.locator("#result_list tr", has_text=row_text).locator("input.action-select").check()
    page.locator("select[name=action]").select_option(action)
    page.get_by_role("button", name="Go").click()


@pytest.fixture
def admin_page(live_server: Any, page: Page, sign_in: Any, settings: Any) -> Page:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    sign_in(page, saved(StaffFactory(username="root", is_superuser=True)))
    return page


def test_an_admin_tests_an_endpoint_grows_a_dataset_and_runs_a_judge(
    admin_page: Page, live_server: Any, chat_server: Any, endpoint: Any
) -> None:
    page = admin_page
    # The endpoint's page, and its test.
    chat_server.respond = lambda body: "OK"
    page.goto(live_server.url + reverse("admin:llm_modelendpoint_change", args=[endpoint.pk]))
    axe_checked(page)
    shot(page, "endpoint")
    page.get_by_role("button", name="Test connection").click()
    expect(page.locator(".messagelist")).to_contain_text("OK")

    # Grow: a dataset of one question left unanswered gets two model replies.
    dataset = DatasetFactory(name="asked")
    ChainTreeFactory(dataset=dataset, chain=1, external_id="t1")
    chat_server.respond = lambda body: "A model's reply."
    page.goto(live_server.url + reverse("admin:trees_dataset_changelist"))
    action_on(page, "asked", "grow_branches")
    expect(page.get_by_role("heading", name="Grow branches with a model")).to_be_visible()
    axe_checked(page)
    shot(page, "grow-form")
    page.get_by_label("Endpoint").select_option("local")
    page.get_by_label("Replies per turn").fill("2")
    page.locator("form [type=submit]").last.click()
    expect(page.locator(".messagelist")).to_contain_text("grows its branches")
    replies = Message.objects.filter(tree__dataset=dataset, parent__external_id="m0")
    assert [(reply.text, reply.synthetic) for reply in replies] == [("A model's reply.", True)] * 2

    # A judge run on a project, from the judges' list.
    project = rubric_project(items=1)
    judge_create(name="critic", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()
    page.goto(live_server.url + reverse("admin:llm_judge_changelist"))
    action_on(page, "critic", "run_on_project")
    axe_checked(page)
    shot(page, "judge-run-form")
    page.get_by_label("Project").select_option(project.name)
    page.locator("form [type=submit]").last.click()
    expect(page).to_have_url(live_server.url + reverse("admin:jobs_job_changelist"))
    assert Annotation.objects.filter(user__username="judge:critic", source="model").count() == 1
