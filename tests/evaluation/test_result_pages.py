"""From a report's figures to the conversations behind them.

- Each outcome's count on the report links to the results with that outcome, and each
  criterion's passes and failures to the results where it holds or does not.
- The results page lists exactly those results, each leading to the item's review page, a
  page at a time, for the same people as the report, in constant queries.
- A parameter it does not understand is named, with a 400.

Personas: Dana manages the project, Alice annotates it.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from evaluation import selectors
from evaluation.models import Rubric
from evaluation.services import project_evaluate
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CONVERSATIONS, EXPECTED, scheduling_project

pytestmark = pytest.mark.django_db

REPORT = reverse("evaluation:report", args=["scheduling", "scheduling"])
RESULTS = reverse("evaluation:results", args=["scheduling", "scheduling"])


@pytest.fixture
def dana() -> Any:
    return person("dana")


@pytest.fixture
def project(dana: Any) -> Any:
    project = scheduling_project(managers=[dana], annotators=[person("alice")])
    project_evaluate(project=project, rubric=Rubric.objects.get(name="scheduling"))
    return project


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def listed(html: str) -> list[str]:
    return re.findall(r'<tr data-tree="([^"]+)">', html)


def links(html: str) -> list[str]:
    return [
        href.replace("&amp;", "&")
        for href in re.findall(r'href="(/projects/scheduling/rubrics/scheduling/results/[^"]+)"', html)
    ]


def test_each_outcome_on_the_report_leads_to_its_conversations(project: Any, dana: Any) -> None:
    client = as_user(dana)
    report = client.get(REPORT).content.decode()
    outcomes = {outcome for expected in EXPECTED.values() for outcome in [expected["outcome"]]}

    followed = {}
    for href in links(report):
        if "outcome=" in href:
            outcome = href.rsplit("outcome=", 1)[1]
            followed[outcome] = listed(client.get(href).content.decode())

    assert set(followed) == outcomes
    for outcome, trees in followed.items():
        assert trees == sorted(tree for tree, expected in EXPECTED.items() if expected["outcome"] == outcome)


@pytest.mark.parametrize("holds", ["yes", "no"])
def test_each_criterion_leads_to_where_it_holds_and_where_it_does_not(
    project: Any, dana: Any, holds: str
) -> None:
    client = as_user(dana)
    report = client.get(REPORT).content.decode()

    for href in links(report):
        if f"holds={holds}" not in href:
            continue
        key = re.search(r"key=([a-z_]+)", href).group(1)
        trees = listed(client.get(href).content.decode())
        assert trees == sorted(
            tree for tree, expected in EXPECTED.items() if expected["details"][key] is (holds == "yes")
        ), key


def test_each_result_leads_to_the_items_review_page(project: Any, dana: Any) -> None:
    html = as_user(dana).get(RESULTS, {"outcome": "successful_completion"}).content.decode()

    hrefs = re.findall(r'<th scope="row"><a href="([^"]+)">', html)
    assert hrefs
    for href in hrefs:
        assert as_user(dana).get(href).status_code == 200


def test_results_come_a_page_at_a_time(project: Any, dana: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(selectors, "RESULTS_PER_PAGE", 3)
    monkeypatch.setattr("evaluation.result_pages.RESULTS_PER_PAGE", 3)
    client = as_user(dana)

    pages = [listed(client.get(RESULTS, {"page": number}).content.decode()) for number in (1, 2, 3)]

    assert [len(page) for page in pages] == [3, 3, len(CONVERSATIONS) - 6]
    assert [tree for page in pages for tree in page] == sorted(EXPECTED)
    assert 'rel="next"' in client.get(RESULTS, {"page": 1}).content.decode()


def test_the_results_are_for_the_same_people_as_the_report(project: Any) -> None:
    alice = get_user_model().objects.get(username="alice")

    assert as_user(alice).get(RESULTS).status_code == 403
    assert as_user(person("oscar")).get(RESULTS).status_code == 404


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"outcome": "nowhere"}, "outcome"),
        ({"key": "nothing"}, "key"),
        ({"key": "correct_time", "holds": "maybe"}, "holds"),
    ],
)
def test_a_parameter_not_understood_is_named(project: Any, dana: Any, params: dict, named: str) -> None:
    response = as_user(dana).get(RESULTS, params)

    assert response.status_code == 400
    assert f"<code>{named}</code>" in response.content.decode()


def test_the_results_page_costs_the_same_queries_whatever_the_number_of_results(
    project: Any, dana: Any, django_assert_num_queries: Any
) -> None:
    small = scheduling_project("small", items=CONVERSATIONS[:2], managers=[dana])
    project_evaluate(project=small, rubric=Rubric.objects.get(name="scheduling"))
    client = as_user(dana)
    client.get(RESULTS)

    # As the report (10), with a count of the results and their page instead of the report's one
    # read. (A page with no results skips the second.)
    for name in ("scheduling", "small"):
        with django_assert_num_queries(11):
            client.get(
                reverse("evaluation:results", args=[name, "scheduling"]), {"outcome": "successful_completion"}
            )
