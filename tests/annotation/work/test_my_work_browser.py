"""My work and Previous / Next in a real browser, with the keyboard where it counts.

Alice submits three items from the annotate page (Ctrl+Enter) and is handed
a fourth, which she holds as a draft (each came back with the hand-out and shows
its own address, so a reload asks for it again). Rita sends the second back with a
comment. Alice opens My work from the annotate page: the sent-back item
comes first (sending it back handed it to her again), highlighted, with
Rita's comment; the filter keeps it alone. From the oldest item, Next (the
button, then `]`) walks the list to the newest, where Next has nowhere to go
while she holds it; `[` walks back. My work and the annotate page have no
accessibility violation at a desktop's width or a phone's.

My work is one link away from the projects list, the project's page and the
"nothing left" page (no dead end), each of them axe-clean too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Project
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "artifacts")
CONFIG = """\
annotation_schemes:
  - {annotation_type: radio, name: overall, description: Overall helpfulness, labels: [Helpful, Unhelpful]}
"""
COMMENT = "The second reply is helpful too: say so."


def screenshots(page: Page, name: str) -> None:
    """The page at a desktop's width and a phone's, whole, into the artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"my-work-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def item_url(live_server: Any, project: Project, external_id: str) -> str:
    tree = project.dataset.trees.get(external_id=external_id)
    return live_server.url + reverse("annotation:item", args=[project.name, tree.pk])


def ready(page: Page) -> None:
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def new_tab(browser: Any) -> Page:
    tab = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    tab.set_default_timeout(10_000)
    return tab


def test_previous_next_and_my_work_with_a_sent_back_item(
    live_server: Any, page: Page, browser: Any, sign_in: Any
) -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over(
        "support", CONFIG, [{**SEED_ITEM, "id": f"conv_{n}"} for n in range(1, 5)], [alice], reviewers=[rita]
    )
    sign_in(page, alice)

    # Alice submits three items, each with Ctrl+Enter, and is handed the fourth.
    page.goto(live_server.url + reverse("annotation:project", args=["support"]))
    page.get_by_role("button", name="Start annotating").click()
    for external_id in ("conv_1", "conv_2", "conv_3"):
        expect(page).to_have_url(item_url(live_server, project, external_id))
        ready(page)
        page.keyboard.press("Control+Enter")
    expect(page).to_have_url(item_url(live_server, project, "conv_4"))
    ready(page)
    # Each item came back with the hand-out (a POST) and shows its own address: a reload asks
    # for that item again, with a GET, not for another hand-out.
    reloaded = page.reload()
    assert reloaded is not None and reloaded.request.method == "GET"
    expect(page).to_have_url(item_url(live_server, project, "conv_4"))
    ready(page)

    # Rita sends conv_2 back with a comment.
    reviewer = new_tab(browser)
    sign_in(reviewer, rita)
    reviewer.goto(live_server.url + reverse("annotation:review", args=["support"]))
    reviewer.get_by_role("link", name="conv_2").click()
    reviewer.locator('[data-column="alice"] [data-comment]').fill(COMMENT)
    reviewer.locator('[data-column="alice"] [data-reject]').click()
    expect(reviewer.locator(".messages")).to_have_text("Sent conv_2 back to alice with your comment.")
    reviewer.context.close()

    # My work, from the annotate page: newest activity first, the sent-back item highlighted with why.
    page.get_by_role("link", name="My work").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("support · My work")
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(4)
    assert [row.get_attribute("data-item") for row in rows.all()] == ["conv_2", "conv_4", "conv_3", "conv_1"]
    sent_back = page.locator('tr[data-item="conv_2"]')
    expect(sent_back).to_have_class("is-sent-back")
    expect(sent_back).to_contain_text("Sent back")
    expect(sent_back.locator("[data-review-comment]")).to_have_text(f"Why: rita: “{COMMENT}”")
    expect(page.locator('tr[data-item="conv_4"]')).to_contain_text("Draft")
    expect(page.locator('tr[data-item="conv_1"]')).to_contain_text("Submitted")
    # Drawn in red, with a red rule on its left, where the others are not.
    assert sent_back.evaluate("row => getComputedStyle(row.querySelector('th')).borderLeftWidth") == "4px"
    axe_clean(page)
    screenshots(page, "list")

    # The filter is a plain GET form.
    page.get_by_label("Show").select_option("sent_back")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-item", "conv_2")
    assert "status=sent_back" in page.url
    page.get_by_label("Show").select_option("all")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(4)

    # From the oldest item, Next walks the list to the newest: by button, then by key.
    page.get_by_role("link", name="conv_1").click()
    ready(page)
    previous, following = page.locator("[data-walk-previous]"), page.locator("[data-walk-next]")
    expect(previous).to_be_disabled()
    expect(following).to_have_attribute("aria-keyshortcuts", "]")
    following.click()
    expect(page).to_have_url(item_url(live_server, project, "conv_3"))
    ready(page)
    page.keyboard.press("]")
    expect(page).to_have_url(item_url(live_server, project, "conv_4"))
    ready(page)
    page.keyboard.press("]")
    expect(page).to_have_url(item_url(live_server, project, "conv_2"))
    ready(page)
    expect(page.locator("[data-review-comment]")).to_have_text(COMMENT)
    screenshots(page, "annotate")
    axe_clean(page)

    # The newest, and still hers to fix: Next has nowhere to go, and says why.
    expect(following).to_be_disabled()
    page.keyboard.press("]")
    expect(page.locator("[data-flash]")).to_have_text(
        "This is your newest item: submit or skip it to get another."
    )
    assert page.url == item_url(live_server, project, "conv_2")

    # [ walks back, as does the Previous button.
    page.keyboard.press("[")
    expect(page).to_have_url(item_url(live_server, project, "conv_4"))
    ready(page)
    page.locator("[data-walk-previous]").click()
    expect(page).to_have_url(item_url(live_server, project, "conv_3"))
    ready(page)

    # The keys are in the help.
    page.keyboard.press("?")
    expect(page.locator("[data-help]")).to_contain_text("previous / next of your items")


def test_my_work_is_one_step_from_the_projects_list_the_project_page_and_nothing_left(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project_over("support", CONFIG, [SEED_ITEM], [alice])
    sign_in(page, alice)
    my_work = live_server.url + reverse("annotation:my-work", args=["support"])

    page.goto(live_server.url + reverse("annotation:projects"))
    axe_clean(page)
    screenshots(page, "from-projects")
    page.get_by_role("link", name="My work in support").click()
    expect(page).to_have_url(my_work)
    expect(page.locator("[data-my-work-empty]")).to_have_text("You have no items in this project yet.")

    page.get_by_role("button", name="Continue annotating").click()
    ready(page)
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Nothing left for now")
    axe_clean(page)
    screenshots(page, "from-nothing-left")
    page.get_by_role("link", name="My work").click()
    expect(page).to_have_url(my_work)
    expect(page.locator('tr[data-item="conv_001"]')).to_contain_text("Submitted")

    page.get_by_role("link", name="support").click()
    axe_clean(page)
    screenshots(page, "from-project")
    page.get_by_role("link", name="My work").click()
    expect(page).to_have_url(my_work)
