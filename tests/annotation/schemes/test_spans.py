"""The span scheme: its config, the payload it answers with, how that is
normalised so annotators' spans compare, and every way a span can be wrong —
on linear dialogues and on the nodes of branching trees alike."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.imports.annotations import annotations_import
from annotation.models import Annotation
from annotation.problems import Problems, ProblemsError
from annotation.projects.config import parse_config
from annotation.schemes.span import Span, span_key
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_answers
from tests.annotation.annotator_items import SEED_ITEM, person, project_over
from trees.selectors import tree_shape
from trees.shapes import TreeShape

ENTITIES = """\
annotation_type: span
name: entities
description: Mark the movie preferences
labels:
  - {name: ENTITY_NAME, key_value: n, color: "#2563eb"}
  - ENTITY_PREFERENCE
attributes:
  - {name: entityType, labels: [MOVIE_GENRE_OR_CATEGORY, MOVIE_OR_SERIES]}
"""
# A dialogue as CCPE makes it: a chain of utterances named by their index.
DIALOGUE = TreeShape.from_rows(
    [
        ("0", None, 0, "assistant", "generally speaking what type of movies do you watch"),
        ("1", "0", 0, "user", "I like thrillers a lot."),
        ("2", "1", 0, "assistant", "thrillers? for example?"),
    ]
)


def scheme_from(text: str) -> Span:
    """The span scheme of one config entry (a block mapping), given the description Potato
    requires when it has none: these tests are about the span type's own keys."""
    if "description:" not in text:
        text = "description: Mark the spans\n" + text
    entry = "\n".join("    " + line for line in text.splitlines()).replace("    ", "  - ", 1)
    scheme = parse_config(f"annotation_schemes:\n{entry}\n").schemes[0]
    assert isinstance(scheme, Span)
    return scheme


def config_problems(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        scheme_from(text)
    return [str(problem) for problem in error.value.problems]


def normalised(payload: Any, scheme_text: str = ENTITIES, tree: TreeShape = DIALOGUE) -> Any:
    problems = Problems()
    value = scheme_from(scheme_text).validate(payload, "entities", problems, tree)
    assert [str(problem) for problem in problems.items] == []
    return value


def payload_problems(payload: Any, scheme_text: str = ENTITIES, tree: TreeShape = DIALOGUE) -> list[str]:
    problems = Problems()
    assert scheme_from(scheme_text).validate(payload, "entities", problems, tree) is None
    return [str(problem) for problem in problems.items]


def span(node: str, start: int, end: int, text: str, label: str = "ENTITY_NAME", **attributes: str) -> dict:
    return {
        "node": node,
        "start": start,
        "end": end,
        "text": text,
        "label": label,
        "attributes": attributes or {"entityType": "MOVIE_GENRE_OR_CATEGORY"},
    }


THRILLERS = span("1", 7, 16, "thrillers")
LIKE_THRILLERS = span("1", 0, 22, "I like thrillers a lot", "ENTITY_PREFERENCE")


# Config


def test_labels_carry_keys_and_colours_and_attributes_are_further_label_sets():
    config = scheme_from(ENTITIES).as_config()

    assert config == {
        "annotation_type": "span",
        "name": "entities",
        "description": "Mark the movie preferences",
        "labels": [{"name": "ENTITY_NAME", "key_value": "n", "color": "#2563eb"}, "ENTITY_PREFERENCE"],
        "attributes": [
            {"name": "entityType", "labels": ["MOVIE_GENRE_OR_CATEGORY", "MOVIE_OR_SERIES"], "required": True}
        ],
        "allow_overlap": True,
    }


def test_a_span_scheme_needs_labels_and_well_formed_attributes():
    assert config_problems("annotation_type: span\nname: s\nattributes: {entityType: [A]}") == [
        "annotation_schemes[0].labels: is required (a list of labels)",
        "annotation_schemes[0].attributes: must be a list of {name, labels}, got a mapping",
    ]
    assert config_problems(
        "annotation_type: span\nname: s\nlabels: [A]\nattributes:\n  - {name: kind}\n  - {labels: [x]}\n"
        "  - {name: kind, labels: [y], colour: red}"
    ) == [
        "annotation_schemes[0].attributes[0].labels: is required (a list of labels)",
        "annotation_schemes[0].attributes[1].name: is required (a non-empty string)",
        "annotation_schemes[0].attributes[2].colour: unknown key",
        'annotation_schemes[0].attributes[2].name: repeats the attribute "kind" '
        "(first at annotation_schemes[0].attributes[0])",
    ]


def test_imported_spans_come_from_ccpe_whose_labels_the_scheme_must_have():
    assert config_problems(ENTITIES + "import_spans: brat\n") == [
        'annotation_schemes[0].import_spans: "brat" is not a corpus we import spans from (expected ccpe)'
    ]
    assert config_problems(ENTITIES + "allow_overlap: false\nimport_spans: ccpe\n") == [
        "annotation_schemes[0].import_spans: ccpe's spans nest and overlap: allow_overlap must stay true",
        "annotation_schemes[0].import_spans: ccpe needs the labels ENTITY_DESCRIPTION, ENTITY_OTHER "
        "(CCPE's annotation types)",
        "annotation_schemes[0].import_spans: ccpe needs the entityType labels PERSON, SOMETHING_ELSE",
    ]


# Payloads


def test_a_span_names_its_node_offsets_text_label_and_attributes():
    assert normalised({"spans": [THRILLERS]}) == {"spans": [THRILLERS]}


def test_spans_may_nest_and_overlap_by_default():
    crossing = span("1", 2, 16, "like thrillers", "ENTITY_PREFERENCE")
    spans = [LIKE_THRILLERS, THRILLERS, crossing, span("1", 7, 22, "thrillers a lot", "ENTITY_PREFERENCE")]

    assert len(normalised({"spans": spans})["spans"]) == 4


def test_equal_answers_are_equal_payloads_whatever_order_they_came_in():
    first = normalised({"spans": [span("2", 0, 9, "thrillers"), THRILLERS, LIKE_THRILLERS]})
    second = normalised(
        {
            "spans": [
                LIKE_THRILLERS,
                {**THRILLERS, "attributes": dict(THRILLERS["attributes"])},
                span("2", 0, 9, "thrillers"),
            ]
        }
    )

    assert first == second
    # By node in document order, then start, end, label and attributes.
    assert [(s["node"], s["start"], s["end"]) for s in first["spans"]] == [
        ("1", 0, 22),
        ("1", 7, 16),
        ("2", 0, 9),
    ]


def test_one_stretch_of_text_may_carry_several_labels():
    both = [THRILLERS, {**THRILLERS, "label": "ENTITY_PREFERENCE"}]

    assert [s["label"] for s in normalised({"spans": both})["spans"]] == ["ENTITY_NAME", "ENTITY_PREFERENCE"]


def test_span_keys_compare_annotators_spans_by_node_offsets_label_and_attributes():
    assert span_key(THRILLERS) == ("1", 7, 16, "ENTITY_NAME", (("entityType", "MOVIE_GENRE_OR_CATEGORY"),))


def test_no_spans_is_an_empty_answer():
    scheme = scheme_from(ENTITIES)

    assert normalised({}) == {"spans": []}
    assert scheme.is_empty({"spans": []}) and not scheme.is_empty({"spans": [THRILLERS]})


def test_offsets_count_characters_not_utf16_units():
    tree = TreeShape.from_rows([("0", None, 0, "user", "🎬 I loved Amélie")])

    assert normalised({"spans": [span("0", 10, 16, "Amélie")]}, tree=tree)["spans"][0]["text"] == "Amélie"


def test_a_bad_span_is_named_by_its_place_and_says_what_is_wrong():
    assert payload_problems(
        {
            "spans": [
                THRILLERS,
                span("9", 0, 1, "x"),
                span("1", 7, 40, "thrillers"),
                span("1", 7, 15, "thrillers"),
                span("1", 9, 9, ""),
                span("1", -1, 3, "I l"),
                {**THRILLERS, "label": "ENTITY_OTHER"},
                {"node": "1", "start": "7", "end": 16.0, "text": "thrillers", "label": "ENTITY_NAME"},
            ]
        }
    ) == [
        'entities.spans[1].node: no node "9" in this tree',
        'entities.spans[2].end: 40 is past the end of the text of node "1" (23 characters)',
        'entities.spans[3].text: "thrillers" is not the text of node "1" from 7 to 15 ("thriller")',
        "entities.spans[4].end: must be greater than start (9), got 9",
        "entities.spans[5].start: must be 0 or more, got -1",
        'entities.spans[6].label: "ENTITY_OTHER" is not one of the labels (ENTITY_NAME, ENTITY_PREFERENCE)',
        "entities.spans[7].start: must be an integer, got a string",
        "entities.spans[7].end: must be an integer, got a number",
    ]


def test_attributes_must_be_answered_from_their_own_labels():
    assert payload_problems(
        {
            "spans": [
                {**THRILLERS, "attributes": {}},
                {**THRILLERS, "attributes": {"entityType": "PERSON"}},
                {**THRILLERS, "attributes": {"entityType": "MOVIE_OR_SERIES", "mood": "glad"}},
            ]
        }
    ) == [
        "entities.spans[0].attributes: entityType is required (one of MOVIE_GENRE_OR_CATEGORY, MOVIE_OR_SERIES)",
        'entities.spans[1].attributes.entityType: "PERSON" is not one of its labels '
        "(MOVIE_GENRE_OR_CATEGORY, MOVIE_OR_SERIES)",
        "entities.spans[2].attributes.mood: no attribute of that name (expected entityType)",
    ]


def test_a_span_may_not_repeat_another_and_has_only_its_keys():
    assert payload_problems({"spans": [THRILLERS, LIKE_THRILLERS, dict(THRILLERS)]}) == [
        "entities.spans[2]: repeats entities.spans[0] (same node, offsets, label and attributes)"
    ]
    assert payload_problems({"spans": [{**THRILLERS, "colour": "red"}]}) == [
        "entities.spans[0].colour: unknown key (expected attributes, end, label, node, start, text)"
    ]
    assert payload_problems({"spans": "thrillers"}) == [
        "entities.spans: must be a list of spans, got a string"
    ]


def test_without_allow_overlap_spans_of_one_node_may_not_share_text():
    scheme = ENTITIES + "allow_overlap: false\n"

    assert payload_problems({"spans": [LIKE_THRILLERS, THRILLERS]}, scheme) == [
        'entities.spans[1]: overlaps entities.spans[0] ("I like thrillers a lot", 0 to 22 on node "1"): '
        "this scheme does not allow overlapping spans"
    ]
    assert (
        len(
            normalised(
                {"spans": [span("1", 0, 6, "I like"), THRILLERS, span("2", 0, 9, "thrillers")]}, scheme
            )["spans"]
        )
        == 3
    )


def test_spans_work_on_the_nodes_of_a_branching_tree():
    tree = TreeShape.from_rows(
        [
            ("root", None, 0, "user", "Hello, I need help with my order"),
            ("resp_b", "root", 1, "assistant", "Sure, what is the order number?"),
            ("resp_a", "root", 0, "assistant", "I can help! Which order?"),
        ]
    )
    spans = [span("resp_b", 18, 30, "order number"), span("root", 27, 32, "order")]

    assert [s["node"] for s in normalised({"spans": spans}, tree=tree)["spans"]] == ["root", "resp_b"]


def test_span_payloads_are_only_checked_against_a_tree_with_its_texts():
    without_texts = TreeShape.from_rows([("0", None, 0, "user")])

    with pytest.raises(ValueError, match="checked against their tree's texts"):
        scheme_from(ENTITIES).validate({"spans": []}, "entities", Problems(), without_texts)


# Saving, through the services and the API


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def potato_project(alice: Any) -> Any:
    config = "annotation_schemes:\n  - " + "\n    ".join(ENTITIES.splitlines()) + "\n"
    return project_over("orders", config, [SEED_ITEM], [alice])


@pytest.mark.django_db
def test_the_tree_shape_loads_texts_only_when_asked_still_in_one_query(
    potato_project, django_assert_num_queries
):
    tree = potato_project.dataset.trees.get()

    with django_assert_num_queries(1):
        plain = tree_shape(tree)
    with django_assert_num_queries(1):
        with_texts = tree_shape(tree, with_texts=True)

    assert plain.texts == {} and not plain.with_texts
    assert with_texts.texts["resp_b"] == SEED_ITEM["tree"]["children"][1]["content"]


@pytest.mark.django_db
def test_a_draft_keeps_spans_on_a_branch_of_a_tree(potato_project, alice):
    held = item_next(project=potato_project, user=alice)
    text = SEED_ITEM["tree"]["children"][1]["content"]
    start = text.index("problem")
    answer = {"spans": [span("resp_b", start, start + 7, "problem")]}

    draft_save(project=potato_project, tree=held.tree, user=alice, answers={"entities": answer}, version=1)

    assert item_answers(project=potato_project, tree=held.tree, user=alice).payloads == {"entities": answer}


@pytest.mark.django_db
def test_the_api_refuses_a_bad_span_with_a_400_naming_it(potato_project, alice):
    held = item_next(project=potato_project, user=alice)
    client = Client()
    client.force_login(alice)
    url = reverse("api:item-draft", kwargs={"name": potato_project.name, "tree_id": held.tree_id})
    body = {"annotations": {"entities": {"spans": [span("resp_a", 0, 5, "Sorry")]}}, "version": 1}

    response = client.put(url, data=json.dumps(body), content_type="application/json")

    assert response.status_code == 400
    text = SEED_ITEM["tree"]["children"][0]["content"]
    assert response.json()["errors"] == [
        {
            "code": "invalid",
            "path": "entities.spans[0].text",
            "message": f'"Sorry" is not the text of node "resp_a" from 0 to 5 ("{text[:5]}")',
        }
    ]
    assert not Annotation.objects.filter(user=alice).exists()


@pytest.mark.django_db
def test_imported_answers_are_checked_against_the_texts_too(potato_project):
    records = [
        {
            "id": "conv_001",
            "user": "bob",
            "annotations": {"entities": {"spans": [span("root", 0, 5, "Howdy")]}},
        }
    ]

    report = annotations_import(project=potato_project, source=io.BytesIO(json.dumps(records).encode()))

    assert [str(error) for error in report.errors] == [
        'line 1: annotations.entities.spans[0].text: "Howdy" is not the text of node "root" from 0 to 5 ("Hello")'
    ]
