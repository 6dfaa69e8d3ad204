"""Spans without the mouse, the label palette, and where the chooser goes.

The rules (docs/annotating.md, "Spans"):

- with a span scheme, the palette above the conversation shows every label
  with its key and colour before anything is selected; a label clicked while
  text is selected labels that text;
- s on a focused message row puts a caret in its text: arrows move it by
  character, Ctrl (or Alt) with them by word, Shift extends the selection, a
  label key makes the span and Esc leaves; offsets are code points, so the
  emoji before a word do not shift it;
- the chooser (for a span's attributes) never covers the selected text, at a
  desktop's width or a phone's.

Alice labels what Bob asks for in a short conversation of two turns whose
text has emoji in it, and, in the CCPE dialogue, a span near the bottom of
the screen.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.exports import annotations_export
from annotation.models import Membership, Project
from annotation.projects.services import membership_add, project_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_answers
from tests.annotation.annotator_items import person, project_over
from tests.annotation.schemes.test_spans_browser import (
    CCPE_CONFIG,
    CCPE_FILE,
    expect_saved,
    listed,
    select_text,
)
from tests.factories import CorpusDatasetFactory
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
CONFIG = """\
annotation_schemes:
  - annotation_type: span
    name: wishes
    description: Mark what the user asks for
    labels:
      - {name: food, color: "#16a34a"}
      - {name: film, color: "#2563eb"}
    attributes:
      - name: certainty
        description: How sure the user is
        labels: [sure, unsure]
"""
ASK = "Pizza 🍕🍕 and then 🎬 films, please"
EVENING = {
    "id": "evening",
    "tree": {
        "id": "ask",
        "role": "user",
        "content": ASK,
        "children": [{"id": "reply", "role": "assistant", "content": "Pepperoni and a thriller it is."}],
    },
}


def artifacts() -> Path:
    """Where screenshots go: ``BRANCHPOINT_ARTIFACTS``, else ``tests/artifacts/`` (git ignores it)."""
    folder = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or ROOT / "tests" / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_item(page: Page, live_server: Any, project: Project, tree_id: int) -> None:
    url = reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})
    page.goto(live_server.url + url)
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def evening_for(alice: Any) -> tuple[Project, Any]:
    project = project_over("evening", CONFIG, [EVENING], [alice])
    return project, item_next(project=project, user=alice)


def boxes_overlap(first: dict[str, float], second: dict[str, float]) -> bool:
    return not (
        first["x"] + first["width"] <= second["x"]
        or second["x"] + second["width"] <= first["x"]
        or first["y"] + first["height"] <= second["y"]
        or second["y"] + second["height"] <= first["y"]
    )


def expect_chooser_clear_of_selection(page: Page) -> None:
    """The chooser is on screen and no part of the selected (pending) text lies under it."""
    chooser = page.locator("[data-span-chooser]")
    expect(chooser).to_be_visible()
    # A scroll just made is followed by the chooser on its scroll event, in the next frame.
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    around = chooser.bounding_box()
    width = page.viewport_size["width"]
    assert around["x"] >= 0 and around["x"] + around["width"] <= width, around
    pending = page.locator("mark.span-pending")
    assert pending.count() >= 1
    for index in range(pending.count()):
        for line in pending.nth(index).evaluate(
            "mark => Array.from(mark.getClientRects(), r => ({x: r.x, y: r.y, width: r.width, height: r.height}))"
        ):
            assert not boxes_overlap(around, line), (around, line)


def test_a_span_made_by_keyboard_only_keeps_code_point_offsets_through_reload_and_export(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project, held = evening_for(alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    expect(page.locator('.node[data-id="ask"]')).to_be_focused()

    page.keyboard.press("s")
    text = page.locator('.node[data-id="ask"] .node-text')
    expect(text).to_be_focused()
    expect(text).to_have_attribute("role", "textbox")
    expect(text.locator("[data-span-caret]")).to_have_count(1)
    status = page.locator("[data-span-caret-status]")
    expect(status).to_contain_text("Caret in message ask at 0")

    # Past "Pizza", then over the emoji and "and then" to the end of "films" with Shift.
    page.keyboard.press("Control+ArrowRight")
    expect(status).to_contain_text("at 5 of")
    page.keyboard.press("Control+ArrowRight")  # "and": the emoji between words are passed over
    page.keyboard.press("Control+ArrowRight")  # "then"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # after "🎬 ": the caret before "films"
    expect(status).to_contain_text("before “films”")
    page.keyboard.press("Shift+Control+ArrowRight")
    expect(status).to_contain_text("Selected “films”")
    start = ASK.index("films")  # Python counts code points, as the server does
    expect(status).to_contain_text(f"({start}\u2013{start + 5})")
    expect(text.locator("mark.span-pending")).to_have_text("films")

    page.keyboard.press("2")  # film, then its attribute in the chooser
    expect(page.locator("[data-span-chooser]")).to_be_visible()
    expect_chooser_clear_of_selection(page)
    page.keyboard.press("1")  # sure
    expect(page.locator("[data-span-chooser]")).to_have_count(0)
    expect_saved(page)
    # Back in caret mode just after the span, for the next one; Esc leaves it.
    expect(text).to_be_focused()
    expect(status).to_contain_text(f"at {start + 5} of")
    page.keyboard.press("Escape")
    expect(page.locator('.node[data-id="ask"]')).to_be_focused()
    expect(text.locator("[data-span-caret]")).to_have_count(0)
    expect(text).to_have_text(ASK)

    span = {
        "node": "ask",
        "start": start,
        "end": start + 5,
        "text": "films",
        "label": "film",
        "attributes": {"certainty": "sure"},
    }
    assert item_answers(project=project, tree=held.tree, user=alice).payloads == {"wishes": {"spans": [span]}}
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    assert listed(page) == [("ask", str(start), str(start + 5), "film")]
    expect(page.locator('.node[data-id="ask"] mark.span-mark')).to_have_text("films")
    [record] = annotations_export(project=project, format_name="potato", status="all", user=alice)
    assert json.loads(record)["annotations"] == {"wishes": {"spans": [span]}}


def test_shift_and_home_end_select_and_arrows_alone_drop_the_selection(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project, held = evening_for(alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    page.keyboard.press("j")  # the reply: "Pepperoni and a thriller it is."
    page.keyboard.press("s")
    status = page.locator("[data-span-caret-status]")

    page.keyboard.press("Shift+End")
    expect(status).to_contain_text("Selected “Pepperoni and a thriller it is.”")
    page.keyboard.press("ArrowLeft")  # the selection collapses to its start
    expect(status).to_contain_text("at 0 of")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    expect(status).to_contain_text("Selected “Pe” (0\u20132)")
    page.keyboard.press("Shift+Alt+ArrowRight")  # Alt moves by word as Ctrl does
    expect(status).to_contain_text("Selected “Pepperoni” (0\u20139)")
    # Keys of the page do nothing behind caret mode: j does not move to another message.
    page.keyboard.press("j")
    expect(page.locator('.node[data-id="reply"] .node-text')).to_be_focused()
    page.keyboard.press("Enter")  # the chooser, label first, for the keys or a click
    page.locator('[data-span-chooser] [data-choice="food"]').click()
    page.locator('[data-span-chooser] [data-choice="unsure"]').click()
    expect_saved(page)
    assert listed(page) == [("reply", "0", "9", "food")]


def test_the_palette_shows_every_label_before_any_selection_and_labels_the_selected_text(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project, held = evening_for(alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        palette = page.locator('[data-span-palette="wishes"]')
        expect(palette).to_be_in_viewport()
        buttons = palette.locator("button[data-label]")
        expect(buttons).to_have_count(2)
        expect(buttons.nth(0)).to_have_text("1 food")
        expect(buttons.nth(1)).to_have_text("2 film")
        expect(buttons.nth(1)).to_have_attribute("aria-keyshortcuts", "2")
        colour = (
            buttons.nth(1)
            .locator(".span-swatch")
            .evaluate("swatch => getComputedStyle(swatch).backgroundColor")
        )
        assert colour == "rgb(37, 99, 235)"
        page.screenshot(path=str(artifacts() / f"spans-palette-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})

    # Nothing selected: the palette says how to select rather than doing nothing.
    page.locator('[data-span-palette] [data-label="food"]').click()
    expect(page.locator("[data-flash]")).to_contain_text("Select text in a message first")
    # With the mouse: the chooser opens, and the palette answers its label step.
    select_text(page, "ask", 0, 5)
    page.locator('[data-span-palette] [data-label="food"]').click()
    expect(page.locator('[data-span-chooser] [data-choice="food"]')).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("2")  # unsure
    expect_saved(page)
    # In caret mode: the palette's click keeps the caret's selection, and labels it.
    page.locator('.node[data-id="reply"]').focus()
    page.keyboard.press("s")
    page.keyboard.press("Shift+Control+ArrowRight")
    page.locator('[data-span-palette] [data-label="food"]').click()
    page.keyboard.press("1")
    expect_saved(page)
    assert listed(page) == [("ask", "0", "5", "food"), ("reply", "0", "9", "food")]


@pytest.mark.parametrize("width", [1280, 390])
def test_the_chooser_never_covers_the_selected_text(
    live_server: Any, page: Page, sign_in: Any, width: int
) -> None:
    alice = person("alice")
    dataset = CorpusDatasetFactory(name="movies", files=[CCPE_FILE])
    project = project_create(name="movie-prefs", dataset=dataset, config_yaml=CCPE_CONFIG)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    page.set_viewport_size({"width": width, "height": 800})
    open_item(page, live_server, project, held.tree_id)
    rows = page.locator(".node[data-id]")
    last = rows.nth(rows.count() - 1)
    last_id = last.get_attribute("data-id")

    # A message at the top of the conversation, and the last one, scrolled to the bottom of the screen.
    for node_id in ("0", last_id):
        row = page.locator(f'.node[data-id="{node_id}"]')
        row.scroll_into_view_if_needed()
        length = len(row.locator(".node-text").text_content())
        select_text(page, node_id, 0, min(length, 12))
        expect_chooser_clear_of_selection(page)
        page.screenshot(path=str(artifacts() / f"spans-chooser-{node_id}-{width}.png"))
        page.keyboard.press("Escape")
        expect(page.locator("[data-span-chooser]")).to_have_count(0)

    # By keyboard, on the last message with the page scrolled so that it sits at the very bottom.
    last.focus()
    page.evaluate(
        "id => { const row = document.querySelector(`.node[data-id='${id}']`); row.scrollIntoView(false); }",
        last_id,
    )
    page.keyboard.press("s")
    page.keyboard.press("Shift+End")
    page.keyboard.press("1")
    expect_chooser_clear_of_selection(page)
    axe_clean(page)
    page.set_viewport_size({"width": width, "height": 800})
    page.locator("mark.span-pending").first.scroll_into_view_if_needed()
    expect_chooser_clear_of_selection(page)
    page.screenshot(path=str(artifacts() / f"spans-caret-chooser-{width}.png"))


def test_the_annotate_page_with_a_span_scheme_is_accessible_in_caret_mode(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project, held = evening_for(alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    axe_clean(page)
    page.keyboard.press("s")
    page.keyboard.press("Shift+Control+ArrowRight")
    expect(page.locator("[data-span-caret-status]")).to_contain_text("Selected “Pizza”")
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 800})
        page.screenshot(path=str(artifacts() / f"spans-caret-{width}.png"), full_page=True)
