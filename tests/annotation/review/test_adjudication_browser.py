"""Adjudication in a real browser, from the keyboard: Rita opens the items to adjudicate from the
review queue, picks conv_001, chooses Bob's rating of resp_a with the arrow keys, the rest from
Alice and Carol, and saves; the page shows version 1 with her choices. Both pages are
accessible (axe) at a desktop's width and a phone's, and the site's CSP refuses nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import FinalAnswer
from tests.annotation.review.adjudicated import adjudicated_project, all_submit, people
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# Set to a folder to keep screenshots of the page at both widths (to look at it).
SCREENSHOTS = os.environ.get("BRANCHPOINT_SCREENSHOTS", "")


def test_a_reviewer_adjudicates_an_item_from_the_keyboard(live_server: Any, page: Any, sign_in: Any) -> None:
    who = people()
    project = adjudicated_project(who)
    all_submit(project, who)
    sign_in(page, who["rita"])

    page.goto(live_server.url + reverse("annotation:review", args=[project.name]))
    page.get_by_role("link", name="Items to adjudicate").click()
    axe_clean(page)
    page.get_by_role("link", name="conv_001").click()
    expect(page.locator("[data-disagreements]")).to_contain_text("4 fields where the annotators disagree")
    axe_clean(page)
    if SCREENSHOTS:
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            page.screenshot(path=str(Path(SCREENSHOTS) / f"adjudicate-{width}.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 900})

    # The first disagreement: resp_a's rating. Focus its first radio, then arrow to Bob's.
    first = page.locator('[data-field="response/node/resp_a"] input[type=radio]').first
    first.focus()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    expect(page.locator('[data-field="response/node/resp_a"] input[value="bob"]')).to_be_checked()
    for field, who_ in (
        ("response/path", "alice"),
        ("response/comparison/root", "carol"),
        ("overall", "carol"),
    ):
        page.locator(f'[data-field="{field}"] input[value="{who_}"]').check()
    page.locator("[data-save]").focus()
    page.keyboard.press("Enter")

    expect(page.locator("[data-final]")).to_contain_text("Final answer version 1, by rita")
    final = FinalAnswer.objects.get(project=project)
    assert final.provenance["response/node/resp_a"] == "bob"
    assert final.answers["overall"] == {"label": "Unhelpful"}
    assert page.csp_refused == []
