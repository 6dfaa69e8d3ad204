"""A rubric judge in Chromium sees the conversation metadata the rubric's questions name, in
a "Conversation details" box at the top of the conversation, and judges by keyboard as before.

Screenshots at 1280 and 390 px go to ``$BRANCHPOINT_ARTIFACTS`` (default ``tests/artifacts/``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from tests.annotation.annotator_items import person, project_over
from tests.evaluation.samples import CONVERSATIONS
from tests.evaluation.test_judge_metadata import RUBRIC
from tests.factories import RubricFactory
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[1] / "artifacts")
CONFIG = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review the booking, rubric: booking}\n"


def test_a_judge_sees_the_metadata_the_questions_name_beside_the_conversation(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    RubricFactory(yaml=RUBRIC)
    alice = person("alice")
    project = project_over("booking", CONFIG, CONVERSATIONS[:1], [alice])
    sign_in(page, alice)
    page.goto(live_server.url + reverse("annotation:project", args=[project.name]))
    page.get_by_role("button", name="Start annotating").click()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")

    details = page.locator("[data-conversation-details]")
    expect(details).to_be_visible()
    expect(details.locator("summary")).to_have_text("Conversation details")
    expect(details.locator("[data-detail] dt")).to_have_text(
        [
            "final_state.conversation_stage",
            "ground_truth.time",
            "ground_truth.participants",
            "final_state.scheduling_context.booking_confirmed",
        ]
    )
    expect(details.locator('[data-detail="ground_truth.time"] dd')).to_have_text("2025-03-11T14:00")
    expect(
        details.locator('[data-detail="final_state.scheduling_context.booking_confirmed"] dd')
    ).to_have_text("true")
    # The box sits inside the conversation's section, above its messages.
    expect(page.locator(".annotate-tree [data-conversation-details] + [data-path-bars]")).to_have_count(1)

    # Judging by keyboard is as before: y answers the highlighted question.
    page.keyboard.press("y")
    expect(page.locator('[data-criterion="right_time"] input[value="yes"]')).to_be_checked()

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"judge_metadata_{width}.png"), full_page=True)
    axe_clean(page)
