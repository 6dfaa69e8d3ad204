"""The collection picker and task pages in Chromium, as a day's work meets them:

- each Start button's accessible name begins with the word it shows (axe's
  label-content-name-mismatch), and the picker passes axe at a desktop's and a phone's width;
- a task started and left is first on the picker, focused, to resume;
- Ctrl+Enter submits a task wherever focus is on the page (here a ranking, focus nowhere).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.annotation.collection.collect import (
    collect_project,
    draw_lottery,
    person,
    prompt,
    reply,
    review,
    state,
)
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(
    os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[3] / "tests" / "artifacts"
)


def test_start_buttons_are_named_by_what_they_show_and_the_picker_passes_axe(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, bob = person("alice"), person("bob")
    project = collect_project([alice, bob], max_active_trees=1, max_initial_prompt_review=1)
    prompt(project, alice)
    sign_in(page, bob)

    page.goto(f"{live_server.url}/collect/{project.name}/")

    review = page.locator('[data-task-type="label_initial_prompt"] button')
    expect(review).to_be_enabled()
    expect(review).to_have_text("Start")
    expect(page.get_by_role("button", name="Start: Review a prompt", exact=True)).to_have_count(1)
    axe_clean(page)


def test_a_task_started_and_left_is_first_on_the_picker_to_resume(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, bob = person("alice"), person("bob")
    project = collect_project([alice, bob], max_active_trees=1, max_initial_prompt_review=1)
    prompt(project, alice, "How do I keep basil alive on a windowsill?")
    sign_in(page, bob)
    page.goto(f"{live_server.url}/collect/{project.name}/")
    page.locator('[data-task-type="label_initial_prompt"] button').click()
    expect(page.locator("[data-task]")).to_have_attribute("data-ready", "true")
    task_url = page.url

    page.goto(f"{live_server.url}/collect/{project.name}/")  # left for the picker, task not done

    resume = page.locator("[data-resume] a")
    expect(resume).to_have_text("Resume: review a prompt — “How do I keep basil alive on a windowsill?”")
    expect(resume).to_be_focused()
    expect(page.locator('[data-task-type="label_initial_prompt"] button')).to_have_text("Resume")
    axe_clean(page)
    page.keyboard.press("Enter")
    expect(page).to_have_url(task_url)


def test_ctrl_enter_submits_a_ranking_wherever_focus_is(live_server: Any, page: Page, sign_in: Any) -> None:
    team = [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]
    alice, bob, carol, dave, erin = team
    project = collect_project(
        team,
        goal_tree_size=3,
        num_reviews_initial_prompt=1,
        num_reviews_reply=1,
        num_required_rankings=1,
        max_active_trees=1,
        max_initial_prompt_review=0,
    )
    root = prompt(project, alice)
    review(project, [bob], root)
    draw_lottery(project)
    replies = [reply(project, bob, root, "Water it."), reply(project, carol, root, "Give it sun.")]
    for message in replies:
        review(project, [dave], message)
    assert state(root) == "ranking"
    sign_in(page, erin)
    page.goto(f"{live_server.url}/collect/{project.name}/")
    page.locator('[data-task-type="rank_assistant_replies"] button').click()
    expect(page.locator("[data-task]")).to_have_attribute("data-ready", "true")

    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("Control+Enter")

    expect(page.locator(".message-success")).to_contain_text("Thank you!")
    assert state(root) == "ready_for_export"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_review_scales_start_at_the_same_place_on_every_row(
    live_server: Any, page: Page, sign_in: Any, width: int
) -> None:
    alice, bob = person("alice"), person("bob")
    project = collect_project([alice, bob], max_active_trees=1, max_initial_prompt_review=1)
    prompt(project, alice)
    sign_in(page, bob)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/collect/{project.name}/")
    page.locator('[data-task-type="label_initial_prompt"] button').click()
    expect(page.locator("[data-task]")).to_have_attribute("data-ready", "true")

    starts = page.locator("[data-label] [role=radiogroup]").evaluate_all(
        "groups => groups.map(group => Math.round(group.getBoundingClientRect().left))"
    )

    assert len(starts) >= 3
    assert len(set(starts)) == 1, starts
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"collect_review_{width}.png"), full_page=True)
