"""From the report to the conversations in Chromium: an outcome's count is a link, the results
page lists them and leads to the item, and both pages pass axe at a desktop's and a phone's
width. Screenshots go to ``$BRANCHPOINT_ARTIFACTS`` (default ``tests/artifacts/``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from evaluation.models import Rubric
from evaluation.services import project_evaluate
from tests.annotation.annotator_items import person
from tests.evaluation.samples import scheduling_project
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(
    os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "tests" / "artifacts"
)


def test_an_outcome_leads_to_its_conversations_and_on_to_the_item(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    dana = person("dana")
    project = scheduling_project(managers=[dana])
    project_evaluate(project=project, rubric=Rubric.objects.get(name="scheduling"))
    sign_in(page, dana)

    page.goto(live_server.url + reverse("evaluation:report", args=[project.name, "scheduling"]))
    axe_clean(page)
    page.get_by_role("link", name="3 results with outcome partial_failure").click()

    expect(page.locator("h1")).to_have_text("Results: outcome partial_failure")
    expect(page.locator("[data-result-rows] tbody tr")).to_have_count(3)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(ARTIFACTS / f"rubric_results_{width}.png"), full_page=True)
    axe_clean(page)
    page.get_by_role("link", name="sched_005").click()
    expect(page).to_have_url(
        f"{live_server.url}/projects/{project.name}/review/{project.items.get(tree__external_id='sched_005').tree_id}/"
    )
