"""The focused row's ring is drawn whole: the conversation scrolls inside its box, and a ring
drawn outside the first row was cut off by that box's edges (at the top and the sides)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.annotation.work.test_reading_browser import chain_project, node, open_item

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RING = """
([row, box]) => {
  const style = getComputedStyle(row);
  const reach = parseFloat(style.outlineWidth) + parseFloat(style.outlineOffset);
  const r = row.getBoundingClientRect(), b = box.getBoundingClientRect();
  return {
    top: r.top - reach - b.top, left: r.left - reach - b.left,
    right: b.right - (r.right + reach), style: style.outlineStyle,
  };
}
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_first_rows_focus_ring_is_inside_the_scrolling_box(
    live_server: Any, page: Page, sign_in: Any, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 800})
    open_item(page, live_server, sign_in, chain_project("ring", chain=3, replies=2))

    first = node(page, "m0")
    first.focus()
    box = page.locator(".tree")
    ring = page.evaluate(RING, [first.element_handle(), box.element_handle()])

    assert ring["style"] != "none"
    assert ring["top"] >= 0 and ring["left"] >= 0 and ring["right"] >= 0, ring
