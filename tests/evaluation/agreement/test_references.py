"""A corpus's reference answers in agreement: not an annotator, but what each annotator is measured against.

The rules:

- agreement between annotators leaves the reference out: two annotators and the
  corpus's spans give the two annotators' figure, and the reference is no pair;
- each annotator is measured against the reference apart (the field's pair measure:
  span F1, exact and by overlap), with the mean over annotators as the overall figure;
- the page, the API and the command report it under its own heading, labelled as the
  reference, and the kept page costs what it did;
- a reference nobody has answered beside yet is reported as undefined, and why.

Dana manages a CCPE project of one dialogue, CCPE-8e113, whose corpus brings 45
spans (held by ccpe-gold). Alice keeps two of the corpus's spans and adds one of
her own; Bob keeps one of them and adds one of his own.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Membership
from annotation.projects.references import REFERENCE_USERNAME
from annotation.projects.services import membership_add
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from evaluation.agreement.fields import SPANS, Field
from evaluation.agreement.project import agreement_compute
from evaluation.agreement.references import NO_PAIR_MEASURE, reference_figures, reference_pairs
from tests.annotation.annotator_items import person
from tests.annotation.projects.test_ccpe_projects import ORIGINAL_FILE, ccpe_project, span

pytestmark = pytest.mark.django_db

# Two of the corpus's spans on utterance 1 ...
THE_PREFERENCE = span("1", 0, 22, "I like thrillers a lot", "ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY")
THE_GENRE = span("1", 7, 16, "thrillers", "ENTITY_NAME", "MOVIE_GENRE_OR_CATEGORY")
# ... and two that are not the corpus's (it has "thrillers" in utterance 2 as a genre).
ALICES_OWN = span("1", 2, 16, "like thrillers", "ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY")
BOBS_OWN = span("2", 0, 9, "thrillers", "ENTITY_NAME", "SOMETHING_ELSE")
ANSWERS = {"alice": [THE_PREFERENCE, THE_GENRE, ALICES_OWN], "bob": [THE_GENRE, BOBS_OWN]}
CORPUS_SPANS = 45


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("dana", "alice", "bob")}


@pytest.fixture
def project(people):
    return reference_project(people)


def reference_project(people: dict[str, Any]) -> Any:
    """The CCPE dialogue, Dana managing, Alice and Bob's answers submitted."""
    project = ccpe_project(files=(ORIGINAL_FILE,), annotators=[people["alice"], people["bob"]])
    membership_add(project=project, user=people["dana"], role=Membership.Role.MANAGER)
    for name, spans in ANSWERS.items():
        held = item_next(project=project, user=people[name])
        item_submit(
            project=project,
            tree=held.tree,
            user=people[name],
            answers={"preferences": {"spans": spans}},
            version=held.version,
        )
    return project


def f1(matched: int, first: int, second: int) -> float:
    return 2 * matched / (first + second)


# By hand: Alice and Bob share THE_GENRE; Alice has two of the corpus's spans, Bob one.
BETWEEN_ANNOTATORS = f1(1, 3, 2)  # 0.4
ALICE_AGAINST_REFERENCE = f1(2, 3, CORPUS_SPANS)
BOB_AGAINST_REFERENCE = f1(1, 2, CORPUS_SPANS)


def spans_scheme(figures: dict[str, Any]) -> dict[str, Any]:
    [scheme] = figures["schemes"]
    return scheme


def measure(results: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(result for result in results if result["measure"] == name)


# Agreement between annotators


def test_agreement_between_annotators_is_the_two_annotators_figure(project):
    scheme = spans_scheme(agreement_compute(project))
    [field] = scheme["fields"]

    assert measure(field["measures"], "span F1 (exact)")["value"] == pytest.approx(BETWEEN_ANNOTATORS)
    assert [(pair["a"], pair["b"]) for pair in field["pairs"]] == [("alice", "bob"), ("alice", "bob")]
    assert field["n_annotators"] == 2


def test_the_reference_is_counted_neither_as_an_annotator_nor_as_an_answer(project):
    figures = agreement_compute(project)

    assert figures["annotators"] == ["alice", "bob"]
    assert figures["references"] == [REFERENCE_USERNAME]
    assert figures["annotations"] == spans_scheme(figures)["annotations"] == 2


# Each annotator against the reference


def test_each_annotator_is_measured_against_the_reference_by_span_f1(project):
    reference = spans_scheme(agreement_compute(project))["reference"]
    [field] = reference["fields"]

    exact = [result for result in field["annotators"] if result["measure"] == "span F1 (exact)"]
    assert [(r["annotator"], r["reference"]) for r in exact] == [
        ("alice", REFERENCE_USERNAME),
        ("bob", REFERENCE_USERNAME),
    ]
    assert [r["value"] for r in exact] == pytest.approx([ALICE_AGAINST_REFERENCE, BOB_AGAINST_REFERENCE])
    assert (reference["references"], reference["annotations"]) == ([REFERENCE_USERNAME], 1)


def test_the_overall_figure_against_the_reference_is_the_mean_over_annotators(project):
    [field] = spans_scheme(agreement_compute(project))["reference"]["fields"]

    overall = measure(field["measures"], "span F1 (exact)")
    assert overall["value"] == pytest.approx((ALICE_AGAINST_REFERENCE + BOB_AGAINST_REFERENCE) / 2)
    assert (overall["n_units"], overall["n_coders"]) == (1, 2)
    assert [result["measure"] for result in field["measures"]] == ["span F1 (exact)", "span F1 (overlap)"]


def test_a_reference_nobody_answered_beside_yet_is_undefined_and_says_why():
    project = ccpe_project(name="fresh", files=(ORIGINAL_FILE,))

    scheme = spans_scheme(agreement_compute(project))

    assert scheme["fields"] == []
    [field] = scheme["reference"]["fields"]
    assert field["annotators"] == []
    assert measure(field["measures"], "span F1 (exact)")["undefined_reason"] == (
        "no annotator has answered a unit the reference answered"
    )


def test_a_scheme_without_reference_answers_has_none():
    project = ccpe_project(name="plain", files=(ORIGINAL_FILE,))
    project.annotations.all().delete()

    assert spans_scheme(agreement_compute(project))["reference"] is None


def test_only_annotators_who_share_a_unit_with_the_reference_are_paired_with_it():
    field = Field("label", "item", "nominal")
    field.data = {("a",): {"ann": "x", "gold": "x"}, ("b",): {"ben": "y"}, ("c",): {"ann": "y", "ben": "y"}}

    assert reference_pairs(field, {"gold"}) == [("ann", "gold")]


def test_fields_without_a_measure_for_one_annotator_against_the_reference_are_left_out_and_said_so():
    numbers = Field("value", "item", "interval")
    numbers.data = {("a",): {"ann": 1, "gold": 2}}

    figures = reference_figures([numbers], {"gold"}, 1)

    assert (figures["fields"], figures["note"]) == ([], NO_PAIR_MEASURE)


def test_spans_against_the_reference_are_the_pair_measure_of_the_field():
    field = Field("spans", "item", SPANS)
    field.data = {("a",): {"ann": [("1", 0, 4, "X")], "gold": [("1", 0, 4, "X"), ("1", 5, 9, "Y")]}}

    [found] = reference_figures([field], {"gold"}, 1)["fields"]

    assert [r["value"] for r in found["annotators"]] == pytest.approx([f1(1, 1, 2), f1(1, 1, 2)])


# Where the figures are read


def test_the_page_reports_the_reference_apart_and_labelled_as_such(project, people):
    client = Client()
    client.force_login(people["dana"])

    response = client.get(reverse("evaluation:agreement", args=[project.name]))

    html = response.content.decode()
    pairs = html.split("data-pairs>", 1)[1].split("</table>", 1)[0]
    assert "alice" in pairs and REFERENCE_USERNAME not in pairs
    reference = html.split("data-reference ", 1)[1]
    assert "Against the reference" in reference and f"{REFERENCE_USERNAME}, not an annotator" in reference
    section = response.context["schemes"][0]["reference"]
    [field] = section["fields"]
    assert [row["annotator"] for row in field["rows"]] == ["alice", "bob"]
    assert [result["shown"] for result in field["rows"][0]["results"]] == [
        f"{ALICE_AGAINST_REFERENCE:.3f}",
        f"{ALICE_AGAINST_REFERENCE:.3f}",  # by overlap too: her own span overlaps one she kept
    ]
    assert 'data-reference-annotator="alice"' in reference and "Overall (mean)" in reference


def test_the_kept_page_costs_the_same_queries_with_a_reference(project, people, django_assert_num_queries):
    client = Client()
    client.force_login(people["dana"])
    url = reverse("evaluation:agreement", args=[project.name])
    client.get(url)

    # Session, user, the project with the user's roles, the stamp, the snapshot.
    with django_assert_num_queries(5):
        assert client.get(url).context["recomputed"] is False


def test_the_api_gives_the_reference_under_each_scheme(project, people):
    client = APIClient()
    client.force_authenticate(people["dana"])

    body = client.get(f"/api/v1/projects/{project.name}/agreement").json()

    assert body["annotators"] == ["alice", "bob"] and body["references"] == [REFERENCE_USERNAME]
    [field] = body["schemes"][0]["reference"]["fields"]
    assert measure(field["measures"], "span F1 (exact)")["value"] == pytest.approx(
        (ALICE_AGAINST_REFERENCE + BOB_AGAINST_REFERENCE) / 2
    )


def test_the_command_prints_the_reference_apart_and_gives_it_in_json(project):
    table = io.StringIO()
    call_command("agreement", project.name, stdout=table)
    raw = io.StringIO()
    call_command("agreement", project.name, "--json", stdout=raw)

    text = table.getvalue()
    assert "by 2 annotators" in text
    assert (
        f"against the reference ({REFERENCE_USERNAME}: 1 answer, not an annotator, not counted above)" in text
    )
    assert f"{ALICE_AGAINST_REFERENCE:.3f}  alice" in text
    assert json.loads(raw.getvalue())["schemes"][0]["reference"]["references"] == [REFERENCE_USERNAME]
