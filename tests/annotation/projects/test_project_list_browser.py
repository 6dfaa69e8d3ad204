"""The projects list in Chromium after a reviewer sends work back: the counts read right,
the sent-back row stands out, and the page passes axe at a desktop's and a phone's width.

Screenshots go to ``$BRANCHPOINT_ARTIFACTS`` (default ``tests/artifacts/``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.review.services import review_decide
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.annotation.projects.test_project_list import submit_next
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(
    os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[3] / "tests" / "artifacts"
)


def test_after_a_rejection_the_list_shows_the_item_sent_back(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over(
        "support",
        RESPONSE_QUALITY,
        [{**SEED_ITEM, "id": f"conv_{n}"} for n in range(5)],
        [alice],
        reviewers=[rita],
    )
    done = submit_next(project, alice)
    submit_next(project, alice)
    review_decide(
        assignment=done, reviewer=rita, decision="rejected", comment="Rate it.", version=done.version
    )
    sign_in(page, alice)

    page.goto(live_server.url + reverse("annotation:projects"))

    row = page.locator('tr[data-project="support"]')
    expect(row.locator('[data-count="sent-back"]')).to_have_text("1 sent back for changes")
    expect(row.locator('[data-count="submitted"]')).to_have_text("1 submitted")
    expect(row.locator('[data-count="to-do"]')).to_have_text("3 to do")
    expect(row).to_have_class("has-sent-back")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(ARTIFACTS / f"project_list_sent_back_{width}.png"), full_page=True)
    axe_clean(page)
