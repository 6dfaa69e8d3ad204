"""Gold from the review page in Chromium, by keyboard: Maggie, a manager, makes Alice's answer
the gold answer of an item that already had another, sees which one it replaced, and undoes
it — all without the mouse and without the page's script doing any of it (plain form posts).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import ProjectItem
from annotation.quality.gold import gold_item_set
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.annotation.review.test_review_pages import ALICE_ANSWERS, BOB_ANSWERS, CONFIG, submit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_replaces_the_gold_answer_and_undoes_it_by_keyboard(
    live_server: Any, page: Page, sign_in: Any
) -> None:
    alice, bob, maggie = person("alice"), person("bob"), person("maggie")
    project = project_over("support", CONFIG, [SEED_ITEM], [alice, bob], managers=[maggie])
    work = submit(project, alice, ALICE_ANSWERS)
    submit(project, bob, BOB_ANSWERS)
    item = ProjectItem.objects.get(project=project, tree_id=work.tree_id)
    gold_item_set(item=item, answers={"overall": "Unhelpful"})
    sign_in(page, maggie)
    page.goto(live_server.url + reverse("annotation:review-item", args=[project.name, work.tree_id]))
    expect(page.locator("[data-gold-answers]")).to_contain_text("overall Unhelpful")

    mark = page.get_by_role("button", name="Make alice's answer the gold answer")
    mark.focus()
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile("#gold$"))
    done = page.locator("[data-gold-done]")
    expect(done).to_contain_text("alice's answer is now the gold answer of conv_001.")
    expect(done.locator("[data-gold-replaced]")).to_have_text("overall Unhelpful")
    expect(page.locator("[data-gold-answers]")).to_contain_text("overall Helpful")
    expect(page.locator('[data-column="alice"] [data-gold-same]')).to_be_visible()

    page.get_by_role("button", name="Undo: restore them").focus()
    page.keyboard.press("Enter")

    expect(page.get_by_role("status").filter(has_text="Undone")).to_have_text(
        "Undone: the gold of conv_001 is back as it was."
    )
    expect(page.locator("[data-gold-answers]")).to_have_text("overall Unhelpful")
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (True, {"overall": {"label": "Unhelpful"}})
