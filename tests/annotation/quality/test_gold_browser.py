"""Gold checks and the training phase in a real browser.

Sam marks an item gold in the admin; Alice meets it among her work looking like any item
and gets no feedback on it; Maggie, who manages the project, finds Alice flagged on the
quality page. In a project with a training phase Alice first answers the training items,
seeing the expected answers and why after each one, and then gets her real work.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Assignment, Membership, Project, ProjectItem
from annotation.projects.services import membership_add, project_create
from annotation.quality.gold import gold_item_set
from tests.annotation.annotator_items import person
from tests.factories import ChainTreeFactory, DatasetFactory, StaffFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SENTIMENT = (
    "annotation_schemes:\n"
    "  - {annotation_type: radio, name: sentiment, description: 'How does the user feel?',"
    " labels: [positive, negative, neutral]}\n"
)


def project_of(name: str, quality: str, work: list[str], gold: list[str]) -> Project:
    dataset = DatasetFactory(name=f"{name}-trees")
    for external_id in gold + work:
        ChainTreeFactory(dataset=dataset, external_id=external_id)
    return project_create(name=name, dataset=dataset, config_yaml=SENTIMENT + quality)


def start(page: Page, live_server: Any, project: Project) -> None:
    page.goto(live_server.url + reverse("annotation:project", kwargs={"name": project.name}))
    page.get_by_role("button", name="Start annotating").click()
    ready(page)


def ready(page: Page) -> None:
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")


def item_id(page: Page) -> str:
    return page.locator(".annotate-title h1 code").inner_text()


def choose(page: Page, label: str) -> None:
    page.locator(f'[data-scheme="sentiment"] input[value="{label}"]').check()
    expect(page.locator("[data-save-status]")).to_have_text("All changes saved")


def submit_and_go_on(page: Page, label: str) -> str:
    """Answer the item shown and submit it; the id of the item that comes next ("" for none)."""
    shown = item_id(page)
    choose(page, label)
    page.get_by_role("button", name="Submit and next").click()
    page.wait_for_function(
        "shown => !document.querySelector('[data-annotate]') "
        "|| document.querySelector('.annotate-title h1 code').textContent !== shown",
        arg=shown,
    )
    if page.locator("[data-nothing-left]").count():
        return ""
    ready(page)
    return item_id(page)


def test_a_gold_item_marked_in_the_admin_is_checked_silently_and_its_misses_flag_the_annotator(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = project_of(
        "support-gold",
        "quality: {gold_rate: 0.5, min_gold_answers: 1, min_accuracy: 0.8}\n",
        ["w1", "w2"],
        ["g1"],
    )
    alice, maggie = person("alice"), person("maggie")
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    membership_add(project=project, user=maggie, role=Membership.Role.MANAGER)
    sam = StaffFactory(username="sam")
    sam.save(update_fields=["password"])
    item = ProjectItem.objects.get(project=project, tree__external_id="g1")

    # Sam gives g1 its expected answer in the admin.
    sign_in(page, sam)
    page.goto(live_server.url + reverse("admin:annotation_projectitem_change", args=[item.pk]))
    page.get_by_role("checkbox", name="Gold").check()
    page.get_by_label("Expected answers").fill('{"sentiment": "positive"}')
    page.get_by_label("Explanation").fill("The user thanks the agent.")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (True, {"sentiment": {"label": "positive"}})

    # Alice's second item is the gold check: it looks like the others, and says nothing after.
    page.context.clear_cookies()
    sign_in(page, alice)
    start(page, live_server, project)
    assert item_id(page) == "w1"
    assert submit_and_go_on(page, "positive") == "g1"
    expect(page.locator("[data-training]")).to_have_count(0)
    expect(page.get_by_role("button", name="Skip")).to_be_visible()
    assert submit_and_go_on(page, "negative") == "w2"
    expect(page.locator("[data-feedback]")).to_be_hidden()
    assert submit_and_go_on(page, "positive") == ""
    check = Assignment.objects.get(project=project, user=alice, tree=item.tree)
    assert (check.kind, check.gold_score) == ("gold", 0.0)

    # Maggie finds Alice flagged.
    page.context.clear_cookies()
    sign_in(page, maggie)
    page.goto(live_server.url + reverse("annotation:project", kwargs={"name": project.name}))
    page.get_by_role("link", name="Annotator quality (gold and training)").click()
    row = page.locator('[data-annotator="alice"]')
    expect(row).to_have_attribute("data-flagged", "")
    expect(row.locator("[data-accuracy]")).to_have_text("0%")
    expect(page.locator("[data-flagged-summary]")).to_contain_text("alice")


def test_training_shows_the_expected_answers_after_each_item_then_opens_the_real_work(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    project = project_of(
        "support-training", "quality: {training: {items: 2, pass_accuracy: 0.5}}\n", ["w1"], ["g1", "g2"]
    )
    for external_id, expected, why in (
        ("g1", "positive", "The user thanks the agent."),
        ("g2", "negative", "A complaint."),
    ):
        item = ProjectItem.objects.get(project=project, tree__external_id=external_id)
        gold_item_set(item=item, answers={"sentiment": expected}, explanation=why)
    alice = person("alice")
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    sign_in(page, alice)

    start(page, live_server, project)
    assert item_id(page) == "g1"
    expect(page.locator("[data-training]")).to_contain_text("Training · item 1 of 2")
    expect(page.get_by_role("button", name="Skip")).to_have_count(0)
    choose(page, "negative")
    page.keyboard.press("Control+Enter")

    feedback = page.locator("[data-feedback]")
    expect(feedback).to_be_visible()
    expect(feedback.get_by_role("heading", level=2)).to_have_text("Your score: 0%")
    row = feedback.locator('[data-feedback-scheme="sentiment"]')
    expect(row.locator("th")).to_have_text("How does the user feel?")
    expect(row.locator("[data-expected]")).to_have_text("positive")
    expect(row.locator("[data-given]")).to_have_text("negative")
    expect(feedback.locator("[data-feedback-explanation-text]")).to_have_text("The user thanks the agent.")
    expect(feedback.locator("[data-feedback-status]")).to_have_text("Training: 1 of 2 answered; 50% passes.")
    expect(page.get_by_role("button", name="Submit and next")).to_be_hidden()
    expect(page.locator('[data-scheme="sentiment"] input[value="positive"]')).to_be_disabled()
    next_button = feedback.get_by_role("button", name="Next item")
    expect(next_button).to_be_focused()
    page.keyboard.press("Enter")

    ready(page)
    assert item_id(page) == "g2"
    expect(page.locator("[data-training]")).to_contain_text("item 2 of 2")
    choose(page, "negative")
    page.get_by_role("button", name="Submit and next").click()
    expect(feedback.get_by_role("heading", level=2)).to_have_text("Your score: 100%")
    expect(feedback.locator("[data-feedback-status]")).to_have_text(
        "You passed the training (50%). The real work comes next."
    )
    feedback.get_by_role("button", name="Next item").click()

    ready(page)
    assert item_id(page) == "w1"
    expect(page.locator("[data-training]")).to_have_count(0)
    expect(page.get_by_role("button", name="Skip")).to_be_visible()
    assert [a.kind for a in Assignment.objects.filter(project=project, user=alice).order_by("pk")] == [
        "training",
        "training",
        "work",
    ]
