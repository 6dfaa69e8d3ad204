"""The rubric admin: YAML checked on the form with each problem's key path, a new
version on each change (older ones read-only), the "evaluate" action, read-only results.

Persona: Alice is a superuser.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from evaluation.models import EvaluationResult, Rubric
from evaluation.services import project_evaluate
from tests.evaluation.samples import RUBRIC_YAML, scheduling_project
from tests.factories import RubricFactory, StaffFactory

pytestmark = pytest.mark.django_db

ADD = reverse("admin:evaluation_rubric_add")
CHANGELIST = reverse("admin:evaluation_rubric_changelist")


@pytest.fixture
def as_alice(client: Client) -> Client:
    alice = StaffFactory(username="alice")
    alice.save(update_fields=["password"])
    client.force_login(alice)
    return client


def form_errors(response: Any) -> list[str]:
    return list(response.context["adminform"].form.errors["yaml"])


def test_a_bad_rubric_is_refused_on_the_form_with_every_problem_located(as_alice):
    bad = RUBRIC_YAML.replace("weight: 0.10", "weight: 0.15").replace(
        "requires: [booking_confirmed]\n    description:", "requires: [booked]\n    description:"
    )

    response = as_alice.post(ADD, {"yaml": bad, "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0})

    assert response.status_code == 200
    assert form_errors(response) == [
        'outcomes[0].requires[0]: unknown key "booked" (criteria and gates are: correct_participants, correct_time, '
        "correct_duration, explored_alternatives, clear_explanation, booking_confirmed)",
        "criteria: the weights sum to 1.05, not 1.0: fix them, or set normalize: true to divide scores by their sum",
    ]
    assert not Rubric.objects.exists()


def test_an_alias_bomb_is_refused_on_the_form_at_once(as_alice):
    """Nested aliases stand for millions of checks: reading them all took seconds and hundreds of MB."""
    bomb = "name: bomb\nx0: &c0 {exists: metadata.a}\n" + "".join(
        f"x{level}: &c{level} {{any: [{', '.join([f'*c{level - 1}'] * 9)}]}}\n" for level in range(1, 7)
    )
    bomb += "criteria:\n  - {key: k, question: q, weight: 1, check: *c6}\noutcomes:\n  - {name: done}\n"

    response = as_alice.post(ADD, {"yaml": bomb, "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0})

    assert response.status_code == 200
    assert form_errors(response) == [
        "line 7 column 31: the document holds more than 100,000 values, aliases counted as the values they "
        "stand for (BRANCHPOINT_YAML_MAX_NODES)"
    ]
    assert not Rubric.objects.exists()


def test_a_rubric_added_in_the_admin_gets_version_one(as_alice):
    response = as_alice.post(
        ADD, {"yaml": RUBRIC_YAML, "versions-TOTAL_FORMS": 0, "versions-INITIAL_FORMS": 0}
    )

    assert response.status_code == 302
    rubric = Rubric.objects.get()
    assert (rubric.name, rubric.title) == ("scheduling", "Scheduling agent (binary weighted evaluation)")
    assert [v.number for v in rubric.versions.all()] == [1]
    assert rubric.versions.get().created_by.username == "alice"


def test_editing_the_yaml_makes_a_new_version_and_keeps_the_old_one(as_alice):
    rubric = RubricFactory(yaml=RUBRIC_YAML)
    url = reverse("admin:evaluation_rubric_change", args=[rubric.pk])
    edited = RUBRIC_YAML.replace("min_score: 0.75", "min_score: 0.8")

    response = as_alice.post(
        url,
        {
            "yaml": edited,
            "versions-TOTAL_FORMS": 1,
            "versions-INITIAL_FORMS": 1,
            "versions-0-id": rubric.versions.get().pk,
            "versions-0-rubric": rubric.pk,
        },
    )

    assert response.status_code == 302
    assert "Saved as version 2; results keep their versions." in [
        str(m) for m in get_messages(response.wsgi_request)
    ]
    assert [(v.number, v.spec["outcomes"][0]["min_score"]) for v in rubric.versions.all()] == [
        (2, 0.8),
        (1, 0.75),
    ]


def test_a_rubric_cannot_be_renamed_through_its_yaml(as_alice):
    rubric = RubricFactory(yaml=RUBRIC_YAML)
    url = reverse("admin:evaluation_rubric_change", args=[rubric.pk])

    response = as_alice.post(
        url,
        {
            "yaml": RUBRIC_YAML.replace("name: scheduling", "name: booking"),
            "versions-TOTAL_FORMS": 0,
            "versions-INITIAL_FORMS": 0,
        },
    )

    assert form_errors(response) == [
        'name: "booking" is not this rubric\'s name: a rubric keeps its name ("scheduling")'
    ]


def test_the_change_page_lists_the_versions_read_only(as_alice):
    rubric = RubricFactory(yaml=RUBRIC_YAML)

    response = as_alice.get(reverse("admin:evaluation_rubric_change", args=[rubric.pk]))

    assert response.status_code == 200
    inline = response.context["inline_admin_formsets"][0]
    assert not inline.has_add_permission and not inline.has_change_permission
    assert (
        b"5 criteria, 1 gate, outcomes: successful_completion, graceful_failure, partial_failure, hard_failure"
        in response.content
    )


def test_the_evaluate_action_asks_for_a_project_then_evaluates_it(as_alice):
    project = scheduling_project()
    rubric = Rubric.objects.get(name="scheduling")
    selected = {"action": "evaluate", "_selected_action": [rubric.pk]}

    asked = as_alice.post(CHANGELIST, selected)
    done = as_alice.post(CHANGELIST, {**selected, "apply": "Evaluate", "project": project.pk})

    assert asked.status_code == 200
    assert b'name="project"' in asked.content
    assert done.status_code == 302
    assert done["Location"] == reverse("evaluation:report", args=["scheduling", "scheduling"])
    assert EvaluationResult.objects.filter(project=project, source="auto").count() == 8
    (message,) = [str(m) for m in get_messages(done.wsgi_request)]
    assert message.startswith("evaluated 8 items of scheduling with rubric scheduling v1")


def test_results_are_listed_read_only(as_alice):
    project = scheduling_project()
    project_evaluate(project=project, rubric=Rubric.objects.get(name="scheduling"))
    result = EvaluationResult.objects.first()

    listing = as_alice.get(reverse("admin:evaluation_evaluationresult_changelist"), {"source": "auto"})
    detail = as_alice.get(reverse("admin:evaluation_evaluationresult_change", args=[result.pk]))

    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 8
    assert detail.status_code == 200
    assert b'<pre class="evaluation-explanation">Outcome successful_completion' in detail.content
    assert b'name="_save"' not in detail.content
