"""The branch points left to compare, listed in the summary above Submit.

The rules (docs/annotating.md, "Branch points in the summary"):

- the summary lists every branch point whose replies a comparing scheme still
  waits for, in tree order: "Compare: 2 branch points left", then one button
  per branch point, "after #3 (2 replies)", named by its turn;
- a button opens that comparison with the focus on its first pair not yet
  answered, so it is answered with the keys at once; b opens the next one;
- a branch point leaves the list once its comparison is done, and the list
  goes when none is left.

Alice compares the replies of the tree that branches twice (at the question,
turn #1, and at the follow-up under its first answer, turn #3).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Project
from annotation.work.assignment import item_next
from annotation.work.submissions import item_answers
from tests.annotation.annotator_items import BRANCH_COMPARE, TWO_BRANCHES, person, project_over
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]


def artifacts() -> Path:
    """Where screenshots go: ``BRANCHPOINT_ARTIFACTS``, else ``tests/artifacts/`` (git ignores it)."""
    folder = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or ROOT / "tests" / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_item(page: Page, live_server: Any, project: Project, tree_id: int) -> None:
    url = reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})
    page.goto(live_server.url + url)
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def expect_saved(page: Page) -> None:
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


def test_pending_branch_points_are_listed_and_each_opens_its_comparison_by_keyboard(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("compare", BRANCH_COMPARE, [TWO_BRANCHES], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    pending = page.locator("[data-pending-compare]")
    expect(pending).to_be_visible()
    expect(pending.locator(".pending-title")).to_have_text("Compare: 2 branch points left b")
    points = pending.locator("[data-pending-point]")
    expect(points).to_have_count(2)
    expect(points.nth(0)).to_have_text("after #1 (2 replies)")
    expect(points.nth(1)).to_have_text("after #3 (2 replies)")
    expect(points.nth(1)).to_have_attribute("aria-label", "Compare the 2 replies after message u1 (turn 3)")
    expect(page.locator("[data-panel]")).to_be_hidden()  # nothing opened: the list is there already
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(artifacts() / f"pending-comparisons-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})

    # Reached with Tab (backwards from the conversation, past Keys, Skip and Submit).
    for _ in range(8):
        page.keyboard.press("Shift+Tab")
        if page.evaluate("() => document.activeElement.dataset.pendingPoint") == "u1":
            break
    expect(points.nth(1)).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("[data-panel]")).to_have_attribute("data-node", "u1")
    first_pair = page.locator('[data-comparison="branch_compare"] [data-pair] input').first
    expect(first_pair).to_be_focused()
    page.keyboard.press("1")  # Better
    expect_saved(page)
    expect(pending.locator(".pending-title")).to_have_text("Compare: 1 branch point left b")
    expect(points).to_have_count(1)
    expect(points.nth(0)).to_have_attribute("data-pending-point", "q")

    page.keyboard.press("b")  # the next one left: round to the question
    expect(page.locator("[data-panel]")).to_have_attribute("data-node", "q")
    expect(first_pair).to_be_focused()
    page.keyboard.press("2")  # Same
    expect_saved(page)
    expect(pending).to_be_hidden()
    expect(page.locator("[data-summary]")).to_contain_text("2/2 comparisons done")
    page.keyboard.press("b")
    expect(page.locator("[data-flash]")).to_have_text("No branch point is left to compare.")

    comparisons = item_answers(project=project, tree=held.tree, user=alice).payloads["branch_compare"][
        "branch_comparisons"
    ]
    assert [pair["label"] for pair in comparisons["u1"]["pairs"]] == ["Better"]
    assert [pair["label"] for pair in comparisons["q"]["pairs"]] == ["Same"]
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    expect(pending).to_be_hidden()


def test_b_opens_the_first_pending_branch_point_after_the_current_message(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("compare", BRANCH_COMPARE, [TWO_BRANCHES], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    page.set_viewport_size({"width": 390, "height": 800})
    page.keyboard.press("j")  # a1, after the question: the next branch point is the follow-up
    page.keyboard.press("b")
    expect(page.locator("[data-panel]")).to_have_attribute("data-node", "u1")
    expect(page.locator('.node[data-id="u1"]')).to_have_attribute("aria-selected", "true")
    # On a phone the panel is under the conversation: the focus brings the comparison into view.
    first_pair = page.locator('[data-comparison="branch_compare"] [data-pair] input').first
    expect(first_pair).to_be_focused()
    expect(first_pair).to_be_in_viewport()
    page.screenshot(path=str(artifacts() / "pending-comparison-opened-390.png"))
