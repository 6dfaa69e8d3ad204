"""Nothing lost by a stray key, nothing lost on leaving: the annotate page in a real browser.

- Submitted work opens read-only: keys change nothing until **Edit** (`e`); then the first
  change is saved to the submission as a new version, and accepted work goes back to review.
- Clearing the path (`c`), clearing a rating (`0`) and deleting a span can be undone with
  Ctrl+Z: a toast says what happened, with an Undo button, then "Undone: ...", and the
  restored answers are saved like any change.
- A change made just before leaving (a link, or another address typed in) is saved on the way
  out, and the page never asks "Leave site?" for it.

Alice annotates Potato's documented conversation (root → resp_a → user_2, root → resp_b).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from django.db import OperationalError
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Assignment, Project
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_answers, item_submit
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.test_csp_browser import axe_clean

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parents[2] / "artifacts")
RATED_PATH = {
    "response_quality": {
        "node_annotations": {"resp_a": {"rating": 4}},
        "selected_path": ["root", "resp_a", "user_2"],
    }
}
SPANS = (
    "annotation_schemes:\n  - annotation_type: span\n    name: issues\n"
    "    description: Mark the problems and requests\n    labels: [problem, request]\n"
)


def item_url(live_server: Any, project: Project, tree_id: int) -> str:
    return live_server.url + reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})


def open_item(page: Page, live_server: Any, project: Project, tree_id: int) -> None:
    page.goto(item_url(live_server, project, tree_id))
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def node(page: Page, node_id: str) -> Any:
    return page.locator(f'.node[data-id="{node_id}"]')


def path_steps(page: Page) -> list[str | None]:
    steps = page.locator('[data-path="response_quality"] [data-step]')
    return [steps.nth(i).get_attribute("data-step") for i in range(steps.count())]


def expect_saved(page: Page) -> None:
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


def screenshots(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def eventually(check: Any, seconds: float = 10) -> None:
    """Wait until ``check()`` holds: for what the browser sends as it leaves, unseen by the test."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except OperationalError:  # SQLite's in-memory test database: a table locked by the server's write
            pass
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def answers_of(project: Project, held: Assignment, user: Any) -> dict[str, Any]:
    return item_answers(project=project, tree=held.tree_id, user=user).payloads


def test_submitted_work_opens_read_only_and_c_changes_nothing_until_edit(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice], reviewers=[rita])
    held = item_next(project=project, user=alice)
    held = item_submit(
        project=project, tree=held.tree_id, user=alice, answers=RATED_PATH, version=held.version
    )
    review_decide(reviewer=rita, assignment=held, decision="accepted", version=held.version)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    notice = page.locator("[data-read-only]")
    expect(notice).to_contain_text("You submitted this item, so it is shown read-only")
    expect(page.locator("[data-accepted]")).to_contain_text("it goes back to review")
    expect(page.locator("[data-submit]")).to_be_hidden()
    expect(page.locator("[data-path-bars] button").first).to_be_disabled()
    page.keyboard.press("c")
    page.keyboard.press("Backspace")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("2")
    page.keyboard.press("0")
    expect(page.locator("[data-flash]")).to_contain_text("press e")
    assert path_steps(page) == ["root", "resp_a", "user_2"]
    expect(page.locator("[data-panel-widgets] input[value='4']")).to_be_checked()
    expect(page.locator("[data-panel-widgets] input").first).to_be_disabled()
    expect(page.locator("[data-toast]")).to_be_empty()
    screenshots(page, "annotate-read-only")
    axe_clean(page)
    page.keyboard.press("Control+z")
    page.wait_for_timeout(800)  # longer than a draft's pause: nothing was sent
    assert answers_of(project, held, alice) == RATED_PATH
    assert Assignment.objects.get(pk=held.pk).version == held.version

    page.keyboard.press("e")
    expect(page.locator("[data-edit]")).to_be_hidden()
    expect(notice).to_contain_text("You are editing your submitted item")
    expect(page.locator("[data-submit]")).to_be_visible()
    expect(page.locator("[data-panel-widgets] input").first).to_be_enabled()
    screenshots(page, "annotate-editing")
    axe_clean(page)
    page.keyboard.press("c")
    assert path_steps(page) == []
    expect_saved(page)

    after = Assignment.objects.get(pk=held.pk)
    assert answers_of(project, held, alice)["response_quality"]["selected_path"] == []
    assert (after.status, after.version) == (Assignment.Status.SUBMITTED, held.version + 1)
    assert (
        after.review_status == Assignment.ReviewStatus.UNREVIEWED
    )  # changed accepted work goes back to review

    # Reopened, the item is read-only again.
    open_item(page, live_server, project, held.tree_id)
    expect(page.locator("[data-edit]")).to_be_visible()


def test_work_sent_back_opens_editable(live_server: Any, page: Page, sign_in: Any) -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice], reviewers=[rita])
    held = item_next(project=project, user=alice)
    held = item_submit(
        project=project, tree=held.tree_id, user=alice, answers=RATED_PATH, version=held.version
    )
    review_decide(
        reviewer=rita, assignment=held, decision="rejected", comment="Look again.", version=held.version
    )
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    expect(page.locator("[data-returned]")).to_be_visible()
    expect(page.locator("[data-read-only]")).to_have_count(0)
    page.keyboard.press("c")
    assert path_steps(page) == []
    expect_saved(page)


def test_ctrl_z_restores_a_cleared_path_and_a_cleared_rating(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    draft_save(project=project, tree=held.tree_id, user=alice, answers=RATED_PATH, version=held.version)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    toast = page.locator("[data-toast]")

    page.keyboard.press("c")
    assert path_steps(page) == []
    expect(toast).to_have_attribute("role", "status")
    expect(toast).to_have_attribute("aria-live", "polite")
    expect(toast).to_contain_text("Path cleared — Undo")
    expect_saved(page)
    assert answers_of(project, held, alice)["response_quality"]["selected_path"] == []
    page.keyboard.press("Control+z")
    expect(toast).to_have_text("Undone: path cleared")
    assert path_steps(page) == ["root", "resp_a", "user_2"]
    expect(node(page, "user_2")).to_have_class(re.compile(r"\bin-path\b"))
    expect_saved(page)
    assert answers_of(project, held, alice) == RATED_PATH

    # The rating of resp_a, cleared with 0, comes back with the toast's Undo button.
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("0")
    expect(page.locator("[data-panel-widgets] input:checked")).to_have_count(0)
    expect(toast).to_contain_text("Rating of resp_a cleared — Undo")
    expect_saved(page)
    assert answers_of(project, held, alice)["response_quality"]["node_annotations"] == {}
    screenshots(page, "annotate-undo-toast")
    axe_clean(page)
    toast.get_by_role("button", name="Undo").click()
    expect(toast).to_have_text("Undone: rating of resp_a cleared")
    expect(page.locator("[data-panel-widgets] input[value='4']")).to_be_checked()
    expect_saved(page)
    assert answers_of(project, held, alice) == RATED_PATH
    # Nothing left to undo: Ctrl+Z does nothing.
    page.keyboard.press("Control+z")
    assert path_steps(page) == ["root", "resp_a", "user_2"]


def test_ctrl_z_restores_a_deleted_span(live_server: Any, page: Page, sign_in: Any) -> None:
    alice = person("alice")
    project = project_over("orders", SPANS, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    text = SEED_ITEM["tree"]["children"][1]["content"]  # resp_b: "Sure, what seems to be the problem?"
    start = text.index("problem")
    span = {
        "node": "resp_b",
        "start": start,
        "end": start + 7,
        "text": "problem",
        "label": "problem",
        "attributes": {},
    }
    draft_save(
        project=project,
        tree=held.tree_id,
        user=alice,
        answers={"issues": {"spans": [span]}},
        version=held.version,
    )
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    page.get_by_role("button", name="Delete problem").click()
    expect(page.locator("[data-span-list] [data-span]")).to_have_count(0)
    expect(page.locator("[data-toast]")).to_contain_text("Span deleted — Undo")
    expect_saved(page)
    assert answers_of(project, held, alice)["issues"] == {"spans": []}
    page.keyboard.press("Control+z")
    expect(page.locator("[data-toast]")).to_have_text("Undone: span deleted")
    expect(page.locator("[data-span-list] [data-span]")).to_have_count(1)
    expect(node(page, "resp_b").locator("[data-spans]")).to_have_count(1)
    expect_saved(page)
    assert answers_of(project, held, alice)["issues"] == {"spans": [span]}


@pytest.mark.parametrize("leave", ["link", "goto"])
def test_rating_then_leaving_at_once_keeps_the_rating_without_asking(
    live_server: Any, page: Page, sign_in: Any, leave: str
) -> None:
    alice = person("alice")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    dialogs: list[str] = []

    def answer(dialog: Any) -> None:
        dialogs.append(dialog.type)
        dialog.accept()

    page.on("dialog", answer)

    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("4")  # its draft waits 0.6 s, and the page is left at once
    expect(page.locator("[data-save-status]")).to_have_text("Unsaved changes…")
    project_page = live_server.url + reverse("annotation:project", kwargs={"name": project.name})
    if leave == "link":
        page.locator(".annotate-title h1 a").click()  # waits for the draft, then navigates
        page.wait_for_url(project_page)
        expect(page.locator("h1")).to_contain_text("support")
    else:
        # Another address: the draft goes with keepalive as the page unloads, and the browser
        # reports nothing of it, so the test waits for the server to have it. The address is not
        # this site's: the in-memory SQLite test database serves one writer and no readers at once.
        page.goto("about:blank")
        eventually(lambda: answers_of(project, held, alice).get("response_quality"))

    open_item(page, live_server, project, held.tree_id)
    expect(node(page, "resp_a").locator('[data-mark="response_quality"]')).to_have_text("rated 4")
    assert answers_of(project, held, alice)["response_quality"]["node_annotations"] == {
        "resp_a": {"rating": 4}
    }
    assert dialogs == []


def test_the_page_asks_before_leaving_only_when_a_save_failed(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    dialogs: list[str] = []

    def answer(dialog: Any) -> None:
        dialogs.append(dialog.type)
        dialog.accept()

    page.on("dialog", answer)
    refusal = {"code": "invalid", "message": "the server refused", "errors": [{"path": "x", "message": "no"}]}
    page.route("**/draft", lambda route: route.fulfill(status=400, json=refusal))

    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.keyboard.press("4")
    expect(page.locator("[data-save-status]")).to_have_text("Not saved.")
    expect(page.locator("[data-errors]")).to_be_visible()
    page.goto(live_server.url + reverse("annotation:project", kwargs={"name": project.name}))

    assert dialogs == ["beforeunload"]


def test_edit_makes_a_widget_files_widgets_editable_too(live_server: Any, page: Page, sign_in: Any) -> None:
    alice = person("alice")
    project = project_over("orders", SPANS, [SEED_ITEM], [alice])
    held = item_next(project=project, user=alice)
    text = SEED_ITEM["tree"]["children"][1]["content"]
    start = text.index("problem")
    span = {
        "node": "resp_b",
        "start": start,
        "end": start + 7,
        "text": "problem",
        "label": "problem",
        "attributes": {},
    }
    item_submit(
        project=project,
        tree=held.tree_id,
        user=alice,
        answers={"issues": {"spans": [span]}},
        version=held.version,
    )
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    delete = page.get_by_role("button", name="Delete problem")
    expect(delete).to_be_disabled()

    page.get_by_role("button", name="Edit").click()
    expect(delete).to_be_enabled()
    expect(node(page, "resp_b").locator("[data-spans]")).to_have_count(1)  # drawn again, not twice
    delete.click()
    expect_saved(page)
    assert answers_of(project, held, alice)["issues"] == {"spans": []}
