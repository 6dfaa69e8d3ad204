"""The report page and its downloads: who may see them, what they count, grouped side by
side for A/B tests, with constant queries.

Personas: Dana manages the project, Erin reviews it, Alice annotates it,
Oscar belongs to no project.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Rubric
from evaluation.services import project_evaluate
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CONVERSATIONS, EXPECTED, scheduling_project

pytestmark = pytest.mark.django_db


def ab_items() -> list[dict[str, Any]]:
    """The sample with variant A or B in the metadata and the model on every assistant message."""
    items = copy.deepcopy(CONVERSATIONS)
    for index, item in enumerate(items):
        variant = "AB"[index % 2]
        item["variant"] = variant
        node = item["tree"]
        while node:
            if node["role"] == "assistant":
                node["model_name"] = f"model-{variant.lower()}"
            node = (node.get("children") or [None])[0]
    return items


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "erin", "alice", "oscar")}


@pytest.fixture
def project(people):
    project = scheduling_project(
        items=ab_items(), annotators=[people["alice"]], managers=[people["dana"]], reviewers=[people["erin"]]
    )
    project_evaluate(project=project, rubric=Rubric.objects.get(name="scheduling"))
    return project


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


REPORT = reverse("evaluation:report", args=["scheduling", "scheduling"])


@pytest.mark.parametrize(("who", "status"), [("dana", 200), ("erin", 200), ("alice", 403), ("oscar", 404)])
def test_reports_are_for_managers_and_reviewers(project, people, who, status):
    assert as_user(people[who]).get(REPORT).status_code == status


def test_signed_out_visitors_are_sent_to_the_login_page(project):
    response = Client().get(REPORT)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_report_shows_outcomes_mean_interval_pass_rates_and_histogram(project, people):
    response = as_user(people["dana"]).get(REPORT)
    report = response.context["report"]

    assert report.overall.count == 8
    assert report.overall.outcomes == [
        ("successful_completion", 2, 0.25),
        ("graceful_failure", 2, 0.25),
        ("partial_failure", 3, 0.375),
        ("hard_failure", 1, 0.125),
    ]
    mean = sum(e["score"] for e in EXPECTED.values()) / 8
    assert report.overall.mean == pytest.approx(mean)
    low, high = report.overall.interval
    assert low < mean < high
    assert dict((k, p) for k, p, _ in report.overall.pass_rates) == {
        "correct_participants": 4,
        "correct_time": 3,
        "correct_duration": 3,
        "explored_alternatives": 6,
        "clear_explanation": 4,
        "booking_confirmed": 5,
    }
    html = response.content.decode()
    assert html.count('role="img"') == 3  # outcomes, histogram, pass rates
    assert (
        '<tr data-outcome="successful_completion"><th scope="row">successful_completion</th><td>score ≥ 0.75 and booking_confirmed</td><td><a href="/projects/scheduling/rubrics/scheduling/results/?version=1&amp;source=best&amp;outcome=successful_completion" aria-label="2 results with outcome successful_completion">2</a></td><td>25%</td></tr>'
        in html
    )
    assert "<script" not in html.split("</header>", 1)[1]  # the report needs no JavaScript


def test_the_report_costs_the_same_queries_whatever_the_number_of_results(
    project, people, django_assert_num_queries
):
    small = scheduling_project("small", items=CONVERSATIONS[:2], managers=[people["dana"]])
    project_evaluate(project=small, rubric=Rubric.objects.get(name="scheduling"))
    client = as_user(people["dana"])
    client.get(REPORT)  # sessions and caches warm

    # Session, user, the project with the user's roles, rubric; the judges' answers (version,
    # stored rows, answers); the versions and their counts; the results.
    for name in ("scheduling", "small"):
        with django_assert_num_queries(10):
            client.get(reverse("evaluation:report", args=[name, "scheduling"]), {"group": "metadata.variant"})


@pytest.mark.parametrize(
    ("group", "expected"),
    [("metadata.variant", ["A", "B"]), ("$.variant", ["A", "B"]), ("model", ["model-a", "model-b"])],
)
def test_the_report_groups_by_a_metadata_key_or_the_model_side_by_side(project, people, group, expected):
    response = as_user(people["dana"]).get(REPORT, {"group": group})

    groups = response.context["report"].groups
    assert [name for name, _ in groups] == expected
    assert [summary.count for _, summary in groups] == [4, 4]
    html = response.content.decode()
    assert [f'data-group="{name}"' in html for name in expected] == [True, True]


def test_bad_report_parameters_are_named_on_the_page(project, people):
    response = as_user(people["dana"]).get(REPORT, {"group": "tree.id", "source": "robots", "version": "9"})

    assert [str(p) for p in response.context["problems"]] == [
        'version: no version "9" of scheduling (versions: 1)',
        'source: "robots" is not a source (best, auto, human, combined)',
        'group: "tree.id": group by model or a metadata path (metadata.key)',
    ]
    assert response.context["report"].overall.count == 8


def test_a_report_before_any_evaluation_says_how_to_make_one(people):
    scheduling_project(items=CONVERSATIONS[:1], managers=[people["dana"]])

    response = as_user(people["dana"]).get(REPORT)

    assert b"data-empty" in response.content
    assert b"manage.py evaluate scheduling --rubric scheduling" in response.content


def test_the_project_lists_its_rubrics(project, people):
    response = as_user(people["dana"]).get(reverse("evaluation:project-rubrics", args=["scheduling"]))

    assert [r.name for r in response.context["rubrics"]] == ["scheduling"]


# -- downloads ---------------------------------------------------------------------------------


def download(client: Client, name: str, fmt: str, **params: str) -> Any:
    url = reverse(f"evaluation:{name}-download", args=["scheduling", "scheduling", fmt])
    response = client.get(url, params)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body.decode()


def test_the_report_downloads_as_json_and_csv(project, people):
    client = as_user(people["dana"])

    response, body = download(client, "report", "json", group="metadata.variant")
    data = json.loads(body)
    _, text = download(client, "report", "csv")
    table = list(csv.reader(io.StringIO(text)))

    assert response["Content-Disposition"] == 'attachment; filename="scheduling-scheduling-v1-report.json"'
    assert (data["version"], data["source"], data["group_by"]) == (1, "best", "metadata.variant")
    assert data["overall"]["outcomes"][0] == {"name": "successful_completion", "count": 2, "share": 0.25}
    assert [g["group"] for g in data["groups"]] == ["A", "B"]
    assert table[0] == ["group", "metric", "key", "value"]
    assert ["", "outcome_count", "hard_failure", "1"] in table
    assert ["", "pass_rate", "clear_explanation", "0.5"] in table


def test_the_results_download_as_csv_and_as_the_evaluate_commands_json_lines(project, people):
    client = as_user(people["dana"])

    _, text = download(client, "results", "csv")
    _, lines = download(client, "results", "jsonl")
    table = list(csv.DictReader(io.StringIO(text)))
    records = [json.loads(line) for line in lines.splitlines()]

    assert [row["id"] for row in table] == sorted(EXPECTED)
    assert table[1]["correct_duration"] == "0" and table[1]["score"] == "0.9"
    assert {r["id"]: r["outcome"] for r in records} == {k: v["outcome"] for k, v in EXPECTED.items()}


def test_downloads_are_refused_to_annotators(project, people):
    response, _ = download(as_user(people["alice"]), "report", "json")

    assert response.status_code == 403


def test_the_project_page_links_reviewers_and_managers_to_the_rubric_reports(client):
    from annotation.models import Membership
    from annotation.projects.services import membership_add
    from tests.factories import DatasetFactory, ProjectFactory, UserFactory

    project = ProjectFactory(dataset=DatasetFactory())
    reviewer, annotator = UserFactory(), UserFactory()
    membership_add(project=project, user=reviewer, role=Membership.Role.REVIEWER)
    membership_add(project=project, user=annotator, role=Membership.Role.ANNOTATOR)
    reports = f"/projects/{project.name}/rubrics/"

    client.force_login(reviewer)
    assert f'href="{reports}"' in client.get(f"/projects/{project.name}/").content.decode()
    client.force_login(annotator)
    assert f'href="{reports}"' not in client.get(f"/projects/{project.name}/").content.decode()
