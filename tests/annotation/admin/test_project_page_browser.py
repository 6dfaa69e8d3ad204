"""The admin's project page in Chromium: its buttons (annotations, import, reports, agreement,
quality, history) sit under the "Change project" heading and the project's name, never over
them, at a desktop's width and a phone's."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page

from annotation.models import Project
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.test_csp_browser import visit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def staff() -> Any:
    """An admin, and a project whose page has every button (reports, agreement, quality)."""
    project_over("compare-the-replies-for-the-whole-team", RESPONSE_QUALITY, [SEED_ITEM], [person("alice")])
    return person("ada", is_staff=True, is_superuser=True)


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize("width", [1280, 390])
def test_the_buttons_never_cover_the_headings(
    live_server: Any, page: Page, sign_in: Any, staff: Any, width: int
) -> None:
    project = Project.objects.get()
    sign_in(page, staff)
    page.set_viewport_size({"width": width, "height": 800})

    visit(page, live_server, reverse("admin:annotation_project_change", args=[project.pk]))

    buttons = [
        box
        for box in page.locator(".object-tools li").evaluate_all(
            "items => items.map(item => { const r = item.getBoundingClientRect();"
            " return {x: r.x, y: r.y, width: r.width, height: r.height}; })"
        )
    ]
    assert len(buttons) >= 5
    for heading in ("#content h1", "#content h2"):
        box = page.locator(heading).first.bounding_box()
        assert not any(overlaps(box, button) for button in buttons), heading
