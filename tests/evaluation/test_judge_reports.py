"""A judge's report in a project: its confusion against the people's majority and its accuracy,
the flip rate of its comparisons, its failures, tokens and cost — on a page linked from the
agreement page and the judge's admin page, and over the API, for the project's managers and
reviewers.

Ann, Ben and Cleo compare two replies on ten items and ``judge:judged-pairs`` compares them too
(tests.evaluation.agreement.test_judges_against_people). Dana manages the project, Erin reviews
it, Alice annotates it, Oscar belongs to no project.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Membership
from annotation.projects.services import membership_add
from evaluation.judge_pages import PEOPLE_LISTED, judges_section
from evaluation.llm.judges import judge_create
from evaluation.llm.models import JudgeVerdict, ModelCall
from evaluation.llm.services import endpoint_create
from tests.annotation.annotator_items import person
from tests.evaluation.agreement.test_judges_against_people import (
    JUDGE,
    LABELS,
    PEOPLE,
    SAID,
    judged_project,
    majority_by_hand,
)
from tests.factories import (
    AnnotationFactory,
    ConversationTreeFactory,
    ProjectFactory,
    RubricFactory,
    StaffFactory,
)

pytestmark = pytest.mark.django_db

FLIPPED = {1, 4, 6}  # the items whose two orders disagreed
FAILURES = {2: 1, 7: 2}  # item: questions that failed


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "erin", "alice", "oscar")}


def verdicts(project: Any, judge: Any) -> None:
    """What the runner records per item: both orders of each pair, flips, failures, tokens, cost."""
    trees = list(project.dataset.trees.order_by("external_id"))
    for index, tree in enumerate(trees):
        flipped = index in FLIPPED
        label = JUDGE[index % len(JUDGE)]
        pair = {
            "node": "q",
            "a": "r1",
            "b": "r2",
            "first": label,
            "second": "Worse" if flipped and label != "Worse" else label,
            "label": label,
            "flipped": flipped,
        }
        failed = [{"question": "q", "attempts": 3, "error": "not JSON", "raw": "hmm"}] * FAILURES.get(
            index, 0
        )
        JudgeVerdict.objects.create(
            judge=judge,
            project=project,
            tree=tree,
            scheme="compare",
            status=JudgeVerdict.Status.PARTIAL if failed else JudgeVerdict.Status.DONE,
            details={"pairs": [pair]},
            failures=failed,
            prompt_tokens=100,
            completion_tokens=10,
            cost=Decimal("0.00125"),
        )
    calls = [ModelCall.Status.OK] * 23 + [ModelCall.Status.ERROR] * 2
    for status in calls:
        ModelCall.objects.create(
            endpoint=judge.endpoint,
            endpoint_name=judge.endpoint.name,
            model="m",
            purpose=ModelCall.Purpose.JUDGE,
            subject=judge.name,
            status=status,
            prompt_tokens=50,
            completion_tokens=5,
            cost=Decimal("0.0005"),
        )
    # Another judge's request, and a connection test: not this judge's.
    for purpose, subject in ((ModelCall.Purpose.JUDGE, "other"), (ModelCall.Purpose.TEST, judge.name)):
        ModelCall.objects.create(
            endpoint_name="x", model="m", purpose=purpose, subject=subject, status="ok", prompt_tokens=7
        )


@pytest.fixture
def judged(people) -> tuple[Any, Any]:
    project, judge = judged_project(managers=[people["dana"]])
    membership_add(project=project, user=people["erin"], role=Membership.Role.REVIEWER)
    membership_add(project=project, user=people["alice"], role=Membership.Role.ANNOTATOR)
    verdicts(project, judge)
    return project, judge


def api_report(user: Any, project: Any, judge: Any) -> Any:
    client = APIClient()
    client.force_authenticate(user)
    return client.get(f"/api/v1/projects/{project.name}/judges/{judge.name}/report")


def test_the_report_gives_the_confusion_against_the_majority_and_the_accuracy(judged, people):
    project, judge = judged

    body = api_report(people["dana"], project, judge).json()

    (field,) = body["fields"]
    assert (field["scheme"], field["field"]) == ("compare", "branch comparison")
    majority = field["majority"]
    by_item = [majority_by_hand([SAID[name][index] for name in PEOPLE]) for index in range(10)]
    compared = [(m, j) for m, j in zip(by_item, JUDGE, strict=True) if m is not None]
    counts = Counter(compared)
    assert majority["labels"] == LABELS
    assert majority["confusion"] == [[counts[m, j] for j in LABELS] for m in LABELS]
    agreed = sum(m == j for m, j in compared)
    assert majority["value"] == pytest.approx(agreed / len(compared))
    assert (majority["n_agreed"], majority["n_units"], majority["n_ties"]) == (agreed, 9, 1)
    assert [human["human"] for human in field["humans"]] == PEOPLE


def test_the_report_counts_flips_failures_tokens_and_cost(judged, people):
    project, judge = judged

    body = api_report(people["erin"], project, judge).json()

    assert body["flips"] == {
        "pairs": 10,
        "flipped": 3,
        "rate": pytest.approx(0.3),
        "schemes": [{"scheme": "compare", "pairs": 10, "flipped": 3, "rate": pytest.approx(0.3)}],
    }
    assert body["verdicts"] == {
        "items": 10,
        "done": 8,
        "partial": 2,
        "failed": 0,
        "failures": 3,
        "prompt_tokens": 1000,
        "completion_tokens": 100,
        "cost": "0.01250000",
    }
    assert body["calls"] == {
        "requests": 25,
        "failed": 2,
        "prompt_tokens": 1250,
        "completion_tokens": 125,
        "cost": "0.01250000",
    }
    assert (body["account"], body["kind"], body["endpoint"]) == (
        judge.user.username,
        "comparison",
        judge.endpoint.name,
    )


@pytest.mark.parametrize(("who", "status"), [("dana", 200), ("erin", 200), ("alice", 403), ("oscar", 404)])
def test_the_report_is_for_managers_and_reviewers(judged, people, who, status):
    project, judge = judged
    client = Client()
    client.force_login(people[who])

    page = client.get(reverse("evaluation:judge-report", args=[project.name, judge.name]))

    assert page.status_code == status
    assert api_report(people[who], project, judge).status_code == status


def test_signed_out_visitors_are_sent_to_sign_in_and_unknown_judges_are_not_found(judged, people):
    project, judge = judged
    url = reverse("evaluation:judge-report", args=[project.name, judge.name])

    assert Client().get(url).status_code == 302
    assert APIClient().get(f"/api/v1/projects/{project.name}/judges/{judge.name}/report").status_code in (
        401,
        403,
    )
    client = Client()
    client.force_login(people["dana"])
    assert client.get(reverse("evaluation:judge-report", args=[project.name, "nobody"])).status_code == 404
    assert api_report(people["dana"], project, type(judge)(name="nobody")).status_code == 404


def test_the_page_shows_the_confusion_table_the_flip_rate_and_the_cost(judged, people):
    project, judge = judged
    client = Client()
    client.force_login(people["dana"])

    response = client.get(reverse("evaluation:judge-report", args=[project.name, judge.name]))
    html = response.content.decode()

    assert '<dd data-flip-rate>0.300 <span class="muted">(3 of 10 pairs)</span></dd>' in html
    assert "<dd data-failures>3</dd>" in html
    assert "<dd data-cost>0.01250000</dd>" in html
    (field,) = response.context["fields"]
    better = field["confusion"]["rows"][0]
    assert better["label"] == "Better"
    assert '<tr data-majority="Better"><th scope="row">people: Better</th>' in html
    assert better["counts"] == field["majority"]["confusion"][0]


def test_the_report_page_costs_the_same_queries_whatever_the_size_of_the_project(
    people, django_assert_num_queries
):
    client = Client()
    client.force_login(people["dana"])
    for name, size in (("small", 3), ("large", 40)):
        project, judge = judged_project(name, managers=[people["dana"]], size=size)
        verdicts(project, judge)
        url = reverse("evaluation:judge-report", args=[project.name, judge.name])
        client.get(url)
        # Session, user, the project with the user's roles, the judge, the stamp, the snapshot,
        # the verdicts, the ledger.
        with django_assert_num_queries(8):
            assert client.get(url).status_code == 200


def test_the_judges_admin_page_links_its_report_in_each_project(judged):
    project, judge = judged
    client = Client()
    client.force_login(StaffFactory(username="root", is_superuser=True))

    page = client.get(reverse("admin:llm_judge_change", args=[judge.pk]))

    report = reverse("evaluation:judge-report", args=[project.name, judge.name])
    assert f'<a href="{report}">{project.name}</a>' in page.content.decode()


def test_the_agreement_page_lists_the_people_with_most_units_in_common_first_and_counts_the_rest():
    humans = [
        {
            "human": f"p{index:02d}",
            "measure": "Cohen's kappa",
            "value": 0.5,
            "shown": "0.500",
            "undefined_reason": None,
            "n_units": index,
        }
        for index in range(60)
    ]
    entry = {"judge": "judge:x", "humans": humans, "position": None}

    section = judges_section({"judges": [entry], "matrix": None}, {"judge:x": "/report/"})

    (row,) = section["rows"]
    assert [human["human"] for human in row["humans"]][:2] == ["p59", "p58"]
    assert (len(row["humans"]), row["more"], row["report"]) == (PEOPLE_LISTED, 10, "/report/")
    assert row["position_text"] == "no range to compare with"


def test_a_rubric_judges_report_reads_yes_and_no_against_the_majority(people):
    """Four items, a criterion each of Ann, Ben and Cleo answered; the judge says yes throughout."""
    rubric = RubricFactory()
    project = ProjectFactory(
        name="rubric-judged",
        config_yaml=f"annotation_schemes:\n  - {{annotation_type: rubric, name: review, description: R, rubric: {rubric.name}}}\n",
    )
    membership_add(project=project, user=people["dana"], role=Membership.Role.MANAGER)
    endpoint = endpoint_create(name="rubric-local", base_url="http://127.0.0.1:9/v1", model="m")
    judge = judge_create(name="helpful", kind="rubric", endpoint=endpoint)
    said = {"ann": [1, 1, 0, 0], "ben": [1, 0, 0, 1], "cleo": [1, 1, 0, 0], judge.user.username: [1, 1, 1, 1]}
    trees = [ConversationTreeFactory(dataset=project.dataset) for _ in range(4)]
    for username, answers in said.items():
        user = judge.user if username.startswith("judge:") else person(username)
        for tree, answer in zip(trees, answers, strict=True):
            AnnotationFactory(
                project=project,
                tree=tree,
                user=user,
                scheme="review",
                payload={"criteria": {"helpful": bool(answer)}},
                source="model" if user == judge.user else "human",
            )
    client = Client()
    client.force_login(people["dana"])

    response = client.get(reverse("evaluation:judge-report", args=[project.name, judge.name]))

    (field,) = response.context["fields"]
    assert field["field"] == "criterion helpful"
    # Majorities: yes, yes, no, no. The judge: yes on all four.
    assert field["majority"]["labels"] == [True, False]
    assert field["majority"]["confusion"] == [[2, 0], [2, 0]]
    assert field["majority"]["value"] == 0.5
    assert field["confusion"]["labels"] == ["yes", "no"]
    # A judge that says yes to everything agrees with each person (half yes) only as chance would:
    # p_o = 2/4, p_e = 1 * 2/4, so kappa = 0.
    assert [(human["human"], human["value"]) for human in field["humans"]] == [
        ("ann", 0.0),
        ("ben", 0.0),
        ("cleo", 0.0),
    ]
    assert '<th scope="row">people: yes</th>' in response.content.decode()
