"""A judge's suggestions in a real browser, with axe at 1280 px and 390 px.

Alice annotates in two projects where the judge ``rater`` answered every item. In "assisted"
(``show: before``) she sees the model's suggestion, marked as such, while she answers; u copies
it into her answers, Ctrl+Z takes it back. In "measured" (``show: after``) nothing of the judge
shows until she submits; then the suggestion is shown before she goes on to the next item.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Annotation
from tests.annotation.annotator_items import person
from tests.annotation.suggested import judge_answers, judge_made, suggested_project
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "artifacts")
JUDGE_SAYS = {"sentiment": {"label": "negative"}, "quality": {"rating": 2}}


def judged(name: str, show: str, alice: Any) -> Any:
    judge = judge_made("rater")
    project = suggested_project(name, show, [alice], items=2)
    for item in project.items.all():
        judge_answers(judge, project, item.tree_id, JUDGE_SAYS)
    return project


def start(page: Page, live_server: Any, project: Any) -> None:
    page.goto(live_server.url + reverse("annotation:project", kwargs={"name": project.name}))
    page.get_by_role("button", name="Start annotating").click()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def screenshots(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"suggestion_{name}_{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    axe_clean(page)


def choice(page: Page, scheme_class: str, value: str) -> Any:
    return page.locator(f".{scheme_class} input[value='{value}']")


def test_before_the_suggestion_shows_while_answering_and_u_copies_it_undoably(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = judged("assisted", "before", alice)
    sign_in(page, alice)

    start(page, live_server, project)
    region = page.get_by_role("region", name="Model suggestion: rater")
    expect(region).to_be_visible()
    expect(region).to_contain_text("judge:rater")
    expect(region.locator("[data-suggestion-scheme='sentiment'] td")).to_have_text("negative")
    expect(region.locator("[data-suggestion-scheme='quality'] td")).to_have_text("2 of 5")
    expect(region.get_by_role("columnheader", name="Your answer")).to_have_count(0)
    expect(choice(page, "widget-radio", "negative")).not_to_be_checked()
    screenshots(page, "before")

    page.locator(".tree .node").first.focus()
    page.keyboard.press("u")
    expect(choice(page, "widget-radio", "negative")).to_be_checked()
    expect(choice(page, "widget-likert", "2")).to_be_checked()
    expect(page.locator("[data-toast]")).to_contain_text("Suggestion used")
    page.keyboard.press("Control+z")
    expect(choice(page, "widget-radio", "negative")).not_to_be_checked()
    expect(choice(page, "widget-likert", "2")).not_to_be_checked()

    page.get_by_role("button", name="Use the suggestion").click()
    choice(page, "widget-likert", "4").check()
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")
    page.get_by_role("button", name="Submit and next").click()
    expect(page.locator(".annotate-title h1 code")).to_have_text("c1")

    marks = dict(Annotation.objects.filter(project=project, user=alice).values_list("scheme", "suggestion"))
    assert marks == {"sentiment": "before_taken", "quality": "before_taken"}


def test_after_nothing_of_the_judge_shows_until_the_item_is_submitted(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = judged("measured", "after", alice)
    sign_in(page, alice)

    start(page, live_server, project)
    expect(page.locator("[data-suggestion]")).to_be_hidden()
    assert "judge:rater" not in page.content()
    choice(page, "widget-radio", "positive").check()
    choice(page, "widget-likert", "4").check()
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")
    page.keyboard.press("Control+Enter")

    region = page.get_by_role("region", name="Model suggestion: rater")
    expect(region).to_be_visible()
    expect(region).to_contain_text("You see it only now that you have submitted")
    expect(region.get_by_role("columnheader", name="Your answer")).to_be_visible()
    expect(region.locator("[data-suggestion-scheme='quality'] [data-yours]")).to_have_text("4 of 5")
    expect(region.locator("[data-suggestion-scheme='quality'] [data-suggested]")).to_have_text("2 of 5")
    expect(region.get_by_role("button", name="Use the suggestion")).to_be_hidden()
    expect(page.get_by_role("button", name="Next item")).to_be_focused()
    expect(choice(page, "widget-radio", "positive")).to_be_disabled()
    screenshots(page, "after")

    page.keyboard.press("Enter")
    expect(page.locator(".annotate-title h1 code")).to_have_text("c1")
    expect(page.locator("[data-suggestion]")).to_be_hidden()
    marks = dict(Annotation.objects.filter(project=project, user=alice).values_list("scheme", "suggestion"))
    assert marks == {"sentiment": "after", "quality": "after"}


TREE_CONFIG = (
    "annotation_schemes:\n"
    "  - annotation_type: tree_annotation\n"
    "    name: replies\n"
    "    description: Rate, rank and choose\n"
    "    node_scheme: {annotation_type: likert, size: 5}\n"
    "    path_selection: {enabled: true}\n"
    "    branch_comparison: {enabled: true, mode: ranking}\n"
    "suggestions: {from: 'judge:rater', show: before}\n"
)
BRANCHING = {
    "id": "boots",
    "tree": {
        "id": "q",
        "role": "user",
        "content": "Any boots?",
        "children": [
            {"id": "r1", "role": "assistant", "content": "Yes, in brown."},
            {"id": "r2", "role": "assistant", "content": "No."},
        ],
    },
}


def test_a_tree_schemes_suggestion_is_copied_whole_keeping_the_order_the_annotator_was_shown(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    from tests.annotation.annotator_items import project_over

    alice = person("alice")
    judge = judge_made("rater")
    project = project_over("boots", TREE_CONFIG, [BRANCHING], [alice])
    tree_id = project.items.get().tree_id
    suggested = {
        "node_annotations": {"r1": {"rating": 5}, "r2": {"rating": 1}},
        "selected_path": ["q", "r1"],
        "branch_comparisons": {"q": {"shown_order": ["judge's", "own"], "ranking": ["r1", "r2"]}},
    }
    judge_answers(judge, project, tree_id, {"replies": suggested})
    sign_in(page, alice)

    start(page, live_server, project)
    page.locator(".tree .node").first.focus()
    page.keyboard.press("u")
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")

    mine = Annotation.objects.get(project=project, user=alice, scheme="replies")
    assert mine.payload["node_annotations"] == suggested["node_annotations"]
    assert mine.payload["selected_path"] == ["q", "r1"]
    assert mine.payload["branch_comparisons"]["q"]["ranking"] == ["r1", "r2"]
    assert sorted(mine.payload["branch_comparisons"]["q"]["shown_order"]) == ["r1", "r2"]
    assert mine.suggestion == "before_taken"
