"""Judges against people in a real browser: from the agreement page's judge table to the judge's
report, both free of accessibility violations and readable at a desktop's width and a phone's.

Dana manages the project; Ann, Ben and Cleo and the judge compare the same pairs
(tests.evaluation.test_judge_reports).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_judges_against_people import judged_project
from tests.evaluation.test_judge_reports import verdicts
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def shots(tmp_path: Path) -> Path:
    """Where screenshots go: BRANCHPOINT_SCREENSHOTS when set (to look at them), else the test's tmp."""
    folder = Path(os.environ.get("BRANCHPOINT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def no_sideways_scrolling(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def within(box: Any, width: int) -> bool:
    return box is not None and box["x"] + box["width"] <= width


def test_a_manager_reads_the_judge_beside_the_people_then_its_report(
    live_server: Any, page: Page, sign_in: Any, tmp_path: Path
):
    dana = person("dana")
    project, judge = judged_project(managers=[dana])
    verdicts(project, judge)
    account = judge.user.username
    folder = shots(tmp_path)
    sign_in(page, dana)

    page.goto(live_server.url + reverse("evaluation:agreement", args=[project.name]))

    judges = page.locator("[data-judges]")
    expect(judges.get_by_role("heading", level=4)).to_have_text("Judges against people")
    expect(judges.locator(f'[data-judge="{account}"] [data-judge-human]')).to_have_count(3)
    matrix = judges.locator("[data-coder-matrix]")
    expect(matrix.locator("tbody tr")).to_have_count(4)
    expect(matrix.locator('tr[data-source="model"] th')).to_contain_text("model")
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        judges.screenshot(path=str(folder / f"agreement-judges-{width}.png"))
        # The judges' part fits (its wide tables scroll inside their own box).
        assert within(judges.bounding_box(), width)

    page.set_viewport_size({"width": 1280, "height": 900})
    judges.get_by_role("link", name=account).click()

    expect(page.get_by_role("heading", level=1)).to_contain_text(account)
    expect(page.locator("[data-flip-rate]")).to_contain_text("0.300")
    expect(page.locator("[data-confusion] tbody tr")).to_have_count(3)
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(folder / f"judge-report-{width}.png"), full_page=True)
        no_sideways_scrolling(page, width)
