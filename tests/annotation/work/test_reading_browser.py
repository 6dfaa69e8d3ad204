"""Reading a conversation on the annotate page, however deep or long, in a real browser.

The rules:

- Rows are indented only at branch points: a chain of single replies stays
  at its level. A 60-turn chain that branches at the end keeps the text column
  of every row at 60 % of the page's width or more, on a desktop (1280 px) and
  on a phone (390 px), with a message open in the panel too; screenshots of
  both are written to ``BRANCHPOINT_ARTIFACTS`` (default ``tests/artifacts/``).
  Past a few branch points the indentation stops growing: a tree that
  branches at each of 30 turns keeps the same text column.
- Each row shows its turn (``#37``, the first message being #1), in words for
  screen readers ("turn 37").
- A conversation that never branches is announced as a list of turns; one that
  branches as a tree whose ``aria-level`` goes up only at branch points, with
  ``aria-expanded`` on the branch points alone.
- The middle of a long stretch of single replies is collapsed behind a button,
  "N more turns"; the button or ``→`` on the row above shows them.
- The focus view (``f``) shows the path through the current message as a list,
  each branch point's replies as WAI-ARIA tabs; switching views loses nothing.
- A row shows the first lines of a long message and a "Show more" button; the
  panel shows all of it. A 50,000-character message keeps the page quick.

None of these pages has a serious or critical accessibility violation.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Membership, Project
from annotation.projects.services import membership_add
from annotation.work.assignment import item_next
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, TWO_BRANCHES, person, project_over
from tests.factories import ChainTreeFactory, DatasetFactory, MessageFactory, ProjectFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}

# The narrowest text column among the rows shown, and the page's width.
TEXT_COLUMN = """() => {
  const widths = [...document.querySelectorAll(".node[data-id]")]
    .filter((row) => row.getClientRects().length)
    .map((row) => row.querySelector(".node-text").getBoundingClientRect().width);
  return { narrowest: Math.min(...widths), rows: widths.length, page: document.documentElement.clientWidth };
}"""


def artifacts() -> Path:
    """Where screenshots go: ``BRANCHPOINT_ARTIFACTS``, else ``tests/artifacts/`` (git ignores it)."""
    folder = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or ROOT / "tests" / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chain_project(name: str, *, chain: int, replies: int = 0) -> Project:
    """Alice's project over one ``chain``-turn tree whose last message has ``replies`` replies."""
    dataset = DatasetFactory(name=f"{name}-trees")
    ChainTreeFactory(dataset=dataset, external_id=f"{name}-tree", chain=chain, replies=replies)
    project = ProjectFactory(name=name, dataset=dataset, config_yaml=RESPONSE_QUALITY)
    membership_add(project=project, user=person("alice"), role=Membership.Role.ANNOTATOR)
    return project


def open_item(page: Page, live_server: Any, sign_in: Any, project: Project) -> None:
    alice = person("alice")
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    url = reverse("annotation:item", kwargs={"name": project.name, "tree_id": held.tree_id})
    page.goto(live_server.url + url)
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def node(page: Page, node_id: str) -> Any:
    return page.locator(f'.node[data-id="{node_id}"]')


def axe_serious(page: Page) -> list[str]:
    """The serious and critical accessibility violations axe-core finds on the page."""
    results = Axe().run(page)
    return [
        f"{violation['id']}: {violation['help']} ({len(violation['nodes'])} elements)"
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


def test_a_60_turn_chain_that_branches_at_the_end_keeps_the_text_column_wide(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = chain_project("deep", chain=60, replies=2)
    open_item(page, live_server, sign_in, project)

    expect(node(page, "m60-1")).to_be_visible()
    expect(node(page, "m60-1").locator('.node-depth [aria-hidden="true"]')).to_have_text("#61")
    expect(node(page, "m60-1").locator(".node-depth .visually-hidden")).to_have_text("turn 61")
    assert node(page, "m60-1").get_attribute("aria-level") == "2"
    assert node(page, "m59").get_attribute("aria-level") == "1"
    for label, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        expect(node(page, "m60-2")).to_be_visible()
        column = page.evaluate(TEXT_COLUMN)
        assert column["narrowest"] >= 0.6 * column["page"], (label, column)
        page.screenshot(path=str(artifacts() / f"deep-chain-{label}.png"), full_page=True)
        assert axe_serious(page) == [], label

        # With the deepest message open in the panel, beside the tree or under it.
        node(page, "m60-2").click()
        expect(page.locator("[data-panel]")).to_be_visible()
        column = page.evaluate(TEXT_COLUMN)
        assert column["narrowest"] >= 0.6 * column["page"], (label, "panel open", column)
        page.screenshot(path=str(artifacts() / f"deep-chain-{label}-open.png"), full_page=True)
        assert axe_serious(page) == [], (label, "panel open")
        page.keyboard.press("Escape")
        expect(page.locator("[data-panel]")).to_be_hidden()


def comb_item(turns: int) -> dict[str, Any]:
    """A Potato item that branches at every turn: each message has a short reply and the next turn."""
    last: dict[str, Any] = {"id": f"t{turns}", "role": "user", "content": f"turn {turns}"}
    for turn in range(turns - 1, -1, -1):
        side = {"id": f"s{turn}", "role": "assistant", "content": f"an aside at turn {turn}"}
        last = {"id": f"t{turn}", "role": "user", "content": f"turn {turn}", "children": [side, last]}
    return {"id": "comb", "tree": last}


def test_indentation_stops_growing_so_a_tree_that_branches_at_every_turn_stays_readable(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = project_over("comb", RESPONSE_QUALITY, [comb_item(30)], [person("alice")])
    open_item(page, live_server, sign_in, project)

    assert node(page, "t30").get_attribute("aria-level") == "31"
    for label, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        column = page.evaluate(TEXT_COLUMN)
        assert column["rows"] == 61
        assert column["narrowest"] >= 0.6 * column["page"], (label, column)


def test_a_linear_dialogue_is_a_list_of_turns(live_server: Any, page: Page, sign_in: Any) -> None:
    project = chain_project("linear", chain=16)
    open_item(page, live_server, sign_in, project)

    expect(page.locator('[role="tree"], [role="treeitem"]')).to_have_count(0)
    turns = page.get_by_role("list", name="Conversation").get_by_role("listitem")
    expect(turns).to_have_count(16)
    # All sixteen turns are shown, in one column, each with its number.
    expect(page.locator(".node-gap")).to_have_count(0)
    assert {row.evaluate("row => row.getBoundingClientRect().left") for row in turns.all()} == {
        turns.first.evaluate("row => row.getBoundingClientRect().left")
    }
    expect(node(page, "m15").locator(".node-depth")).to_contain_text("turn 16")
    # The keys walk the list as they walk a tree.
    expect(node(page, "m0")).to_be_focused()
    page.keyboard.press("End")
    expect(node(page, "m15")).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(node(page, "m14")).to_be_focused()
    page.keyboard.press("f")
    expect(page.locator("[data-flash]")).to_contain_text("never branches")
    assert axe_serious(page) == []


def test_a_branching_tree_goes_up_a_level_only_at_branch_points(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    item = {**TWO_BRANCHES, "id": "branchy"}
    project = project_over("branchy", RESPONSE_QUALITY, [item], [person("alice")])
    open_item(page, live_server, sign_in, project)

    tree = page.get_by_role("tree", name="Conversation")
    items = tree.get_by_role("treeitem")
    expect(items).to_have_count(6)
    levels = {row.get_attribute("data-id"): row.get_attribute("aria-level") for row in items.all()}
    assert levels == {"q": "1", "a1": "2", "u1": "2", "a2": "3", "a3": "3", "b1": "2"}
    expanded = {row.get_attribute("data-id") for row in items.all() if row.get_attribute("aria-expanded")}
    assert expanded == {"q", "u1"}
    expect(node(page, "a2").locator(".node-reply")).to_have_text("reply 1 of 2")
    # u1 hangs from a1 (a thread line); b1, a second reply to q, does not.
    assert "continues" in node(page, "u1").get_attribute("class").split()
    assert "continues" not in node(page, "b1").get_attribute("class").split()

    # ← folds a branch point: its replies, and theirs, go; → brings them back.
    node(page, "u1").click()
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowLeft")
    expect(node(page, "u1")).to_have_attribute("aria-expanded", "false")
    expect(node(page, "a2")).to_be_hidden()
    page.keyboard.press("j")
    expect(node(page, "b1")).to_be_focused()
    page.keyboard.press("k")
    page.keyboard.press("ArrowRight")
    expect(node(page, "a3")).to_be_visible()
    assert axe_serious(page) == []


def test_a_long_stretch_of_single_replies_collapses_behind_a_button(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = chain_project("stretch", chain=20, replies=2)
    open_item(page, live_server, sign_in, project)

    # m0 m1, then 15 collapsed, then m17 to m19 (the branch point) and its replies.
    gap = page.get_by_role("button", name="15 more turns")
    expect(gap).to_have_attribute("aria-expanded", "false")
    expect(gap).to_have_text("15 more turns (#3 to #17)")
    expect(node(page, "m1")).to_contain_text("15 more turns")
    for shown in ("m0", "m1", "m17", "m18", "m19", "m20-1", "m20-2"):
        expect(node(page, shown)).to_be_visible()
    expect(node(page, "m2")).to_be_hidden()
    expect(node(page, "m16")).to_be_hidden()

    # j skips the collapsed turns; → on the row above them shows them.
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(node(page, "m17")).to_be_focused()
    page.keyboard.press("k")
    expect(node(page, "m1")).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(node(page, "m2")).to_be_visible()
    expect(page.locator(".node-gap")).to_have_count(0)
    page.keyboard.press("j")
    expect(node(page, "m2")).to_be_focused()

    # Or by clicking (a reload draws it collapsed again); going to a hidden turn shows it.
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    page.get_by_role("button", name="15 more turns").click()
    expect(node(page, "m2")).to_be_focused()
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    node(page, "m17").click()
    page.keyboard.press("Escape")
    page.keyboard.press("ArrowLeft")  # to m16, its parent, collapsed
    expect(node(page, "m16")).to_be_focused()
    expect(node(page, "m2")).to_be_visible()


def test_the_focus_view_shows_one_path_with_the_replies_at_each_branch_point_as_tabs(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = project_over("focus", RESPONSE_QUALITY, [SEED_ITEM], [person("alice")])
    open_item(page, live_server, sign_in, project)

    # Rate resp_b and open it; then the focus view on user_2.
    node(page, "resp_b").click()
    page.keyboard.press("4")
    node(page, "user_2").click()
    page.keyboard.press("f")
    view = page.get_by_role("region", name="Focus view: one path")
    expect(view).to_be_visible()
    expect(page.locator("[data-tree]")).to_be_hidden()
    expect(page.locator('[role="tree"]:visible, [role="treeitem"]:visible')).to_have_count(0)
    expect(view.get_by_role("listitem")).to_have_count(3)
    assert [row.get_attribute("data-id") for row in view.locator(".node").all()] == [
        "root",
        "resp_a",
        "user_2",
    ]
    expect(node(page, "user_2")).to_be_focused()
    expect(page.get_by_role("button", name="Focus view")).to_have_attribute("aria-pressed", "true")

    tabs = view.get_by_role("tablist", name="Replies to root").get_by_role("tab")
    expect(tabs).to_have_count(2)
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    panel_id = tabs.nth(0).get_attribute("aria-controls")
    expect(page.locator(f"#{panel_id}")).to_have_attribute("role", "tabpanel")
    assert axe_serious(page) == []

    # The tabs pattern: Tab reaches the selected tab, → picks the next reply.
    tabs.nth(0).focus()
    page.keyboard.press("ArrowRight")
    expect(tabs.nth(1)).to_be_focused()
    expect(tabs.nth(1)).to_have_attribute("aria-selected", "true")
    expect(tabs.nth(1)).to_have_attribute("tabindex", "0")
    expect(tabs.nth(0)).to_have_attribute("tabindex", "-1")
    assert [row.get_attribute("data-id") for row in view.locator(".node").all()] == ["root", "resp_b"]
    expect(page.locator(f"#{tabs.nth(1).get_attribute('aria-controls')}")).to_contain_text("resp_b")
    page.keyboard.press("Home")
    expect(tabs.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("End")
    expect(tabs.nth(1)).to_have_attribute("aria-selected", "true")

    # The rows keep their answers and the open message; j and k walk the path.
    expect(node(page, "resp_b").locator('[data-mark="response_quality"]')).to_have_text("rated 4")
    expect(page.locator("[data-panel]")).to_be_visible()
    node(page, "root").click()
    page.keyboard.press("j")
    expect(node(page, "resp_b")).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("5")
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")

    # f again: the whole tree, as it was, with the focus where it was.
    page.keyboard.press("f")
    expect(page.locator("[data-focus-view]")).to_be_hidden()
    items = page.get_by_role("tree", name="Conversation").get_by_role("treeitem")
    assert [row.get_attribute("data-id") for row in items.all()] == ["root", "resp_a", "user_2", "resp_b"]
    expect(node(page, "resp_b")).to_be_focused()
    expect(node(page, "resp_b").locator('[data-mark="response_quality"]')).to_have_text("rated 5")
    assert node(page, "root").get_attribute("aria-level") == "1"


def test_a_50000_character_message_shows_its_first_lines_and_the_page_stays_quick(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    dataset = DatasetFactory(name="long-trees")
    tree = ChainTreeFactory(dataset=dataset, external_id="long", chain=3)
    last = tree.messages.get(external_id="m2")
    words = ("lorem ipsum dolor sit amet consectetur " * 1400)[:49_990]
    long_text = words + "\nTHE END."
    MessageFactory(tree=tree, parent=last, external_id="long", role="assistant", text=long_text)
    project = ProjectFactory(name="long", dataset=dataset, config_yaml=RESPONSE_QUALITY)
    membership_add(project=project, user=person("alice"), role=Membership.Role.ANNOTATOR)
    started = time.monotonic()
    open_item(page, live_server, sign_in, project)
    loaded = time.monotonic() - started

    row = node(page, "long")
    text = row.locator(".node-text")
    height = text.evaluate("box => box.getBoundingClientRect().height")
    line = text.evaluate("box => parseFloat(getComputedStyle(box).lineHeight)")
    assert height <= 4 * line + 1
    expect(row.get_by_role("button", name="Show more of long")).to_have_attribute("aria-expanded", "false")
    more = row.locator(".node-more")
    expect(node(page, "m0").locator(".node-more")).to_have_count(0)  # short messages have none

    # Keys answer at once: opening the message shows all of it in the panel.
    row.click()
    took = page.evaluate("""() => new Promise((done) => {
      const start = performance.now();
      document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key: "k", bubbles: true }));
      document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
      document.activeElement.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
      requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - start)));
    })""")
    expect(page.locator("[data-panel-text]")).to_contain_text("THE END.")
    # The whole text, rendered (one paragraph: it is prose).
    assert len(page.locator("[data-panel-text] .markdown p").text_content()) == len(long_text)
    assert took < 500, f"three keys and a frame took {took:.0f} ms"
    assert loaded < 10, f"the page took {loaded:.1f} s to be ready"

    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(more).to_contain_text("Show less")
    assert text.evaluate("box => box.getBoundingClientRect().height") > 20 * line
    more.click()
    expect(more).to_have_attribute("aria-expanded", "false")
    assert text.evaluate("box => box.getBoundingClientRect().height") <= 4 * line + 1
    assert axe_serious(page) == []
