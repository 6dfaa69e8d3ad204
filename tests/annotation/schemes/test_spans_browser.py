"""Span annotation in a real browser: select text with the mouse, label it with
keys or clicks, see nested and overlapping spans in the message, reload, and
find them in the corpus-format export with the right offsets.

Alice annotates the first CCPE dialogue under the shipped CCPE config, and a
branch of Potato's documented conversation under a plain span scheme.
"""

from __future__ import annotations

import json
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
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.factories import CorpusDatasetFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
CCPE_CONFIG = (ROOT / "platform" / "configs" / "ccpe.yaml").read_text()
CCPE_FILE = ROOT / "tests" / "fixtures" / "ccpe" / "CCPE-8e113.original.json"

# Where each character of a message's text is drawn, for dragging across a stretch of it.
CHARACTER_EDGES = """([node, start, end]) => {
  const box = document.querySelector(`.node[data-id="${node}"] .node-text`);
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  const edge = (offset, side) => {
    let seen = 0;
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      if (offset < seen + text.length) {
        const range = document.createRange();
        range.setStart(text, offset - seen);
        range.setEnd(text, offset - seen + 1);
        const rect = range.getBoundingClientRect();
        walker.currentNode = box;
        return { x: side === "left" ? rect.left : rect.right, y: rect.top + rect.height / 2 };
      }
      seen += text.length;
    }
    throw new Error("offset " + offset + " is past the text");
  };
  return [edge(start, "left"), edge(end - 1, "right")];
}"""


def open_item(page: Page, live_server: Any, project: Project, tree_id: int) -> None:
    url = reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})
    page.goto(live_server.url + url)
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


# The text a drag should select, and the text the browser has selected so far.
SELECTION = """([node, start, end]) => {
  const box = document.querySelector(`.node[data-id="${node}"] .node-text`);
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let text = "";
  for (let part = walker.nextNode(); part; part = walker.nextNode()) {
    text += part.data;
  }
  return [text.slice(start, end), String(getSelection())];
}"""


def select_text(page: Page, node: str, start: int, end: int) -> None:
    """Drag the mouse across characters ``start`` to ``end`` (exclusive) of message ``node``.

    On a loaded machine Chromium may coalesce the drag's moves and leave the selection
    where an earlier one put it, so the button is released only once the selection
    reaches the last character: the page under test reads what the browser selected.
    """
    first, last = page.evaluate(CHARACTER_EDGES, [node, start, end])
    page.mouse.move(first["x"] + 1, first["y"])
    page.mouse.down()
    page.mouse.move(last["x"] - 1, last["y"], steps=4)
    for nudge in range(10):
        wanted, selected = page.evaluate(SELECTION, [node, start, end])
        if selected == wanted:
            break
        page.wait_for_timeout(50)
        page.mouse.move(last["x"] - 1 - nudge % 2, last["y"])
    page.mouse.up()
    expect(page.locator("[data-span-chooser]")).to_be_visible()


def expect_saved(page: Page) -> None:
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


def listed(page: Page) -> list[tuple[str, str, str, str]]:
    items = page.locator("[data-span-list] [data-span]")
    return [
        (
            items.nth(i).get_attribute("data-node"),
            items.nth(i).get_attribute("data-start"),
            items.nth(i).get_attribute("data-end"),
            items.nth(i).get_attribute("data-label"),
        )
        for i in range(items.count())
    ]


def test_nested_and_overlapping_spans_on_a_ccpe_utterance_survive_a_reload_and_export(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    dataset = CorpusDatasetFactory(name="movies", files=[CCPE_FILE])
    project = project_create(name="movie-prefs", dataset=dataset, config_yaml=CCPE_CONFIG)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    utterance = page.locator('.node[data-id="1"] .node-text')
    expect(utterance).to_have_text("I like thrillers a lot.")

    # "I like thrillers": ENTITY_PREFERENCE (2), about a genre (1), all with keys.
    select_text(page, "1", 0, 16)
    expect(page.locator("[data-span-chooser] q")).to_have_text("I like thrillers")
    page.keyboard.press("2")
    page.keyboard.press("1")
    expect(page.locator("[data-span-chooser]")).to_have_count(0)
    # "thrillers", nested in it: ENTITY_NAME by key, the entity type by a click.
    select_text(page, "1", 7, 16)
    page.keyboard.press("1")
    page.locator(
        '[data-span-chooser] [data-step="entityType"] [data-choice="MOVIE_GENRE_OR_CATEGORY"]'
    ).click()
    # "thrillers a lot", crossing the first: all by clicks.
    select_text(page, "1", 7, 22)
    page.locator('[data-span-chooser] [data-choice="ENTITY_DESCRIPTION"]').click()
    page.locator('[data-span-chooser] [data-choice="MOVIE_GENRE_OR_CATEGORY"]').click()
    expect_saved(page)

    spans = [
        ("1", "0", "16", "ENTITY_PREFERENCE"),
        ("1", "7", "16", "ENTITY_NAME"),
        ("1", "7", "22", "ENTITY_DESCRIPTION"),
    ]
    assert listed(page) == spans
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    assert listed(page) == spans
    # The text is cut where spans begin and end; "thrillers" lies under all three.
    marks = page.locator('.node[data-id="1"] mark.span-mark')
    expect(marks).to_have_count(3)
    assert [marks.nth(i).text_content() for i in range(3)] == ["I like ", "thrillers", " a lot"]
    assert len(marks.nth(1).get_attribute("data-spans").split()) == 3
    expect(utterance).to_have_text("I like thrillers a lot.")

    [dialogue] = annotations_export(
        project=project, format_name="ccpe", status="all", user=alice, options={"name_annotators": False}
    )
    segments = json.loads(dialogue)[0]["utterances"][1]["segments"]
    # "thrillers" is also the corpus's own first segment, so it keeps that place; hers follow by offsets.
    assert [(s["startIndex"], s["endIndex"], s["text"], s["annotations"]) for s in segments] == [
        (7, 16, "thrillers", [{"annotationType": "ENTITY_NAME", "entityType": "MOVIE_GENRE_OR_CATEGORY"}]),
        (
            0,
            16,
            "I like thrillers",
            [{"annotationType": "ENTITY_PREFERENCE", "entityType": "MOVIE_GENRE_OR_CATEGORY"}],
        ),
        (
            7,
            22,
            "thrillers a lot",
            [{"annotationType": "ENTITY_DESCRIPTION", "entityType": "MOVIE_GENRE_OR_CATEGORY"}],
        ),
    ]


def test_a_span_on_a_branch_of_a_tree_is_added_and_deleted(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    config = (
        "annotation_schemes:\n  - annotation_type: span\n    name: issues\n"
        "    description: Mark the problems and requests\n    labels: [problem, request]\n"
    )
    project = project_over("orders", config, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    text = SEED_ITEM["tree"]["children"][1]["content"]  # resp_b: "Sure, what seems to be the problem?"
    start = text.index("problem")

    select_text(page, "resp_b", start, start + len("problem"))
    page.keyboard.press("Escape")
    expect(page.locator("[data-span-chooser]")).to_have_count(0)
    select_text(page, "resp_b", start, start + len("problem"))
    page.keyboard.press("1")
    expect_saved(page)

    assert listed(page) == [("resp_b", str(start), str(start + 7), "problem")]
    assert item_answers(project=project, tree=held.tree, user=alice).payloads == {
        "issues": {
            "spans": [
                {
                    "node": "resp_b",
                    "start": start,
                    "end": start + 7,
                    "text": "problem",
                    "label": "problem",
                    "attributes": {},
                }
            ]
        }
    }
    page.locator("[data-span-list] .span-delete").click()
    expect_saved(page)
    assert listed(page) == []
    assert item_answers(project=project, tree=held.tree, user=alice).payloads == {"issues": {"spans": []}}
