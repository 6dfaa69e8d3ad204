"""Messages render as safe Markdown on every page that shows them, in a real browser
(issue 18: "safe Markdown everywhere a message is shown").

Alice asks how to total rows; the assistant's reply has a fenced Python block, a table,
a bulleted and a numbered list, inline code and a link. Mallory's message holds
``<script>``, an ``<img onerror>``, ``javascript:`` links (written and as an autolink)
and an image pointing elsewhere.

- On the annotate page (tree rows and the open message's panel), the review page, the
  collection's review and rank tasks and the admin's tree preview: the Python block
  keeps its indentation in a ``<pre>``, the table is a ``<table>``, the lists are
  ``<ul>`` and ``<ol>``.
- Mallory's message stays inert: no dialog opens, the browser asks nothing of any other
  host, and no script, image or ``javascript:`` link reaches the page.
- "Show source" (a toggle button, ``aria-pressed``, named for its message, worked from the
  keyboard; in the tree's rows a Tab stop while its row is the current one) shows the exact text, whitespace kept, and "pressed" again the rendering.
- In span mode the messages are plain text: a span labelled over Markdown syntax is
  stored with offsets into the text itself (``text[start:end]`` is the span's text).
- axe-core finds no serious or critical violation on these pages (but the admin's,
  where axe's own probes add inline styles the admin's policy refuses), at 1280 and 390
  pixels; each page's screenshot at both widths is written to the test artifacts
  (``BRANCHPOINT_ARTIFACTS``, by default ``tests/artifacts/``, which git ignores).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import Locator, Page, expect

from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_next
from annotation.work.assignment import item_next
from annotation.work.submissions import item_answers, item_submit
from tests.annotation.annotator_items import person, project_over, trees_import
from tests.annotation.collection.collect import NOT_SPAM, collect_project, prompt, reply, review, state
from tests.annotation.schemes.test_spans_browser import expect_saved, open_item, select_text

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(os.environ.get("BRANCHPOINT_ARTIFACTS") or Path(__file__).resolve().parent / "artifacts")
CODE = 'def total(rows):\n    if not rows:\n        return 0\n    return sum(row["n"] for row in rows)\n'
REPLY = f"""Here is a function that adds the `n` of each row:

```python
{CODE}```

| rows | total |
|------|------:|
| none | 0 |
| two  | 5 |

- it skips empty input
- it reads [the docs](https://docs.python.org/3/library/functions.html#sum)

1. call it
2. print the result
"""
HOSTILE = """Look: <script>alert("script")</script> and <img src=x onerror=alert("img")>

[click me](javascript:alert("link")) <javascript:alert("autolink")>

![pixel](https://tracker.invalid/pixel.png)
"""
LABELLER = "annotation_schemes:\n  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}\n"
SPANS = "annotation_schemes:\n  - annotation_type: span\n    name: marks\n    description: Marks\n    labels: [syntax, code]\n"
ITEM = {
    "id": "totals",
    "tree": {
        "id": "q",
        "role": "user",
        "content": "How do I total my rows?",
        "children": [
            {"id": "a", "role": "assistant", "content": REPLY},
            {"id": "m", "role": "user", "content": HOSTILE},
        ],
    },
}


class Watch:
    """What a tab did that a message must never make it do: open a dialog, or ask another host."""

    def __init__(self, page: Page, live_server: Any) -> None:
        self.dialogs: list[str] = []
        self.elsewhere: list[str] = []

        def dialog(opened: Any) -> None:
            self.dialogs.append(opened.message)
            opened.dismiss()

        def request(sent: Any) -> None:
            if not sent.url.startswith(live_server.url):
                self.elsewhere.append(sent.url)

        page.on("dialog", dialog)
        page.on("request", request)

    def assert_inert(self, page: Page) -> None:
        page.wait_for_load_state("networkidle")
        assert self.dialogs == []
        assert self.elsewhere == []
        hostile = page.locator(
            ".markdown script, .markdown img, .markdown [onerror], .markdown a[href^='javascript']"
        )
        expect(hostile).to_have_count(0)


def expect_rendered(body: Locator) -> None:
    """``body`` (a message's .markdown) shows the reply as Markdown: code, table, lists."""
    assert body.locator("pre").inner_text() == CODE
    expect(body.locator("pre code.language-python")).to_have_count(1)
    expect(body.locator("table tr")).to_have_count(3)
    expect(body.locator("table td.align-right").first).to_have_text("0")
    expect(body.locator("ul > li")).to_have_count(2)
    expect(body.locator("ol > li")).to_have_count(2)
    expect(body.locator("p code").first).to_have_text("n")
    link = body.locator("a")
    expect(link).to_have_attribute("rel", "noopener nofollow ugc")


def screenshots(page: Page, name: str) -> None:
    """The page at a desktop's width and a phone's, whole, into the artifacts."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"markdown-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def axe_clean(page: Page) -> None:
    """No serious or critical accessibility violation, at the desktop width and at a phone's."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        results = Axe().run(page)
        grave = [
            violation
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        assert grave == [], f"{page.url} at {width}px:\n" + results.generate_report()
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_annotate_page_renders_replies_and_keeps_hostile_markdown_inert(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("totals", LABELLER, [ITEM], [alice])
    held = item_next(project=project, user=alice)
    watch = Watch(page, live_server)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)

    expect_rendered(page.locator('[role="treeitem"][data-id="a"] .markdown'))
    page.locator('[role="treeitem"][data-id="m"] .node-head').click()
    panel = page.locator("[data-panel-text]")
    expect(panel.locator(".markdown")).to_contain_text('<script>alert("script")</script>')
    page.locator('[role="treeitem"][data-id="a"] .node-head').click()
    expect_rendered(panel.locator(".markdown"))
    watch.assert_inert(page)
    screenshots(page, "annotate")
    axe_clean(page)


def test_show_source_shows_the_exact_text_from_the_keyboard(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice = person("alice")
    project = project_over("totals", LABELLER, [ITEM], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    toggle = page.locator("[data-panel-text] [data-message-source-toggle]")
    expect(toggle).to_have_attribute("aria-label", "Show source of message a")
    expect(toggle).to_have_attribute("aria-pressed", "false")

    toggle.focus()
    page.keyboard.press("Enter")

    expect(toggle).to_have_attribute("aria-pressed", "true")
    source = page.locator("[data-panel-text] [data-message-source]")
    assert source.inner_text() == REPLY
    expect(page.locator("[data-panel-text] .markdown")).to_be_hidden()
    page.keyboard.press("Space")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(source).to_be_hidden()
    expect(page.locator("[data-panel-text] .markdown")).to_be_visible()
    # A row's toggle is a stop of the Tab key while its row is the current one, as its other buttons.
    expect(page.locator('[role="treeitem"][data-id="q"] [data-message-source-toggle]')).to_have_attribute(
        "tabindex", "-1"
    )
    row_toggle = page.locator('[role="treeitem"][data-id="a"] [data-message-source-toggle]')
    expect(row_toggle).to_have_attribute("tabindex", "0")
    row_toggle.click()
    assert page.locator('[role="treeitem"][data-id="a"] [data-message-source]').inner_text() == REPLY
    expect(page.locator("[data-panel]")).to_be_visible()


def test_the_review_page_renders_replies_and_keeps_hostile_markdown_inert(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, maggie = person("alice"), person("maggie")
    tree_config = (
        "annotation_schemes:\n  - annotation_type: tree_annotation\n    name: judged\n    description: Judged\n"
        "    node_scheme: {annotation_type: likert, size: 5, min_label: Poor, max_label: Excellent}\n"
    )
    project = project_over("totals", tree_config, [ITEM], [alice], managers=[maggie])
    held = item_next(project=project, user=alice)
    item_submit(
        project=project,
        tree=held.tree,
        user=alice,
        answers={"judged": {"node_annotations": {"a": {"rating": 5}}}},
        version=held.version,
    )
    watch = Watch(page, live_server)
    sign_in(page, maggie)

    page.goto(
        live_server.url
        + reverse("annotation:review-item", kwargs={"name": project.name, "tree_id": held.tree_id})
    )

    expect_rendered(page.locator('tr[data-row="a"] .markdown'))
    expect(page.locator('tr[data-row="m"] .markdown')).to_contain_text("<script>")
    toggle = page.locator('tr[data-row="a"] [data-message-source-toggle]')
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "true")
    assert page.locator('tr[data-row="a"] [data-message-source]').inner_text() == REPLY
    toggle.click()
    expect(page.locator('tr[data-row="a"] [data-message-source]')).to_be_hidden()
    watch.assert_inert(page)
    screenshots(page, "review")
    axe_clean(page)


@pytest.fixture
def grown() -> dict[str, Any]:
    """A collect project whose prompt has Bob's Markdown reply and Mallory's hostile one."""
    alice, bob, mallory, dave, erin = (person(name) for name in ("alice", "bob", "mallory", "dave", "erin"))
    project = collect_project(
        [alice, bob, mallory, dave, erin],
        goal_tree_size=3,
        num_reviews_initial_prompt=1,
        num_reviews_reply=1,
        num_required_rankings=1,
        max_active_trees=1,
        max_initial_prompt_review=0,
    )
    root = prompt(project, alice, "How do I total my rows?")
    review(project, [bob], root)
    return {
        "project": project,
        "root": root,
        "good": reply(project, bob, root, REPLY),
        "hostile": reply(project, mallory, root, HOSTILE),
        "dave": dave,
        "erin": erin,
    }


def task_page(page: Page, live_server: Any, project: Any, task: Any) -> None:
    page.goto(live_server.url + reverse("collection:task", kwargs={"name": project.name, "task_id": task.pk}))
    expect(page.locator("[data-task]")).to_be_visible()


def test_the_collection_review_task_renders_the_reply(
    live_server: Any, page: Page, sign_in: Any, grown: dict[str, Any]
) -> None:
    project, dave = grown["project"], grown["dave"]
    task = task_next(project=project, user=dave, task_type="label_assistant_reply", message=grown["good"])
    watch = Watch(page, live_server)
    sign_in(page, dave)

    task_page(page, live_server, project, task)

    expect_rendered(page.locator(f'[data-message="{grown["good"].external_id}"] .markdown'))
    watch.assert_inert(page)
    screenshots(page, "collection-review")
    axe_clean(page)


def test_the_collection_rank_task_renders_the_replies_and_keeps_hostile_markdown_inert(
    live_server: Any, page: Page, sign_in: Any, grown: dict[str, Any]
) -> None:
    project, root, erin = grown["project"], grown["root"], grown["erin"]
    for message in (grown["good"], grown["hostile"]):
        task = task_next(
            project=project, user=grown["dave"], task_type="label_assistant_reply", message=message
        )
        task_submit(project=project, task_id=task.pk, user=grown["dave"], data={"labels": NOT_SPAM})
    assert state(root) == "ranking"
    task = task_next(project=project, user=erin, task_type="rank_assistant_replies", message=root)
    watch = Watch(page, live_server)
    sign_in(page, erin)

    task_page(page, live_server, project, task)

    expect_rendered(page.locator(f'[data-reply="{grown["good"].external_id}"] .markdown'))
    expect(page.locator(f'[data-reply="{grown["hostile"].external_id}"] .markdown')).to_contain_text(
        '<img src=x onerror=alert("img")>'
    )
    watch.assert_inert(page)
    screenshots(page, "collection-rank")
    axe_clean(page)


def test_span_offsets_stay_exact_over_markdown_syntax(live_server: Any, page: Page, sign_in: Any) -> None:
    alice = person("alice")
    text = "Use **`sum(rows)`** and\n\n    indented *code*"
    item = {"id": "spans", "tree": {"id": "q", "role": "user", "content": text}}
    project = project_over("marked", SPANS, [item], [alice])
    held = item_next(project=project, user=alice)
    sign_in(page, alice)
    open_item(page, live_server, project, held.tree_id)
    expect(page.locator('.node[data-id="q"] .node-text')).to_have_text(text)
    expect(page.locator(".node .markdown")).to_have_count(0)
    start = text.index("**`")

    select_text(page, "q", start, start + len("**`sum(rows)`**"))
    page.keyboard.press("1")
    expect_saved(page)

    [span] = item_answers(project=project, tree=held.tree, user=alice).payloads["marks"]["spans"]
    assert (span["start"], span["end"], span["text"]) == (start, start + 15, "**`sum(rows)`**")
    assert text[span["start"] : span["end"]] == span["text"]


def test_the_admin_tree_preview_renders_replies_and_keeps_hostile_markdown_inert(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    root = person("root", is_staff=True, is_superuser=True)
    [tree] = trees_import("preview", [ITEM])
    watch = Watch(page, live_server)
    sign_in(page, root)

    page.goto(live_server.url + reverse("admin:trees_conversationtree_change", args=[tree.pk]))

    expect_rendered(page.locator('[data-external-id="a"] .markdown'))
    expect(page.locator('[data-external-id="m"] .markdown')).to_contain_text("<script>")
    page.locator('[data-external-id="m"] [data-message-source-toggle]').click()
    assert page.locator('[data-external-id="m"] [data-message-source]').inner_text() == HOSTILE
    watch.assert_inert(page)
    screenshots(page, "admin-tree")
