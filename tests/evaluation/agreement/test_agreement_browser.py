"""The agreement page in a real browser: from the project page to the figures, a matrix of the
annotator pairs, and the same pairs as a table.

Dana manages the project; Ann, Ben and Cleo's answers were imported.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from evaluation.agreement.project import agreement_current
from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_agreement_page import rated_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_follows_the_project_link_and_reads_each_pair(live_server: Any, page: Page, sign_in: Any):
    people = {name: person(name) for name in ("dana", "erin", "alice")}
    project = rated_project("rated", people)
    sign_in(page, people["dana"])

    page.goto(live_server.url + reverse("annotation:project", args=[project.name]))
    page.get_by_role("link", name="Agreement").click()

    expect(page.get_by_role("heading", level=1)).to_contain_text("Agreement")
    rating = page.locator('[data-scheme="quality"] [data-field="rating"]')
    expect(rating.get_by_role("img", name="Cohen's kappa (quadratic weights): rating")).to_be_visible()
    pair = agreement_current(project).figures["schemes"][0]["fields"][0]["pairs"][0]
    expect(rating.locator(".heat-cell text").first).to_have_text(f"{pair['value']:.2f}")
    rows = rating.locator("[data-pairs] tbody tr")
    expect(rows.first).not_to_be_visible()
    rating.get_by_text("The pairs as a table").click()
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text(pair["shown"])
