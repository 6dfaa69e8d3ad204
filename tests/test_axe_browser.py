"""An axe-core sweep of the pages a manager who also annotates goes through in a day, at a
desktop's width (1280 px) and a phone's (390 px): no serious or critical violation on any.

Maggie manages "support", where Alice and Bob submitted conv_001, and annotates in a
collection project where Alice wrote a prompt. She opens the projects list, the review
queue, conv_001's review page (with its gold buttons), marks Alice's answer as gold (the
page then offers the undo), then the collection picker and a task. (The annotate page and
My work have sweeps of their own.)

Screenshots of each page at both widths go to ``$BRANCHPOINT_ARTIFACTS`` (default
``tests/artifacts/``, which git ignores).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Membership
from annotation.projects.services import membership_add
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.annotation.collection.collect import collect_project, prompt
from tests.annotation.review.test_review_pages import ALICE_ANSWERS, BOB_ANSWERS, CONFIG, submit
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parent / "artifacts")


def checked(page: Page, name: str) -> None:
    """Screenshots of the page at both widths, then axe at both."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"axe_{name}_{width}.png"), full_page=True)
    axe_clean(page)


def test_the_review_projects_list_and_collection_pages_pass_axe_at_both_widths(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, bob, maggie = person("alice"), person("bob"), person("maggie")
    support = project_over(
        "support", CONFIG, [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}], [alice, bob], managers=[maggie]
    )
    work = submit(support, alice, ALICE_ANSWERS)
    submit(support, bob, BOB_ANSWERS)
    collect = collect_project([alice], max_active_trees=1, max_initial_prompt_review=1)
    membership_add(project=collect, user=maggie, role=Membership.Role.ANNOTATOR)
    prompt(collect, alice, "How do I keep basil alive on a windowsill?")
    sign_in(page, maggie)

    page.goto(live_server.url + reverse("annotation:projects"))
    expect(page.locator('tr[data-project="support"]')).to_be_visible()
    checked(page, "projects")

    page.goto(live_server.url + reverse("annotation:review", args=["support"]))
    expect(page.get_by_role("link", name="conv_001")).to_be_visible()
    checked(page, "review_list")

    page.goto(live_server.url + reverse("annotation:review-item", args=["support", work.tree_id]))
    expect(page.locator("[data-gold-mark]")).to_have_count(2)
    checked(page, "review_item")

    page.get_by_role("button", name="Mark alice's answer as gold").click()
    expect(page.locator("[data-gold-done]")).to_contain_text(
        "alice's answer is now the gold answer of conv_001."
    )
    expect(page.locator("[data-gold-same]")).to_have_count(1)
    checked(page, "review_item_gold")

    page.goto(f"{live_server.url}/collect/{collect.name}/")
    start = page.locator('[data-task-type="label_initial_prompt"] button')
    expect(start).to_be_enabled()
    checked(page, "collection_picker")

    start.click()
    expect(page.locator("[data-task]")).to_have_attribute("data-ready", "true")
    checked(page, "collection_task")
