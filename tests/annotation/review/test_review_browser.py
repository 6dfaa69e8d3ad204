"""Review in a real browser, the whole loop, with the keyboard where it counts.

Alice and Bob have both submitted conv_001, Potato's documented
conversation. Rita opens it from the project page, sees their answers side
by side, and sends Bob's back with a comment. Bob's next item is conv_001
again — ahead of conv_002, which would otherwise come next — with Rita's
comment on the page; he changes a rating and submits. Rita accepts his new
version, leaves Alice's unreviewed, and downloads the accepted work only:
Bob's corrected answers, nothing else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Assignment, Project
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONFIG = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: response_quality
    description: Response quality
    node_scheme: {annotation_type: likert, min_label: Poor, max_label: Excellent, size: 5}
    path_selection: {enabled: true}
  - {annotation_type: radio, name: overall, description: Overall, labels: [Helpful, Unhelpful]}
assignment: {annotations_per_item: 2}
"""
ALICE_ANSWERS = {
    "response_quality": {
        "node_annotations": {"resp_a": {"rating": 4}, "resp_b": {"rating": 2}},
        "selected_path": ["root", "resp_a", "user_2"],
    },
    "overall": {"label": "Helpful"},
}
BOB_ANSWERS = {
    "response_quality": {
        "node_annotations": {"resp_a": {"rating": 5}, "resp_b": {"rating": 1}},
        "selected_path": ["root", "resp_b"],
    },
    "overall": {"label": "Unhelpful"},
}
COMMENT = "resp_b answers the question: it deserves more than 1."


def submit(project: Project, user: Any, answers: dict[str, Any]) -> Assignment:
    held = item_next(project=project, user=user)
    return item_submit(project=project, tree=held.tree, user=user, answers=answers, version=held.version)


def cells(page: Page, row: str) -> list[str]:
    """What each annotator's column says on one row of the answers."""
    return [text.strip() for text in page.locator(f'tr[data-row="{row}"] td').all_inner_texts()]


def card(page: Page, username: str) -> Any:
    return page.locator(f'[data-column="{username}"]')


def test_a_reviewer_sends_work_back_the_annotator_fixes_it_and_only_accepted_work_is_exported(
    live_server: Any, browser: Any, sign_in: Any
) -> None:
    alice, bob, rita = person("alice"), person("bob"), person("rita")
    project = project_over(
        "support", CONFIG, [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}], [alice, bob], reviewers=[rita]
    )
    first = submit(project, alice, ALICE_ANSWERS).tree
    submit(project, bob, BOB_ANSWERS)
    second = project.dataset.trees.get(external_id="conv_002")

    reviewer = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True).new_page()
    reviewer.set_default_timeout(10_000)
    annotator = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    annotator.set_default_timeout(10_000)
    sign_in(reviewer, rita)
    sign_in(annotator, bob)

    # Rita goes from the project page to the queue, and from there to the item.
    reviewer.goto(live_server.url + reverse("annotation:project", args=["support"]))
    reviewer.get_by_role("link", name="Review submitted work").click()
    expect(reviewer.locator('[data-item="conv_001"]')).to_contain_text("alice: waiting for review")
    expect(reviewer.locator('[data-item="conv_001"]')).to_contain_text("bob: waiting for review")
    reviewer.get_by_role("link", name="conv_001").click()

    # Their answers side by side, in words, against the tree's messages.
    expect(card(reviewer, "alice")).to_be_visible()
    assert reviewer.locator("[data-column]").evaluate_all("cards => cards.map(c => c.dataset.column)") == [
        "alice",
        "bob",
    ]
    assert cells(reviewer, "overall") == ["Helpful", "Unhelpful"]
    assert cells(reviewer, "selected path") == ["root → resp_a → user_2", "root → resp_b"]
    assert cells(reviewer, "resp_b") == ["2 of 5", "1 of 5 (Poor); path step 2"]
    expect(reviewer.locator('tr[data-row="resp_b"]')).to_have_class(re.compile(r"\bdiffers\b"))
    # Cards side by side, not one under the other.
    alice_box, bob_box = card(reviewer, "alice").bounding_box(), card(reviewer, "bob").bounding_box()
    assert bob_box["x"] > alice_box["x"] + alice_box["width"] - 1 and bob_box["y"] == alice_box["y"]

    # Where the two agree (both start the path at the root), the rows can be left out.
    reviewer.get_by_label("Only where answers differ").check()
    expect(reviewer.locator('tr[data-row="root"]')).to_be_hidden()
    expect(reviewer.locator("tr[data-node]:visible")).to_have_count(3)
    reviewer.get_by_label("Only where answers differ").uncheck()
    expect(reviewer.locator("tr[data-node]:visible")).to_have_count(4)

    # Rejecting needs a comment: r on Bob's card opens his comment box instead of rejecting.
    reviewer.keyboard.press("2")
    expect(card(reviewer, "bob")).to_be_focused()
    reviewer.keyboard.press("r")
    expect(card(reviewer, "bob").locator("[data-comment]")).to_be_focused()
    reviewer.keyboard.type(COMMENT)
    reviewer.keyboard.press("Control+Enter")
    expect(reviewer.locator(".messages")).to_have_text("Sent conv_001 back to bob with your comment.")
    expect(card(reviewer, "bob").locator("[data-state]")).to_have_text("Sent back to the annotator")
    expect(card(reviewer, "bob").locator("[data-decision-form]")).to_have_count(0)

    # Bob's next item is conv_001 again, ahead of conv_002, with Rita's comment on it.
    annotator.goto(live_server.url + reverse("annotation:project", args=["support"]))
    annotator.get_by_role("button", name="Continue where you left off").click()
    expect(annotator.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    assert annotator.url == live_server.url + reverse("annotation:item", args=["support", first.pk])
    expect(annotator.locator("[data-returned]")).to_contain_text("rita sent this item back to you")
    expect(annotator.locator("[data-review-comment]")).to_have_text(COMMENT)

    # He rates resp_b again (its answers were kept as his draft) and submits.
    node_b = annotator.locator('[role="treeitem"][data-id="resp_b"]')
    expect(node_b.locator('[data-mark="response_quality"]')).to_have_text("rated 1")
    for _ in range(3):
        annotator.keyboard.press("j")
    expect(node_b).to_be_focused()
    annotator.keyboard.press("Enter")
    annotator.keyboard.press("4")
    expect(node_b.locator('[data-mark="response_quality"]')).to_have_text("rated 4")
    expect(annotator.locator("[data-save-status]")).to_have_text("All changes saved")
    annotator.keyboard.press("Control+Enter")
    expect(annotator).to_have_url(live_server.url + reverse("annotation:item", args=["support", second.pk]))

    # Rita sees the new version pending review, with the history, and accepts it.
    reviewer.reload()
    expect(card(reviewer, "bob").locator("[data-state]")).to_have_text("Waiting for review")
    expect(card(reviewer, "bob").locator('[data-review-entry="rejected"]')).to_contain_text(COMMENT)
    assert cells(reviewer, "resp_b") == ["2 of 5", "4 of 5; path step 2"]
    reviewer.keyboard.press("2")
    reviewer.keyboard.press("a")
    expect(reviewer.locator(".messages")).to_have_text("Accepted bob's work on conv_001.")
    expect(card(reviewer, "bob").locator("[data-state]")).to_have_text("Accepted")
    expect(card(reviewer, "alice").locator("[data-state]")).to_have_text("Waiting for review")

    # The download of accepted work only holds Bob's corrected answers.
    reviewer.goto(live_server.url + reverse("annotation:project", args=["support"]))
    reviewer.get_by_label("Format").select_option("potato")
    reviewer.get_by_label("Status").select_option("accepted")
    with reviewer.expect_download() as download:
        reviewer.get_by_role("button", name="Download").click()
    assert download.value.suggested_filename == "support.accepted.potato.jsonl"
    records = [json.loads(line) for line in Path(download.value.path()).read_text("utf-8").splitlines()]
    assert [(record["id"], record["user"]) for record in records] == [("conv_001", "bob")]
    assert records[0]["annotations"]["response_quality"]["node_annotations"] == {
        "resp_a": {"rating": 5},
        "resp_b": {"rating": 4},
    }
    reviewer.context.close()
    annotator.context.close()
