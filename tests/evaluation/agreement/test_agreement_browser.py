"""The agreement page in a real browser: from the project page to the figures, a matrix of the
annotator pairs, and the same pairs as a table; a corpus's reference under its own heading.

Dana manages the projects; Ann, Ben and Cleo's answers were imported; Alice and Bob annotate a
CCPE dialogue whose corpus brings its spans.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from evaluation.agreement.project import agreement_current
from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_agreement_page import rated_project
from tests.evaluation.agreement.test_references import reference_project
from tests.test_csp_browser import axe_clean

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


def test_the_reference_reads_apart_from_the_annotators_at_either_width(
    live_server: Any, page: Page, sign_in: Any, tmp_path: Any
):
    """A CCPE project: Alice and Bob against the corpus's spans, under their own heading."""
    people = {name: person(name) for name in ("dana", "alice", "bob")}
    project = reference_project(people)
    sign_in(page, people["dana"])

    page.goto(live_server.url + reverse("evaluation:agreement", args=[project.name]))

    reference = page.locator("[data-reference]")
    expect(reference.get_by_role("heading", level=3)).to_contain_text("Against the reference")
    expect(reference.locator("[data-reference-annotator]")).to_have_count(2)
    expect(reference.locator("[data-reference-overall]")).to_contain_text("Overall (mean)")
    axe_clean(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        reference.screenshot(path=str(tmp_path / f"reference-{width}.png"))
        table = reference.locator("table").bounding_box()
        assert table is not None and table["x"] + table["width"] <= width  # no sideways scrolling
