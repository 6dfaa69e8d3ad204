"""Judging with a rubric in a real browser, by keyboard alone, then reading the report.

Alice (an annotator who also manages the project) judges two scheduling
conversations on the annotate page with y / n, submits each with Ctrl+Enter,
and finds both in the rubric's report.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Annotation
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CONVERSATIONS, CRITERIA, scheduling_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def judge_by_keyboard(page: Page, keys: str) -> None:
    """Answer the rubric's six questions in order, one key each (y or n)."""
    widget = page.locator('[data-rubric="scheduling"]')
    for index, key in enumerate(keys):
        expect(widget.locator(".rubric-question.is-current")).to_have_attribute("data-criterion", KEYS[index])
        page.keyboard.press(key)
    for index, key in enumerate(keys):
        answer = "yes" if key == "y" else "no"
        expect(widget.locator(f'[data-criterion="{KEYS[index]}"] input[value="{answer}"]')).to_be_checked()
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


KEYS = [*CRITERIA, "booking_confirmed"]


def test_two_conversations_judged_by_keyboard_show_up_in_the_report(
    live_server: Any, page: Page, sign_in: Any
):
    alice = person("alice")
    project = scheduling_project(items=CONVERSATIONS[:2], annotators=[alice], managers=[alice])
    sign_in(page, alice)
    page.goto(live_server.url + reverse("annotation:project", args=[project.name]))
    page.get_by_role("button", name="Start annotating").click()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")

    # Headed by the scheme's description; the questions of the rubric, in order, the first one highlighted.
    expect(page.locator('[data-scheme="review"] > legend')).to_have_text("Judge the scheduling assistant")
    questions = page.locator('[data-rubric="scheduling"] .rubric-question')
    expect(questions).to_have_count(6)
    expect(questions.first).to_contain_text("Were exactly the requested participants invited?")
    expect(page.locator("h1 code")).to_have_text("sched_001")

    judge_by_keyboard(page, "yyyyyy")
    page.keyboard.press("Control+Enter")
    expect(page.locator("h1 code")).to_have_text("sched_002")
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")

    judge_by_keyboard(page, "yynyny")  # the booking confirmed: the criteria that require it count
    page.keyboard.press("Control+Enter")
    expect(page.locator("[data-nothing-left]")).to_be_visible()

    assert sorted(Annotation.objects.filter(user=alice).values_list("tree__external_id", "status")) == [
        ("sched_001", "submitted"),
        ("sched_002", "submitted"),
    ]

    page.goto(live_server.url + reverse("evaluation:report", args=[project.name, "scheduling"]))
    expect(page.locator("[data-count]")).to_have_text("2")
    outcomes = page.locator("[data-outcomes]")
    expect(outcomes.locator('[data-outcome="successful_completion"] td').nth(1)).to_have_text("1")
    expect(outcomes.locator('[data-outcome="graceful_failure"] td').nth(1)).to_have_text("1")
    expect(page.locator('[data-pass-rates] [data-key="correct_duration"] td').nth(3)).to_have_text("50%")
    expect(page.locator('svg[role="img"]')).to_have_count(3)
