"""The annotate page in a real browser, driven with the keyboard alone.

Alice annotates Potato's documented conversation (root → resp_a → user_2,
and root → resp_b) under the documented configs, and what she leaves behind
is exactly the documented output: state is keyed by node id, so rating one
node never touches another, and opening a node never touches the path.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.exports import annotations_export
from annotation.models import Annotation, Assignment, Project
from annotation.work.assignment import item_next
from annotation.work.submissions import item_answers
from tests.annotation.annotator_items import (
    BRANCH_COMPARE,
    RESPONSE_QUALITY,
    SEED_EXPECTED,
    SEED_ITEM,
    person,
    project_over,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_item(page: Page, live_server: Any, project: Project, tree_id: int) -> None:
    url = reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})
    page.goto(live_server.url + url)
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def node(page: Page, node_id: str) -> Any:
    """A message's row: a treeitem when the conversation branches, a list item when not."""
    return page.locator(f'.node[data-id="{node_id}"]')


def expect_marks(page: Page, marks: dict[str, str]) -> None:
    """Each node's rating badge as the tree shows it ("" for none)."""
    for node_id, text in marks.items():
        badge = node(page, node_id).locator('[data-mark="response_quality"]')
        if text:
            expect(badge).to_have_text(text)
        else:
            expect(badge).to_have_count(0)


def expect_path(page: Page, steps: list[str]) -> None:
    expect(page.locator('[data-path="response_quality"] [data-step]')).to_have_count(len(steps))
    for index, step in enumerate(steps):
        expect(page.locator('[data-path="response_quality"] [data-step]').nth(index)).to_have_attribute(
            "data-step", step
        )
    expect(page.locator(".node.in-path")).to_have_count(len(steps))


def expect_saved(page: Page) -> None:
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


def test_rating_and_choosing_a_path_with_the_keyboard_gives_the_documented_output(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    # The tree in preorder, roles told apart, the branch point marked; messages
    # given as {role, content} show their text. Levels go up at the branch point
    # only: user_2, resp_a's only reply, stays at resp_a's level.
    rows = page.locator('[role="treeitem"]')
    assert [rows.nth(i).get_attribute("data-id") for i in range(4)] == ["root", "resp_a", "user_2", "resp_b"]
    assert [rows.nth(i).get_attribute("aria-level") for i in range(4)] == ["1", "2", "2", "2"]
    expect(node(page, "resp_a")).to_have_class(re.compile(r"\brole-assistant\b"))
    expect(page.locator(".node-branch")).to_have_count(1)
    expect(node(page, "root").locator(".node-branch")).to_have_text("branch point: 2 replies")
    expect(node(page, "root").locator(".node-text .markdown")).to_have_text(
        "Hello, I need help with my order"
    )
    expect(node(page, "resp_b").locator(".node-text .markdown")).to_have_text(
        "Sure, what seems to be the problem?"
    )
    expect(node(page, "root")).to_be_focused()

    page.keyboard.press("?")
    expect(page.locator("[data-help]")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("[data-help]")).to_be_hidden()

    page.keyboard.press("p")  # root starts the path
    page.keyboard.press("j")
    expect(node(page, "resp_a")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("[data-panel-text] .markdown")).to_have_text(
        "I'd be happy to help! Can you provide your order number?"
    )
    expect(page.locator("[data-panel-parent-text] .markdown")).to_have_text(
        "Hello, I need help with my order"
    )
    page.keyboard.press("4")
    page.keyboard.press("p")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("p")
    expect_path(page, ["root", "resp_a", "user_2"])

    page.keyboard.press("j")
    page.keyboard.press("p")  # resp_b does not reply to user_2: refused, and said why
    expect(page.locator("[data-flash]")).to_contain_text("is not a reply to “user_2”")
    page.keyboard.press("Enter")
    page.keyboard.press("2")
    # Rating resp_b left resp_a's rating alone.
    expect_marks(page, {"root": "", "resp_a": "rated 4", "user_2": "", "resp_b": "rated 2"})

    # Re-opening resp_a to change its rating leaves the path as it was.
    page.keyboard.press("k")
    page.keyboard.press("ArrowUp")
    expect(node(page, "resp_a")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("[data-panel-widgets] input[value='4']")).to_be_checked()
    page.keyboard.press("5")
    expect_marks(page, {"resp_a": "rated 5", "resp_b": "rated 2"})
    page.keyboard.press("4")
    expect_path(page, ["root", "resp_a", "user_2"])
    expect_saved(page)
    assert item_answers(project=project, tree=held.tree, user=alice).payloads == SEED_EXPECTED

    # A reload starts from the server's draft.
    page.reload()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    expect_marks(page, {"root": "", "resp_a": "rated 4", "user_2": "", "resp_b": "rated 2"})
    expect_path(page, ["root", "resp_a", "user_2"])

    page.keyboard.press("Control+Enter")
    expect(page.locator("[data-nothing-left]")).to_be_visible()

    assert Assignment.objects.get(project=project, user=alice).status == "submitted"
    assert item_answers(project=project, tree=held.tree, user=alice).payloads == SEED_EXPECTED
    [record] = [json.loads(line) for line in annotations_export(project=project, format_name="potato")]
    assert (record["id"], record["user"], record["status"]) == ("conv_001", "alice", "submitted")
    assert record["annotations"] == SEED_EXPECTED


def test_siblings_are_compared_in_the_stored_order_and_the_pair_label_is_saved(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("compare", BRANCH_COMPARE, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    stored = Annotation.objects.get(project=project, user=alice).payload
    order = stored["branch_comparisons"]["root"]["shown_order"]
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    page.keyboard.press("Enter")  # open the root, the decision point

    replies = page.locator('[data-comparison="branch_compare"] [data-reply]')
    expect(replies).to_have_count(2)
    assert [replies.nth(index).get_attribute("data-reply") for index in range(2)] == order
    expect(replies.nth(0).locator(".reply-letter")).to_have_text("A")
    expect(page.locator("[data-pair] legend")).to_have_text("A compared with B")
    # Letters only: a reply's id (resp_a, resp_b) beside its letter would give the shuffle away.
    section = page.locator('[data-comparison="branch_compare"]')
    expect(section).not_to_contain_text("resp_")
    names = section.get_by_role("button").evaluate_all(
        "buttons => buttons.map(b => b.getAttribute('aria-label') || '')"
    )
    assert not any("resp_" in name for name in names), names

    page.keyboard.press("3")  # Worse, then changed to Better: one pair, the last label
    page.keyboard.press("1")
    expect(page.locator("[data-pair] input[value='Better']")).to_be_checked()
    expect_saved(page)

    payload = Annotation.objects.get(project=project, user=alice).payload
    assert payload == {
        "branch_comparisons": {
            "root": {"shown_order": order, "pairs": [{"a": order[0], "b": order[1], "label": "Better"}]}
        }
    }
    page.reload()
    page.keyboard.press("Enter")
    expect(page.locator("[data-pair] input[value='Better']")).to_be_checked()
    assert page.locator("[data-pair] legend").inner_text() == "A compared with B"


def test_message_text_is_shown_as_text_never_run_as_markup(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    text = "<img src=x onerror=\"document.title='owned'\"><b>bold?</b>"
    item = {
        "id": "xss",
        "tree": {
            "id": "root",
            "role": "user",
            "content": text,
            "children": [
                {
                    "id": "a",
                    "role": "assistant",
                    "content": "</script><script>document.title='owned'</script>",
                }
            ],
        },
    }
    project = project_over("hostile", RESPONSE_QUALITY, [item], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    expect(node(page, "root").locator(".node-text .markdown")).to_have_text(text)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    expect(page.locator("[data-panel-parent-text] .markdown")).to_have_text(text)
    expect(page.locator("[data-annotate] img, [data-annotate] b")).to_have_count(0)
    assert page.title() != "owned"
