"""Human judges see the conversation metadata their rubric's questions are about.

- A rubric names the metadata two ways: ``show_metadata`` (keys or paths into the tree's
  metadata, checked when the rubric is read), and paths written in a question's text
  (``metadata.x.y``, ``$.x.y``, ``{metadata.x}``). ``show_metadata`` comes first, then the
  questions' in order, each path once.
- The annotate page shows them read-only beside the conversation, as text (JSON for
  anything but a string), escaped; a missing value says so. Without a rubric naming any,
  there is no box.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.work.assignment import item_next
from evaluation.judge_metadata import MAX_CHARS, judge_metadata, judge_metadata_paths, metadata_text
from evaluation.paths import MISSING
from evaluation.rubrics import parse_rubric
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from tests.evaluation.samples import CONVERSATIONS, RUBRIC_YAML
from tests.factories import RubricFactory

RUBRIC = """\
name: booking
criteria:
  - key: right_time
    question: Is the meeting booked at the time the user asked for (metadata.ground_truth.time)?
    weight: 0.5
  - key: right_people
    question: "Were {$.ground_truth.participants} invited, as node.metadata.invitees says?"
    weight: 0.5
gates:
  - key: confirmed
    question: Does metadata.final_state.scheduling_context.booking_confirmed hold, and metadata.ground_truth.time too?
outcomes:
  - {name: any}
show_metadata: [final_state.conversation_stage, "metadata.ground_truth.time"]
"""


def keys(yaml_text: str) -> list[str]:
    spec = parse_rubric(yaml_text)
    return [path.text for path in judge_metadata_paths(spec)]


# -- which keys ----------------------------------------------------------------------------------


def test_show_metadata_comes_first_then_the_paths_questions_name_each_once():
    assert keys(RUBRIC) == [
        "metadata.final_state.conversation_stage",
        "metadata.ground_truth.time",
        "$.ground_truth.participants",
        "metadata.final_state.scheduling_context.booking_confirmed",
    ]


def test_a_question_naming_no_metadata_and_no_show_metadata_show_nothing():
    assert keys(RUBRIC_YAML) == []  # the sample's checks read metadata; its questions name none


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("Is the time right ($.ground_truth.time)?", ["$.ground_truth.time"]),
        ("Is it {metadata.ground_truth.time}.", ["metadata.ground_truth.time"]),
        ('Is metadata["odd.key"].start right?', ['metadata["odd.key"].start']),
        ("Is metadata.slots[0] free?", ["metadata.slots[0]"]),
        ("Does the message's node.metadata.tool say so?", []),  # the judged message's, not the tree's
        ("Is the metadata right? Does it cost $5?", []),
        ("Is $ alone or metadata alone anything?", []),
    ],
)
def test_paths_are_found_in_a_questions_text(question: str, named: list[str]):
    rubric = f"name: r\ncriteria:\n  - {{key: k, question: {json.dumps(question)}, weight: 1}}\noutcomes:\n  - {{name: any}}\n"
    assert keys(rubric) == named


def test_show_metadata_entries_are_checked_with_their_place():
    bad = RUBRIC.replace(
        'show_metadata: [final_state.conversation_stage, "metadata.ground_truth.time"]',
        'show_metadata: [ground_truth, "", 3, "slots[x]"]',
    )
    with pytest.raises(Exception) as refused:
        parse_rubric(bad, python_checks=())
    assert [str(problem) for problem in refused.value.problems] == [
        "show_metadata[1]: must be a metadata key or path (ground_truth.time), got an empty string",
        "show_metadata[2]: must be a metadata key or path (ground_truth.time), got a number",
        'show_metadata[3]: "metadata.slots[x]" is not a path: cannot read "[x]" '
        '(a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps)',
    ]
    with pytest.raises(Exception) as refused:
        parse_rubric(RUBRIC.replace("show_metadata: [", "show_metadata: {a: ").replace('"]', '"}'))
    assert str(refused.value.problems[0]).startswith(
        "show_metadata: must be a list of metadata keys or paths"
    )


def test_show_metadata_is_kept_with_the_rubrics_version():
    spec = parse_rubric(RUBRIC, python_checks=())
    assert spec.as_json()["show_metadata"] == ["final_state.conversation_stage", "metadata.ground_truth.time"]
    assert "show_metadata" not in parse_rubric(RUBRIC_YAML).as_json()


# -- their values, as text -----------------------------------------------------------------------


def test_values_are_text_strings_as_they_are_anything_else_as_json():
    assert metadata_text("2025-03-11T14:00") == "2025-03-11T14:00"
    assert (
        metadata_text(["ana@example.com", "ben@example.com"])
        == '[\n  "ana@example.com",\n  "ben@example.com"\n]'
    )
    assert metadata_text(True) == "true"
    assert metadata_text(None) == "null"
    assert metadata_text(MISSING) is None
    assert metadata_text("x" * (MAX_CHARS + 5)) == "x" * MAX_CHARS + "… (5 more characters)"


def test_judge_metadata_reads_each_path_from_the_trees_metadata():
    spec = parse_rubric(RUBRIC, python_checks=())

    shown = judge_metadata(spec, CONVERSATIONS[0])

    assert shown == [
        ("final_state.conversation_stage", "completed"),
        ("ground_truth.time", "2025-03-11T14:00"),
        ("ground_truth.participants", '[\n  "ana@example.com",\n  "ben@example.com"\n]'),
        ("final_state.scheduling_context.booking_confirmed", "true"),
    ]
    assert judge_metadata(spec, {}) == [(key, None) for key, _ in shown]


# -- on the annotate page ------------------------------------------------------------------------


def annotate_page(project: Any, user: Any) -> Any:
    held = item_next(project=project, user=user)
    client = Client()
    client.force_login(user)
    return client.get(reverse("annotation:item", args=[project.name, held.tree_id]))


@pytest.mark.django_db
def test_the_annotate_page_shows_the_named_metadata_beside_the_conversation_escaped():
    RubricFactory(yaml=RUBRIC)
    alice = person("alice")
    item = {**CONVERSATIONS[0], "final_state": {"conversation_stage": "<b>booked</b>"}}
    config = "annotation_schemes:\n  - {annotation_type: rubric, name: review, description: Review, rubric: booking}\n"
    project = project_over("booking", config, [item], [alice])

    response = annotate_page(project, alice)

    assert response.context["conversation_details"] == [
        ("final_state.conversation_stage", "<b>booked</b>"),
        ("ground_truth.time", "2025-03-11T14:00"),
        ("ground_truth.participants", '[\n  "ana@example.com",\n  "ben@example.com"\n]'),
        ("final_state.scheduling_context.booking_confirmed", None),
    ]
    html = response.content.decode()
    assert "<dd>&lt;b&gt;booked&lt;/b&gt;</dd>" in html
    assert '<dd class="muted">not given for this conversation</dd>' in html


@pytest.mark.django_db
def test_without_a_rubric_naming_metadata_there_is_no_box():
    alice = person("alice")
    config = "annotation_schemes:\n  - {annotation_type: radio, name: overall, description: Overall, labels: [a, b]}\n"
    project = project_over("plain", config, [SEED_ITEM], [alice])

    response = annotate_page(project, alice)

    assert response.context["conversation_details"] == []
    assert "data-conversation-details" not in response.content.decode()
