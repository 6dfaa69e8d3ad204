"""The agreement page: for a project's managers and reviewers, a table per scheme and field, each
pair of annotators as a matrix, kept figures until an answer changes, with constant queries.

Dana manages the project, Erin reviews it, Alice annotates it, Oscar belongs to no project;
Ann, Ben and Cleo's answers were imported.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person, project_over
from tests.evaluation.agreement.test_project_agreement import imported, two_replies

pytestmark = pytest.mark.django_db

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}
assignment: {annotations_per_item: 4}
"""
RATINGS = {"ann": [1, 2, 4, 5, 3], "ben": [1, 3, 4, 5, 3], "cleo": [2, 2, 4, 4, 3]}
VERDICTS = {"ann": "good", "ben": "good", "cleo": "good"}


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "erin", "alice", "oscar")}


def rated_project(name: str, people: dict[str, Any], items: int = 5) -> Any:
    project = project_over(
        name,
        CONFIG,
        [two_replies(f"{name}-{index}") for index in range(items)],
        annotators=[people["alice"]],
        managers=[people["dana"]],
        reviewers=[people["erin"]],
    )
    imported(
        project,
        [
            {
                "id": f"{name}-{index}",
                "user": annotator,
                "annotations": {
                    "quality": {"rating": ratings[index % len(ratings)]},
                    "verdict": {"label": VERDICTS[annotator]},
                },
            }
            for annotator, ratings in RATINGS.items()
            for index in range(items)
        ],
    )
    return project


@pytest.fixture
def project(people):
    return rated_project("rated", people)


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


PAGE = reverse("evaluation:agreement", args=["rated"])


@pytest.mark.parametrize(("who", "status"), [("dana", 200), ("erin", 200), ("alice", 403), ("oscar", 404)])
def test_agreement_is_for_managers_and_reviewers(project, people, who, status):
    assert as_user(people[who]).get(PAGE).status_code == status


def test_signed_out_visitors_are_sent_to_the_login_page(project):
    response = Client().get(PAGE)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_project_page_links_to_agreement_for_those_who_may_read_it(project, people):
    for who, linked in (("dana", True), ("erin", True), ("alice", False)):
        response = as_user(people[who]).get(reverse("annotation:project", args=["rated"]))
        assert (PAGE.encode() in response.content) is linked, who


def test_each_field_has_its_measures_in_a_table_and_its_pairs_in_a_matrix(project, people):
    response = as_user(people["dana"]).get(PAGE)
    html = response.content.decode()
    figures = response.context["figures"]

    assert [scheme["scheme"] for scheme in response.context["schemes"]] == ["quality", "verdict"]
    rating = figures["schemes"][0]["fields"][0]
    alpha = rating["measures"][0]
    assert f'<tr data-measure="{alpha["measure"]}"><th scope="row">{alpha["measure"]}</th>' in html.replace(
        "&#x27;", "'"
    )
    assert f"<td data-value>{alpha['shown']}</td>" in html
    # A matrix of three annotators: six cells, each pair twice, its value in the cell and its tooltip.
    quality = response.context["schemes"][0]["fields"][0]["matrices"][0]
    assert quality["measure"] == "Cohen's kappa (quadratic weights)"
    assert len(quality["heatmap"].cells) == 6
    first = rating["pairs"][0]
    assert f"<title>ann and ben: {first['shown']} over 5 units</title>" in html
    assert html.count('class="chart chart-heatmap"') == 2
    assert html.count('class="chart chart-hbars"') == 2


def test_a_measure_without_a_value_says_undefined_and_why(project, people):
    html = as_user(people["erin"]).get(PAGE).content.decode().replace("&#x27;", "'")

    assert (
        "<span class=\"undefined\">undefined — every rating is 'good': no variation, so chance agreement is 1</span>"
        in html
    )


def test_the_figures_are_kept_and_recomputed_after_a_new_submission(project, people):
    dana = as_user(people["dana"])

    assert dana.get(PAGE).context["recomputed"] is True
    kept = dana.get(PAGE)
    assert kept.context["recomputed"] is False
    assert 'data-recomputed="false"' in kept.content.decode()

    alice = people["alice"]
    assignment = item_next(project=project, user=alice)
    item_submit(
        project=project,
        tree=assignment.tree,
        user=alice,
        answers={"quality": {"rating": 3}, "verdict": {"label": "bad"}},
        version=assignment.version,
    )
    fresh = dana.get(PAGE)
    assert fresh.context["recomputed"] is True
    assert fresh.context["figures"]["annotators"] == ["alice", "ann", "ben", "cleo"]


def test_the_kept_page_costs_the_same_queries_whatever_the_size_of_the_project(
    people, django_assert_num_queries
):
    small = rated_project("small", people, items=2)
    large = rated_project("large", people, items=40)
    dana = as_user(people["dana"])
    for project in (small, large):
        url = reverse("evaluation:agreement", args=[project.name])
        dana.get(url)
        # Session, user, the project with the user's roles, the stamp, the snapshot.
        with django_assert_num_queries(5):
            assert dana.get(url).context["recomputed"] is False
