"""One tree grown in a real browser, from prompt to ready_for_export, by five people
signed in at once, with the keyboard where it matters.

Alice writes the prompt; Bob reviews it; Bob and Carol reply as the
assistant; Dave reviews both replies through "I'm feeling lucky"; Erin ranks
them by moving one with Alt+ArrowDown. Each message needs one review and the
replies one ranking, so seven tasks finish the tree.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from annotation.collection.models import Task
from tests.annotation.collection.collect import collect_project, fresh, person, state

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def tab(browser: Any, live_server: Any, sign_in: Any, user: Any) -> Page:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, user)
    return page


def picker(page: Page, live_server: Any, project: Any) -> None:
    page.goto(f"{live_server.url}/collect/{project.name}/")
    expect(page.locator("[data-picker]")).to_be_visible()


def start(page: Page, task_type: str) -> None:
    page.locator(f'[data-task-type="{task_type}"] button').click()
    expect(page.locator("[data-task]")).to_have_attribute("data-ready", "true")


def thanked(page: Page) -> None:
    expect(page.locator(".message-success")).to_contain_text("Thank you!")


def test_five_people_grow_a_tree_to_ready_for_export(browser: Any, live_server: Any, sign_in: Any) -> None:
    alice, bob, carol, dave, erin = (person(name) for name in ("alice", "bob", "carol", "dave", "erin"))
    project = collect_project(
        [alice, bob, carol, dave, erin],
        goal_tree_size=3,
        num_reviews_initial_prompt=1,
        num_reviews_reply=1,
        num_required_rankings=1,
        max_active_trees=1,
        max_initial_prompt_review=0,
    )
    pages = {
        user.username: tab(browser, live_server, sign_in, user) for user in (alice, bob, carol, dave, erin)
    }

    # Alice writes the prompt and submits it with Ctrl+Enter.
    page = pages["alice"]
    picker(page, live_server, project)
    expect(page.locator('[data-task-type="initial_prompt"] [data-count]')).to_have_text("1")
    start(page, "initial_prompt")
    page.locator("[data-text]").fill("How do I keep basil alive on a windowsill?")
    page.keyboard.press("Control+Enter")
    thanked(page)
    root = Task.objects.get(user=alice).created_message
    assert state(root) == "initial_prompt_review"

    # Bob reviews it: not spam.
    page = pages["bob"]
    picker(page, live_server, project)
    start(page, "label_initial_prompt")
    expect(page.locator(".turn-judged")).to_contain_text("basil alive on a windowsill")
    page.locator('[data-label="spam"] input[value="0"]').check()
    page.locator('[data-label="quality"] input[value="1.0"]').check()
    page.locator("[data-submit]").click()
    thanked(page)
    # Accepted; back on the picker, whose counts run the prompt lottery first: it grows.
    assert (fresh(root).review_result, state(root)) == (True, "growing")

    # Bob and Carol answer it as the assistant.
    for name, text in (("bob", "Water it when the top soil is dry."), ("carol", "Give it six hours of sun.")):
        page = pages[name]
        picker(page, live_server, project)
        start(page, "assistant_reply")
        expect(page.locator(".conversation .turn-user")).to_contain_text("basil alive")
        page.locator("[data-text]").fill(text)
        page.locator("[data-submit]").click()
        thanked(page)
    assert state(root) == "growing"

    # Dave reviews both replies; "I'm feeling lucky" has nothing else to draw.
    page = pages["dave"]
    for _ in range(2):
        picker(page, live_server, project)
        page.locator('button[data-type="random"]').click()
        expect(page.locator("[data-task]")).to_have_attribute("data-task-type", "label_assistant_reply")
        page.locator('[data-label="spam"] input[value="0"]').check()
        page.locator("[data-submit]").click()
        thanked(page)
    assert state(root) == "ranking"

    # Erin ranks them: the first one shown goes down to second place with Alt+ArrowDown.
    page = pages["erin"]
    picker(page, live_server, project)
    start(page, "rank_assistant_replies")
    items = page.locator("[data-reply]")
    expect(items).to_have_count(2)
    shown = [items.nth(i).get_attribute("data-reply") for i in range(2)]
    items.nth(0).focus()
    page.keyboard.press("Alt+ArrowDown")
    expect(items.nth(1)).to_have_attribute("data-reply", shown[0])
    expect(items.nth(0).locator(".rank-position")).to_have_text("1")
    page.keyboard.press("Control+Enter")
    thanked(page)

    assert state(root) == "ready_for_export"
    ranks = {message.external_id: message.rank for message in fresh(root).children.all()}
    assert ranks == {shown[1]: 0, shown[0]: 1}
    for page in pages.values():
        page.context.close()
