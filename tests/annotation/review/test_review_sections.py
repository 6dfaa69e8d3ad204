"""Answers laid side by side for review (``answer_sections``): plain data in, rows out, no database.

Each documented tree_annotation config gives rows a reviewer can read across:
the path, each compared decision point, then each message with every
annotator's answer about it; item-level schemes share one section.
"""

from __future__ import annotations

from typing import Any

from annotation.models import Assignment
from annotation.projects.config import parse_config
from annotation.review.selectors import Column, answer_sections
from tests.annotation.annotator_items import BRANCH_COMPARE, MULTI_CRITERIA
from trees.selectors import OutlineRow


def outline(*nodes: tuple[str, str | None, str]) -> list[OutlineRow]:
    """Rows in preorder from (id, parent, role); depths follow the parents."""
    depth: dict[str | None, int] = {None: -1}
    rows = []
    for index, (node, parent, role) in enumerate(nodes):
        depth[node] = depth[parent] + 1
        children = sum(1 for _, other_parent, _ in nodes if other_parent == node)
        rows.append(
            OutlineRow(
                pk=index + 1,
                external_id=node,
                parent_external_id=parent,
                role=role,
                text=f"text of {node}",
                html=f"<p>text of {node}</p>\n",
                lang=None,
                synthetic=False,
                model_name=None,
                rank=None,
                deleted=False,
                depth=depth[node],
                child_count=children,
                sibling_index=0,
                sibling_count=1,
            )
        )
    return rows


SEED = outline(
    ("root", None, "user"),
    ("resp_a", "root", "assistant"),
    ("user_2", "resp_a", "user"),
    ("resp_b", "root", "assistant"),
)


def columns(*answers: dict[str, Any]) -> list[Column]:
    return [Column(Assignment(), dict(answer)) for answer in answers]


def cells(sections: list[Any]) -> dict[str, list[str]]:
    return {row.label: row.cells for section in sections for row in section.rows}


def test_branch_comparisons_read_as_pairs_with_their_labels_at_each_decision_point():
    schemes = parse_config(BRANCH_COMPARE).schemes
    shown = {"shown_order": ["resp_b", "resp_a"]}
    first = {
        "branch_compare": {
            "branch_comparisons": {
                "root": shown | {"pairs": [{"a": "resp_a", "b": "resp_b", "label": "Better"}]}
            }
        }
    }
    second = {"branch_compare": {"branch_comparisons": {"root": shown | {"pairs": []}}}}

    [section] = answer_sections(schemes, columns(first, second), SEED)

    assert section.by_node
    rows = cells([section])
    assert rows["replies to root"] == ["resp_a vs resp_b: Better", ""]
    # The node scheme's labels are the comparison's here: messages are not rated one by one.
    assert rows["resp_a"] == ["", ""]
    assert [row.label for row in section.rows] == ["replies to root", "root", "resp_a", "user_2", "resp_b"]


def test_a_ranking_reads_best_first():
    config = BRANCH_COMPARE.replace("enabled: true", "enabled: true\n      mode: ranking")
    schemes = parse_config(config).schemes
    ranked = {
        "branch_compare": {
            "branch_comparisons": {
                "root": {"shown_order": ["resp_a", "resp_b"], "ranking": ["resp_b", "resp_a"]}
            }
        }
    }

    [section] = answer_sections(schemes, columns(ranked), SEED)

    assert cells([section])["replies to root"] == ["best first: resp_b > resp_a"]


def test_multirate_node_answers_read_option_by_option_and_differences_are_marked():
    schemes = parse_config(MULTI_CRITERIA).schemes
    grid = {"Relevance": "5", "Fluency": "4", "Helpfulness": "5"}
    first = {"multi_criteria": {"node_annotations": {"resp_a": grid}}}
    second = {"multi_criteria": {"node_annotations": {"resp_a": grid | {"Fluency": "2"}}}}

    [section] = answer_sections(schemes, columns(first, second), SEED)

    by_label = {row.label: row for row in section.rows}
    assert by_label["resp_a"].cells == [
        "Relevance: 5; Fluency: 4; Helpfulness: 5",
        "Relevance: 5; Fluency: 2; Helpfulness: 5",
    ]
    assert by_label["resp_a"].differ and by_label["resp_a"].answered
    assert not by_label["resp_b"].differ and not by_label["resp_b"].answered
    assert by_label["resp_a"].node.external_id == "resp_a"


def test_item_level_schemes_share_one_section_and_an_unanswered_scheme_is_blank():
    schemes = parse_config(
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Great}\n"
        "  - {annotation_type: multiselect, name: issues, description: Issues, labels: [rude, wrong, long]}\n"
        "  - {annotation_type: text, name: notes, description: Notes}\n"
    ).schemes
    first = {"quality": {"rating": 5}, "issues": {"labels": ["wrong", "long"]}, "notes": {"text": "Fine."}}
    second = {"quality": {"rating": 2}}

    [section] = answer_sections(schemes, columns(first, second), SEED)

    assert not section.by_node
    assert [(row.label, row.cells) for row in section.rows] == [
        ("quality", ["5 of 5 (Great)", "2 of 5"]),
        ("issues", ["wrong, long", ""]),
        ("notes", ["Fine.", ""]),
    ]
