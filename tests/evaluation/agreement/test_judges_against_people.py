"""Model judges against people: the agreement between people counts people only, and each judge
is measured against each person, against the people's majority, and against the people's range.

Ann, Ben and Cleo compare two replies on each of ten items; the judge ``judge:pairs`` compares
the same pairs. Dana manages the project. Every figure is checked against one worked out here,
from the raw labels, with the formulas written out (not the project's own functions).
"""

from __future__ import annotations

import io
from collections import Counter
from itertools import combinations
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Annotation
from evaluation.agreement.fields import Field
from evaluation.agreement.judges import judges_field_figures
from evaluation.agreement.majority import majority_labels
from evaluation.agreement.project import agreement_compute, agreement_current
from evaluation.llm.judges import judge_create
from evaluation.llm.services import endpoint_create
from tests.annotation.annotator_items import person, project_over
from tests.evaluation.agreement.test_project_agreement import COMPARE, field_of, two_replies

pytestmark = pytest.mark.django_db

LABELS = ["Better", "Same", "Worse"]
B, S, W = LABELS
# What each coder says of r1 against r2, item by item.
SAID = {
    "ann": [B, B, S, W, W, B, S, B, W, S],
    "ben": [B, S, S, W, B, B, S, W, W, W],
    "cleo": [B, B, W, W, W, S, S, B, W, B],
}
JUDGE = [B, B, S, W, W, B, W, B, S, S]
PEOPLE = ["ann", "ben", "cleo"]


def cohen_by_hand(first: list[str], second: list[str]) -> float:
    """κ = (p_o - p_e) / (1 - p_e): p_o the share of items labelled alike, p_e the chance of it
    from each coder's own label shares, Σ_label (n_first(label) / n) · (n_second(label) / n)."""
    n = len(first)
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    expected = sum((first.count(label) / n) * (second.count(label) / n) for label in LABELS)
    return (observed - expected) / (1 - expected)


def majority_by_hand(labels: list[str]) -> str | None:
    """The label most people gave; None when the top count is shared (a tie)."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def comparison(label: str, flip: bool) -> dict[str, Any]:
    """A branch comparison of r1 and r2, given either way round (Worse for r2-r1 is Better for r1-r2)."""
    if flip:
        pair = {"a": "r2", "b": "r1", "label": LABELS[2 - LABELS.index(label)]}
        return {"branch_comparisons": {"q": {"shown_order": ["r2", "r1"], "pairs": [pair]}}}
    pair = {"a": "r1", "b": "r2", "label": label}
    return {"branch_comparisons": {"q": {"shown_order": ["r1", "r2"], "pairs": [pair]}}}


def judged_project(name: str = "judged", managers: list[Any] = (), size: int = 10) -> tuple[Any, Any]:
    """Items compared by Ann, Ben, Cleo and the judge (its answers stored as the runner stores them):
    ten, or ``size`` with the ten's labels over again."""
    items = [two_replies(f"{name}-{i:03d}") for i in range(size)]
    project = project_over(name, COMPARE, items, managers=managers)
    endpoint = endpoint_create(name=f"{name}-local", base_url="http://127.0.0.1:9/v1", model="m")
    judge = judge_create(name=f"{name}-pairs", kind="comparison", endpoint=endpoint)
    trees = list(project.dataset.trees.order_by("external_id"))
    people = {username: person(username) for username in PEOPLE}
    answers = [(people[username], labels, Annotation.Source.HUMAN) for username, labels in SAID.items()]
    answers.append((judge.user, JUDGE, Annotation.Source.MODEL))
    Annotation.objects.bulk_create(
        Annotation(
            project=project,
            tree=tree,
            user=user,
            scheme="compare",
            payload=comparison(label, flip=(index + len(user.username)) % 3 == 0),
            status=Annotation.Status.SUBMITTED,
            source=source,
        )
        for user, labels, source in answers
        for index, tree in enumerate(trees)
        for label in [labels[index % len(labels)]]
    )
    return project, judge


def test_three_people_and_a_judge_give_each_pairs_kappa_as_worked_out_by_hand():
    project, judge = judged_project()
    account = judge.user.username

    figures = agreement_current(project).figures
    field = field_of(figures, "compare", "branch comparison")

    # People with people: the judge is not one of them.
    assert figures["annotators"] == PEOPLE and figures["judges"] == [account]
    assert field["n_annotators"] == 3
    people = {(pair["a"], pair["b"]): pair["value"] for pair in field["pairs"]}
    expected_people = {(a, b): cohen_by_hand(SAID[a], SAID[b]) for a, b in combinations(PEOPLE, 2)}
    assert people == pytest.approx(expected_people, abs=1e-12)
    # The judge with each person.
    judges = field["judges"]
    assert judges["measure"] == "Cohen's kappa"
    (against,) = judges["judges"]
    assert against["judge"] == account and against["n_units"] == 10
    by_person = {result["human"]: result["value"] for result in against["humans"]}
    expected_judge = {name: cohen_by_hand(JUDGE, SAID[name]) for name in PEOPLE}
    assert by_person == pytest.approx(expected_judge, abs=1e-12)
    assert {result["n_units"] for result in against["humans"]} == {10}
    mean = sum(expected_judge.values()) / 3
    assert against["mean"]["value"] == pytest.approx(mean, abs=1e-12)
    # The people's range, and where the judge falls in it.
    low, high = min(expected_people.values()), max(expected_people.values())
    assert (judges["human_range"]["low"], judges["human_range"]["high"]) == pytest.approx((low, high))
    expected_position = "below" if mean < low else "above" if mean > high else "within"
    assert against["position"] == expected_position
    assert against["within_human_range"] is (expected_position == "within")


def test_the_judge_against_the_peoples_majority_leaves_ties_out_and_counts_them():
    project, _ = judged_project()

    field = field_of(agreement_compute(project), "compare", "branch comparison")
    majority = field["judges"]["judges"][0]["majority"]

    by_item = [majority_by_hand([SAID[name][index] for name in PEOPLE]) for index in range(10)]
    compared = [(m, j) for m, j in zip(by_item, JUDGE, strict=True) if m is not None]
    assert majority["n_ties"] == by_item.count(None) == 1  # the last item: Same, Worse and Better
    assert majority["n_units"] == len(compared)
    assert majority["n_agreed"] == sum(m == j for m, j in compared)
    assert majority["value"] == pytest.approx(sum(m == j for m, j in compared) / len(compared))
    assert majority["labels"] == LABELS
    confusion = Counter(compared)
    assert majority["confusion"] == [[confusion[m, j] for j in LABELS] for m in LABELS]


def test_the_matrix_has_the_shape_of_pandalms_table_people_then_the_judge_marked_as_a_model():
    project, judge = judged_project()
    account = judge.user.username

    matrix = field_of(agreement_compute(project), "compare", "branch comparison")["judges"]["matrix"]

    assert matrix["coders"] == [
        {"coder": "ann", "source": "human"},
        {"coder": "ben", "source": "human"},
        {"coder": "cleo", "source": "human"},
        {"coder": account, "source": "model"},
    ]
    labels = {**SAID, account: JUDGE}
    coders = [*PEOPLE, account]
    for row, first in enumerate(coders):
        for column, second in enumerate(coders):
            cell = matrix["rows"][row][column]
            if first == second:
                assert cell is None
            else:
                assert cell["value"] == pytest.approx(cohen_by_hand(labels[first], labels[second]), abs=1e-12)
                assert cell["n_units"] == 10


def test_a_project_without_judges_has_no_judge_figures():
    project = project_over("plain", COMPARE, [two_replies(f"plain-{i}") for i in range(3)])
    trees = list(project.dataset.trees.order_by("external_id"))
    for username in PEOPLE[:2]:
        user = person(username)
        for tree in trees:
            Annotation.objects.create(
                project=project,
                tree=tree,
                user=user,
                scheme="compare",
                payload=comparison(B, False),
                status=Annotation.Status.SUBMITTED,
            )

    figures = agreement_compute(project)

    assert figures["judges"] == []
    assert field_of(figures, "compare", "branch comparison")["judges"] is None


def test_majorities_need_two_people_and_a_single_top_label():
    data = {
        "one": {"ann": B},
        "two-agree": {"ann": B, "ben": B},
        "two-split": {"ann": B, "ben": W},
        "three-split": {"ann": B, "ben": S, "cleo": W},
        "two-of-three": {"ann": B, "ben": W, "cleo": W, "judge:x": B},
    }

    found = majority_labels(data, {"ann", "ben", "cleo"})

    assert found.labels == {"two-agree": B, "two-of-three": W}
    assert found.ties == {"two-split", "three-split"}
    assert found.too_few == {"one"}


def test_a_judge_agreeing_with_people_more_than_they_agree_with_each_other_is_above_their_range():
    field = Field("criterion helpful", "item", "nominal")
    people = {"ann": [1, 1, 0, 0, 1, 0], "ben": [1, 0, 0, 1, 1, 0]}
    judge = [1, 1, 0, 0, 1, 0]  # Ann's exactly
    for coder, values in [*people.items(), ("judge:x", judge)]:
        for index, value in enumerate(values):
            field.add((f"i{index}", ""), coder, bool(value))
    kappa = cohen_by_hand_bool(people["ann"], people["ben"])
    human_pairs = [
        {
            "a": "ann",
            "b": "ben",
            "measure": "Cohen's kappa",
            "value": kappa,
            "shown": "",
            "undefined_reason": None,
            "n_units": 6,
        }
    ]

    figures = judges_field_figures(field, {"judge:x"}, human_pairs)

    (found,) = figures["judges"]
    assert {h["human"]: h["value"] for h in found["humans"]}["ann"] == pytest.approx(1.0)
    assert found["position"] == "above" and found["within_human_range"] is False
    assert found["majority"]["labels"] == [True, False]  # yes before no


def cohen_by_hand_bool(first: list[int], second: list[int]) -> float:
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    expected = sum((first.count(v) / n) * (second.count(v) / n) for v in (0, 1))
    return (observed - expected) / (1 - expected)


# -- on the page and over the API ---------------------------------------------------------------------


@pytest.fixture
def dana() -> Any:
    return person("dana")


def test_the_api_gives_the_same_kappas_people_apart_from_the_judge(dana):
    project, judge = judged_project(managers=[dana])
    client = APIClient()
    client.force_authenticate(dana)

    body = client.get(f"/api/v1/projects/{project.name}/agreement").json()

    assert body["annotators"] == PEOPLE and body["judges"] == [judge.user.username]
    (scheme,) = body["schemes"]
    assert (scheme["annotations"], scheme["judge_annotations"]) == (30, 10)
    (field,) = scheme["fields"]
    assert {(p["a"], p["b"]): p["value"] for p in field["pairs"]} == pytest.approx(
        {(a, b): cohen_by_hand(SAID[a], SAID[b]) for a, b in combinations(PEOPLE, 2)}, abs=1e-12
    )
    (against,) = field["judges"]["judges"]
    assert {h["human"]: h["value"] for h in against["humans"]} == pytest.approx(
        {name: cohen_by_hand(JUDGE, SAID[name]) for name in PEOPLE}, abs=1e-12
    )
    assert field["judges"]["matrix"]["coders"][-1] == {"coder": judge.user.username, "source": "model"}


def test_the_page_shows_each_judge_beside_the_people_with_a_link_to_its_report(dana):
    project, judge = judged_project(managers=[dana])
    client = Client()
    client.force_login(dana)

    response = client.get(reverse("evaluation:agreement", args=[project.name]))
    html = response.content.decode()

    account = judge.user.username
    report = reverse("evaluation:judge-report", args=[project.name, judge.name])
    assert f'<a href="{report}" data-judge-report="{account}">{account}</a>' in html
    assert (
        f'<th scope="row"><a href="{report}">{account}</a> <span class="source-model">model</span></th>'
        in html
    )
    for name in PEOPLE:
        shown = f"{cohen_by_hand(JUDGE, SAID[name]):.3f}"
        assert f'<li data-judge-human="{name}">{name}: {shown} ' in html
    # The coders' table: the people's rows, then the judge's, marked as a model.
    rows = response.context["schemes"][0]["fields"][0]["judges"]["matrix"]["rows"]
    assert [(row["coder"], row["source"]) for row in rows] == [
        ("ann", "human"),
        ("ben", "human"),
        ("cleo", "human"),
        (account, "model"),
    ]
    assert f'<tr data-coder="{account}" data-source="model">' in html
    assert f"{cohen_by_hand(SAID['ann'], SAID['ben']):.3f}" in html


def test_the_page_with_judges_costs_the_same_queries_whatever_the_size_of_the_project(
    dana, django_assert_num_queries
):
    client = Client()
    client.force_login(dana)
    for name, size in (("small", 3), ("large", 40)):
        project, _ = judged_project(name, managers=[dana], size=size)
        url = reverse("evaluation:agreement", args=[project.name])
        client.get(url)
        # Session, user, the project with the user's roles, the stamp, the snapshot, the judges' reports.
        with django_assert_num_queries(6):
            assert client.get(url).status_code == 200


def test_the_command_prints_each_judge_against_the_people():
    project, judge = judged_project()
    out = io.StringIO()

    call_command("agreement", project.name, stdout=out)

    text = out.getvalue()
    people = [cohen_by_hand(SAID[a], SAID[b]) for a, b in combinations(PEOPLE, 2)]
    assert (
        f"    judges against people (Cohen's kappa; between two people: {min(people):.3f} to {max(people):.3f}):"
        in text
    )
    mean = sum(cohen_by_hand(JUDGE, SAID[name]) for name in PEOPLE) / 3
    assert f"      {judge.user.username}: mean {mean:.3f} (" in text
    assert f"        with ann: {cohen_by_hand(JUDGE, SAID['ann']):.3f}  10 units" in text
    assert "        with the majority: 0.778  7 of 9 units (1 tie left out)" in text
    assert text.startswith(f"Agreement in {project.name}: 30 submitted answers by 3 annotators")


def test_a_judge_alone_on_a_scheme_is_listed_but_measured_against_no_one():
    project = project_over("alone", COMPARE, [two_replies("alone-0")])
    endpoint = endpoint_create(name="alone-local", base_url="http://127.0.0.1:9/v1", model="m")
    judge = judge_create(name="alone", kind="comparison", endpoint=endpoint)
    Annotation.objects.create(
        project=project,
        tree=project.dataset.trees.get(),
        user=judge.user,
        scheme="compare",
        payload=comparison(B, False),
        status=Annotation.Status.SUBMITTED,
        source=Annotation.Source.MODEL,
    )

    figures = agreement_compute(project)

    assert (figures["annotators"], figures["judges"]) == ([], ["judge:alone"])
    (scheme,) = figures["schemes"]
    assert (scheme["annotations"], scheme["judge_annotations"], scheme["fields"]) == (0, 1, [])
    assert scheme["note"].startswith("no submitted answers from people yet")
