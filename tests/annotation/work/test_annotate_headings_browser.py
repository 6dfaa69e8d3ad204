"""The annotate page heads each scheme's widgets with its description, as Potato does.

The rules:

- a tree scheme's node widget is headed by its description (its node scheme's own,
  if it has one), whatever the number of tree schemes: never by the type's
  title and the scheme's name ("Ratings (multi_criteria)");
- a path bar is headed by its scheme's description, with what to choose above the
  path: ``path_selection.description``, "Select the best response path" when the
  config gives none;
- a question about the whole conversation is headed by its description;
- the scheme's name stays on the widget (``data-scheme``, ``data-path``) for scripts
  and tests, not in what is read.

Alice annotates Potato's documented conversation under Potato's documented
configs, and a few of our own.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.work.assignment import item_next
from tests.annotation.annotator_items import MULTI_CRITERIA, RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TWO_TREE_SCHEMES = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: helpful
    description: How helpful is this reply?
    node_scheme: {annotation_type: likert, size: 5}
  - annotation_type: tree_annotation
    name: criteria
    description: Rate the reply on each criterion
    node_scheme: {annotation_type: multirate, options: [Relevance, Fluency], labels: ["1", "2", "3"]}
    path_selection: {enabled: true}
  - {annotation_type: radio, name: overall, description: "Would you send this conversation on?", labels: [send, keep]}
"""


def open_item(page: Page, live_server: Any, sign_in: Any, config: str, name: str) -> None:
    alice = person(f"alice-{name}")
    project = project_over(name, config, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    page.goto(
        live_server.url + reverse("annotation:item", kwargs={"name": project.name, "tree_id": held.tree_id})
    )
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def open_node(page: Page, node_id: str) -> None:
    page.locator(f'[role="treeitem"][data-id="{node_id}"]').click()
    page.keyboard.press("Enter")
    expect(page.locator("[data-panel]")).to_be_visible()


def test_the_documented_multirate_block_is_headed_by_its_schemes_description(
    live_server: Any, page: Page, sign_in: Any
):
    open_item(page, live_server, sign_in, MULTI_CRITERIA, "criteria")

    open_node(page, "resp_a")

    widget = page.locator('[data-panel-widgets] [data-scheme="multi_criteria"]')
    expect(widget.locator("legend").first).to_have_text("Evaluate each response on multiple criteria")


def test_the_path_bar_is_headed_by_its_schemes_description_and_says_what_to_choose(
    live_server: Any, page: Page, sign_in: Any
):
    open_item(page, live_server, sign_in, RESPONSE_QUALITY, "quality")

    bar = page.locator(".path-bar")
    expect(bar.get_by_role("heading", level=3)).to_have_text("Evaluate the conversation tree")
    expect(bar.locator("[data-path-description]")).to_have_text(
        "Select the best response path through the tree"
    )
    expect(bar.locator('[data-path="response_quality"]')).to_have_count(1)


def test_several_schemes_are_told_apart_by_their_descriptions_not_their_names(
    live_server: Any, page: Page, sign_in: Any, tmp_path: Any
):
    open_item(page, live_server, sign_in, TWO_TREE_SCHEMES, "several")

    bar = page.locator(".path-bar")
    expect(bar.get_by_role("heading", level=3)).to_have_text("Rate the reply on each criterion")
    expect(bar.locator("[data-path-description]")).to_have_text("Select the best response path")
    expect(page.locator('[data-item-schemes] [data-scheme="overall"] legend')).to_have_text(
        "Would you send this conversation on?"
    )
    open_node(page, "resp_a")
    legends = page.locator("[data-panel-widgets] [data-scheme] > legend")
    expect(legends).to_have_text(["How helpful is this reply?", "Rate the reply on each criterion"])
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"headings-{width}.png"), full_page=True)
