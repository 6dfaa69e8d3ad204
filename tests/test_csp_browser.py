"""Every kind of page runs under the site's Content-Security-Policy, enforced, and the
browser refuses nothing on any of them (the ``page`` fixture fails a test on any
refusal, tests/conftest.py).

The policy: ``default-src 'self'``, no inline scripts or styles, no plugins, no framing.
The pages: the login, the lockout page and a missing page; an annotator's project list,
the annotate page (tree rating, and spans with their coloured swatches), the collection
picker and a task; a manager's review list and an item side by side, the rubric report,
the agreement page; the admin (index, a tree with its outline, a project, the login
attempts); the API docs (Swagger UI and Redoc), which load nothing from elsewhere (an
air-gapped site has the same docs): not even the logo Redoc's sidebar asks of its CDN.

The pages whose markup changed for the policy are checked with axe-core too, at
1280 and 390 pixels.

The demo (``load_demo``): admin, annotator and annotator2; Sam annotates spans.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import Page, expect

from annotation.models import Project
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SPANS = """\
annotation_schemes:
  - annotation_type: span
    name: entities
    description: Entities
    labels:
      - {name: PRODUCT, color: "#2563eb"}
      - ORDER
"""


@pytest.fixture
def demo(db: Any) -> dict[str, Any]:
    call_command("load_demo", force=True, stdout=io.StringIO())
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    return {name: users.get(username=name) for name in ("admin", "annotator", "annotator2")}


def visit(page: Page, live_server: Any, path: str) -> None:
    page.goto(live_server.url + path)
    page.wait_for_load_state("networkidle")


def axe_clean(page: Page) -> None:
    """No accessibility violations, at the desktop width and at a phone's."""
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        results = Axe().run(page)
        assert results.violations_count == 0, f"{page.url} at {width}px:\n" + results.generate_report()
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_policy_is_enforced_on_every_response(live_server: Any, page: Page) -> None:
    response = page.goto(live_server.url + reverse("login"))

    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self';" in policy + ";"
    assert "style-src 'self';" in policy + ";"
    assert "unsafe-inline" not in policy


def test_the_login_the_lockout_and_a_missing_page(live_server: Any, page: Page) -> None:
    UserFactory(username="dora").save()

    visit(page, live_server, reverse("login"))
    axe_clean(page)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page.fill("#id_username", "dora")
        page.fill("#id_password", "wrong-guess")
        page.click("button[type=submit]")
        page.wait_for_load_state("networkidle")
    expect(page.locator("h1")).to_have_text("Login paused")
    expect(page.get_by_role("alert")).to_contain_text("logging in is paused for 15 minutes")
    axe_clean(page)

    visit(page, live_server, "/no/such/page")
    expect(page.locator("h1")).to_have_text("Not found")
    axe_clean(page)

    assert page.csp_refused == []


def test_an_annotators_pages(live_server: Any, page: Page, sign_in: Any, demo: dict[str, Any]) -> None:
    annotator = demo["annotator"]
    sam = person("sam")
    spans = project_over("spans", SPANS, [SEED_ITEM], [sam])
    held = item_next(project=spans, user=sam)
    draft_save(
        project=spans,
        tree=held.tree,
        user=sam,
        version=held.version,
        answers={
            "entities": {
                "spans": [
                    {"node": "user_2", "start": 5, "end": 16, "text": "ORDER-12345", "label": "ORDER"},
                    {"node": "user_2", "start": 5, "end": 10, "text": "ORDER", "label": "PRODUCT"},
                ]
            }
        },
    )
    sign_in(page, annotator)

    visit(page, live_server, reverse("annotation:projects"))
    visit(page, live_server, reverse("annotation:project", args=["demo-rating"]))
    page.get_by_role("button", name="Start annotating").click()
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")

    visit(page, live_server, reverse("collection:picker", args=["demo-collect"]))
    page.locator("form.lucky button").click()
    page.wait_for_load_state("networkidle")
    assert "/tasks/" in page.url

    page.context.clear_cookies()
    sign_in(page, sam)
    visit(page, live_server, reverse("annotation:item", kwargs={"name": "spans", "tree_id": held.tree_id}))
    expect(page.locator("[data-annotate]")).to_have_attribute("data-ready", "true")
    expect(page.locator("[data-span-list] .span-swatch")).to_have_count(2)

    assert page.csp_refused == []


def test_a_managers_pages_and_the_admin(
    live_server: Any, page: Page, sign_in: Any, demo: dict[str, Any]
) -> None:
    rating = Project.objects.get(name="demo-rating")
    for annotator in (demo["annotator"], demo["annotator2"]):
        held = item_next(project=rating, user=annotator)
        item_submit(
            project=rating,
            tree=held.tree,
            user=annotator,
            version=held.version,
            answers={
                "response_quality": {"node_annotations": {}, "selected_path": []},
                "overall": {"label": "Yes"},
            },
        )
    sign_in(page, demo["admin"])

    visit(page, live_server, reverse("annotation:review", args=["demo-rating"]))
    visit(page, live_server, reverse("annotation:review-item", args=["demo-rating", held.tree_id]))
    expect(page.locator(".review-message.review-depth-1").first).to_be_visible()
    axe_clean(page)
    visit(page, live_server, reverse("evaluation:report", args=["demo-scheduling", "scheduling"]))
    expect(page.locator("svg").first).to_be_visible()
    visit(page, live_server, reverse("evaluation:agreement", args=["demo-rating"]))

    visit(page, live_server, reverse("admin:index"))
    visit(page, live_server, reverse("admin:trees_conversationtree_change", args=[held.tree_id]))
    expect(page.locator("[data-tree-outline]")).to_be_visible()
    visit(page, live_server, reverse("admin:annotation_project_change", args=[rating.pk]))
    visit(page, live_server, reverse("admin:axes_accessattempt_changelist"))

    assert page.csp_refused == []


def test_the_api_docs_load_everything_from_the_site(live_server: Any, page: Page) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))

    visit(page, live_server, reverse("api-docs"))
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Branchpoint API")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()

    visit(page, live_server, reverse("api-redoc"))
    expect(page.get_by_role("heading", name="Branchpoint API")).to_be_visible()
    page.get_by_placeholder("Search...").fill("projects")
    # Redoc's worker indexes the whole schema before it answers: seconds on a loaded machine
    # (over 5 s with four browser workers on two cores).
    expect(page.locator("[data-role='search:results'] li").first).to_be_visible(timeout=30_000)
    # The sidebar's last line, whose logo Redoc asks of its CDN, has been drawn.
    expect(page.get_by_role("link", name="API docs by Redocly")).to_be_attached()
    page.wait_for_load_state("networkidle")

    elsewhere = [url for url in requested if not url.startswith((live_server.url, "blob:", "data:"))]
    assert elsewhere == []
    assert page.csp_refused == []


def test_the_admin_login_locks_out_with_the_admins_page(live_server: Any, page: Page) -> None:
    person("root", is_staff=True, is_superuser=True)

    visit(page, live_server, reverse("admin:login"))
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page.fill("#id_username", "root")
        page.fill("#id_password", PASSWORD)  # root has no usable password: every try fails
        page.click("input[type=submit]")
        page.wait_for_load_state("networkidle")

    expect(page.locator("#content h1")).to_have_text("Login paused")
    axe_clean(page)
    assert page.csp_refused == []
