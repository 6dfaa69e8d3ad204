"""Where each message stands, on the annotate page, in a real browser.

The rules:

- Each row says, in words, its rating ("rated 4") or "not rated", its step on
  the chosen path ("path step 2"), and at a branch point whether its replies
  are compared ("not compared", "compared").
- Above Submit, one line counts it all for the tree: "1/6 messages rated,
  1/2 comparisons done, path chosen" (a path is chosen once it reaches a last
  reply); it is a polite live region and follows every answer.
- The marks and the summary come back from the saved draft after a reload.

Alice annotates a tree with two branch points (q has replies a1 and b1; u1,
a1's only reply, has replies a2 and a3) under a scheme that rates each
message, chooses a path and compares replies.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.work.assignment import item_next
from tests.annotation.annotator_items import TWO_BRANCHES, person, project_over

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

EVERYTHING = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: judged
    description: Rate each reply, choose the best path and compare the branches
    node_scheme: {annotation_type: likert, size: 5, min_label: Poor, max_label: Excellent}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
"""


def node(page: Page, node_id: str) -> Any:
    return page.locator(f'.node[data-id="{node_id}"]')


def marks(page: Page, node_id: str) -> list[str]:
    return [mark.text_content() for mark in node(page, node_id).locator(".mark").all()]


def test_each_message_and_the_summary_say_where_the_tree_stands(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("status", EVERYTHING, [TWO_BRANCHES], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    page.goto(
        live_server.url + reverse("annotation:item", kwargs={"name": project.name, "tree_id": held.tree_id})
    )
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")

    summary = page.locator("[data-summary]")
    expect(summary).to_have_attribute("aria-live", "polite")
    expect(summary).to_have_text("0/6 messages rated, 0/2 comparisons done, no path yet")
    assert marks(page, "q") == ["not rated", "not compared"]
    assert marks(page, "a1") == ["not rated"]

    # A rating: on its row, and counted.
    node(page, "a1").click()
    page.locator("[data-panel-widgets] label", has_text="4").click()
    assert marks(page, "a1") == ["rated 4"]
    expect(summary).to_have_text("1/6 messages rated, 0/2 comparisons done, no path yet")

    # A comparison at q, the first branch point: its one pair labelled.
    node(page, "q").click()
    page.locator("[data-pair] label", has_text="Better").click()
    expect(node(page, "q").locator("[data-compared]")).to_have_text("compared")
    expect(node(page, "u1").locator("[data-compared]")).to_have_text("not compared")
    expect(summary).to_have_text("1/6 messages rated, 1/2 comparisons done, no path yet")

    # A path: started until it reaches a last reply, then chosen; each step on its row.
    page.keyboard.press("Escape")
    for step in ("q", "a1", "u1"):
        node(page, step).focus()
        page.keyboard.press("p")
    expect(summary).to_have_text("1/6 messages rated, 1/2 comparisons done, path started")
    node(page, "a3").focus()
    page.keyboard.press("p")
    expect(summary).to_have_text("1/6 messages rated, 1/2 comparisons done, path chosen")
    assert marks(page, "a1") == ["rated 4", "path step 2"]
    assert marks(page, "a3") == ["not rated", "path step 4"]
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")

    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    expect(summary).to_have_text("1/6 messages rated, 1/2 comparisons done, path chosen")
    assert marks(page, "q") == ["not rated", "compared", "path step 1"]
    assert marks(page, "u1") == ["not rated", "not compared", "path step 3"]
