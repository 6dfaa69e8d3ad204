"""The collection picker in Chromium: each Start button's accessible name begins with the
word it shows (axe's label-content-name-mismatch), and the page passes axe at a desktop's
and a phone's width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.annotation.collection.collect import collect_project, person, prompt
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


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
