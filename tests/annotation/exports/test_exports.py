"""Annotation exports: Potato-style records (the documented output for the
documented item), preference pairs from branch comparisons and sibling
ratings, SFT paths — streamed, a constant number of queries per page of trees.

Alice and Bob annotate; their answers are stored as the scheme normalises
them (the seed case goes through the real hand-out and submission).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.exports import annotations_export, get_export
from annotation.exports.pairs import comparison_preferences, rating_preferences
from annotation.exports.rows import Node, TreeText, item_annotations
from annotation.projects.config import project_config
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.factories import AnnotationFactory, DatasetFactory, PotatoTreeFactory, ProjectFactory, UserFactory
from trees.models import ConversationTree, Message

pytestmark = pytest.mark.django_db

POTATO = Path(__file__).resolve().parents[2] / "fixtures" / "potato"
WHEN = datetime(2025, 1, 31, 9, 30, 0, 123456, tzinfo=UTC)
WHEN_TEXT = "2025-01-31T09:30:00.123456Z"


def seed_configs() -> list[str]:
    """The five documented tree_annotation configs, as YAML texts."""
    return (POTATO / "seed_configs.yaml").read_text().split("\n---\n")


def seed_item() -> dict[str, Any]:
    return json.loads((POTATO / "seed_conversation.json").read_text())


def seed_output() -> dict[str, Any]:
    return json.loads((POTATO / "seed_expected_output.json").read_text())


def exported(project, format_name: str, **options: Any) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in annotations_export(project=project, format_name=format_name, **options)
    ]


def node(node_id: str, role: str, text: str, children: list[dict] | None = None) -> dict[str, Any]:
    return {"id": node_id, "role": role, "content": text, "children": children or []}


def branching_item(item_id: str = "shop") -> dict[str, Any]:
    """A conversation that branches three ways after two turns (u2 is the decision point)."""
    replies = [node(f"r{index}", "assistant", f"reply {index}") for index in (1, 2, 3)]
    return {
        "id": item_id,
        "tree": node(
            "root",
            "system",
            "You sell shoes.",
            [node("a1", "assistant", "Hello!", [node("u2", "user", "Any boots?", replies)])],
        ),
    }


PROMPT = [
    {"role": "system", "content": "You sell shoes."},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Any boots?"},
]


def reply(index: int) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": f"reply {index}"}]


def tree_config(name: str, body: str) -> str:
    return (
        f"annotation_schemes:\n  - annotation_type: tree_annotation\n    name: {name}\n"
        f"    description: Judge the replies\n{body}"
    )


COMPARE_PAIRS = seed_configs()[4]  # branch_compare: Better / Same / Worse
COMPARE_RANKING = tree_config("ranked", "    branch_comparison: {enabled: true, mode: ranking}\n")
LIKERT_NODES = tree_config("rated", "    node_scheme: {annotation_type: likert, size: 5}\n")


@pytest.fixture
def alice():
    return UserFactory(username="alice")


@pytest.fixture
def bob():
    return UserFactory(username="bob")


@pytest.fixture
def shop():
    """A project-less dataset holding the branching conversation."""
    dataset = DatasetFactory(name="shop")
    PotatoTreeFactory(dataset=dataset, item=branching_item())
    return dataset


def project_over(dataset, config_yaml: str, name: str = "judging"):
    return ProjectFactory(name=name, dataset=dataset, config_yaml=config_yaml)


def answer(project, user, scheme: str, payload: dict[str, Any], *, item: str = "shop", **fields: Any):
    tree = ConversationTree.objects.get(dataset=project.dataset, external_id=item)
    fields.setdefault("updated_at", WHEN)
    return AnnotationFactory(project=project, tree=tree, user=user, scheme=scheme, payload=payload, **fields)


# -- potato ---------------------------------------------------------------------------


def test_the_documented_item_annotated_as_documented_exports_the_documented_output(alice):
    dataset = DatasetFactory(name="support")
    PotatoTreeFactory(dataset=dataset, item=seed_item())
    project = project_over(dataset, seed_configs()[0])
    assignment = item_next(project=project, user=alice)
    item_submit(
        project=project,
        tree=assignment.tree,
        user=alice,
        answers={
            "response_quality": {
                "node_annotations": {"resp_b": {"rating": 2}, "resp_a": {"rating": 4}},
                "selected_path": ["root", "resp_a", "user_2"],
            }
        },
        version=assignment.version,
    )

    [record] = exported(project, "potato")

    assert record["annotations"] == seed_output()
    assert list(record) == ["id", "user", "status", "annotations", "updated_at"]
    assert (record["id"], record["user"], record["status"]) == ("conv_001", "alice", "submitted")
    assert datetime.fromisoformat(record["updated_at"]) == project.annotations.get().updated_at


def test_one_record_per_item_and_annotator_in_tree_order_then_by_username(alice, bob):
    dataset = DatasetFactory(name="support")
    for item_id in ("first", "second"):
        PotatoTreeFactory(dataset=dataset, item={"id": item_id, "tree": node("root", "user", "Hi")})
    project = ProjectFactory(name="overall", dataset=dataset)  # one likert scheme, "quality"
    answer(project, bob, "quality", {"rating": 2}, item="second")
    answer(project, bob, "quality", {"rating": 5}, item="first")
    answer(project, alice, "quality", {"rating": 4}, item="first")

    assert exported(project, "potato") == [
        {
            "id": "first",
            "user": "alice",
            "status": "submitted",
            "annotations": {"quality": {"rating": 4}},
            "updated_at": WHEN_TEXT,
        },
        {
            "id": "first",
            "user": "bob",
            "status": "submitted",
            "annotations": {"quality": {"rating": 5}},
            "updated_at": WHEN_TEXT,
        },
        {
            "id": "second",
            "user": "bob",
            "status": "submitted",
            "annotations": {"quality": {"rating": 2}},
            "updated_at": WHEN_TEXT,
        },
    ]


def test_a_record_holds_every_scheme_in_config_order_and_the_latest_change(alice, shop):
    config = (
        LIKERT_NODES
        + "  - {annotation_type: radio, name: overall, description: Overall, labels: ['Yes', 'No']}\n"
    )
    project = project_over(shop, config)
    answer(project, alice, "rated", {"node_annotations": {"r1": {"rating": 3}}})
    later = datetime(2025, 2, 1, tzinfo=UTC)
    answer(project, alice, "overall", {"label": "Yes"}, updated_at=later)

    [record] = exported(project, "potato")

    assert list(record["annotations"]) == ["rated", "overall"]
    assert record["updated_at"] == "2025-02-01T00:00:00.000000Z"


def test_only_submitted_answers_are_exported_unless_all_are_asked_for(alice, bob, shop):
    project = project_over(shop, LIKERT_NODES)
    answer(project, alice, "rated", {"node_annotations": {"r1": {"rating": 3}}})
    answer(project, bob, "rated", {"node_annotations": {"r2": {"rating": 1}}}, status="draft")

    assert [(r["user"], r["status"]) for r in exported(project, "potato")] == [("alice", "submitted")]
    assert [(r["user"], r["status"]) for r in exported(project, "potato", status="all")] == [
        ("alice", "submitted"),
        ("bob", "draft"),
    ]


def test_an_export_can_keep_one_annotators_answers(alice, bob, shop):
    project = project_over(shop, LIKERT_NODES)
    answer(project, alice, "rated", {"node_annotations": {"r1": {"rating": 3}}})
    answer(project, bob, "rated", {"node_annotations": {"r2": {"rating": 1}}})

    assert [record["user"] for record in exported(project, "potato", user=bob)] == ["bob"]


def test_an_unknown_format_or_status_is_refused_with_the_choices(shop):
    project = project_over(shop, LIKERT_NODES)

    with pytest.raises(
        ValueError, match=r'unknown format "csv" \(expected one of potato, pairs, sft, ccpe, ccpe-hf\)'
    ):
        get_export("csv")
    with pytest.raises(
        ValueError, match=r'unknown status "draft" \(expected one of submitted, accepted, all, final\)'
    ):
        annotations_export(project=project, format_name="potato", status="draft")


# -- pairs: branch comparisons ----------------------------------------------------------


def comparison(pairs: list[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "branch_comparisons": {
            "u2": {
                "shown_order": ["r2", "r1", "r3"],
                "pairs": [{"a": a, "b": b, "label": label} for a, b, label in pairs],
            }
        }
    }


def test_better_prefers_a_worse_prefers_b_and_same_gives_no_pair(alice, shop):
    project = project_over(shop, COMPARE_PAIRS)
    answer(
        project,
        alice,
        "branch_compare",
        comparison([("r1", "r2", "Better"), ("r1", "r3", "Same"), ("r2", "r3", "Worse")]),
    )

    assert exported(project, "pairs") == [
        {
            "prompt": PROMPT,
            "chosen": reply(1),
            "rejected": reply(2),
            "source": {
                "tree": "shop",
                "parent": "u2",
                "chosen_id": "r1",
                "rejected_id": "r2",
                "kind": "branch_comparison",
                "scheme": "branch_compare",
                "label": "Better",
            },
            "annotator": "alice",
        },
        {
            "prompt": PROMPT,
            "chosen": reply(3),
            "rejected": reply(2),
            "source": {
                "tree": "shop",
                "parent": "u2",
                "chosen_id": "r3",
                "rejected_id": "r2",
                "kind": "branch_comparison",
                "scheme": "branch_compare",
                "label": "Worse",
            },
            "annotator": "alice",
        },
    ]


def test_with_configured_labels_the_first_prefers_a_the_last_prefers_b_and_the_middle_ones_tie(alice, shop):
    labels = "[Much better, Slightly better, Slightly worse, Much worse]"
    project = project_over(
        shop, tree_config("graded", f"    branch_comparison: {{enabled: true, labels: {labels}}}\n")
    )
    answer(
        project,
        alice,
        "graded",
        comparison(
            [("r1", "r2", "Much worse"), ("r1", "r3", "Slightly better"), ("r3", "r2", "Much better")]
        ),
    )

    assert [
        (p["source"]["chosen_id"], p["source"]["rejected_id"], p["source"]["label"])
        for p in exported(project, "pairs")
    ] == [
        ("r2", "r1", "Much worse"),
        ("r3", "r2", "Much better"),
    ]


def test_a_ranking_gives_every_ordered_pair_best_first_without_a_label(alice, shop):
    project = project_over(shop, COMPARE_RANKING)
    answer(
        project,
        alice,
        "ranked",
        {"branch_comparisons": {"u2": {"shown_order": ["r1", "r2", "r3"], "ranking": ["r2", "r3", "r1"]}}},
    )

    pairs = exported(project, "pairs")

    assert [(p["chosen"], p["rejected"]) for p in pairs] == [
        (reply(2), reply(3)),
        (reply(2), reply(1)),
        (reply(3), reply(1)),
    ]
    assert pairs[0]["source"] == {
        "tree": "shop",
        "parent": "u2",
        "chosen_id": "r2",
        "rejected_id": "r3",
        "kind": "branch_comparison",
        "scheme": "ranked",
    }
    assert {p["annotator"] for p in pairs} == {"alice"}
    assert all(p["prompt"] == PROMPT for p in pairs)


def test_an_unanswered_ranking_gives_no_pairs(alice, shop):
    project = project_over(shop, COMPARE_RANKING)
    answer(
        project,
        alice,
        "ranked",
        {"branch_comparisons": {"u2": {"shown_order": ["r1", "r2", "r3"], "ranking": []}}},
    )

    assert exported(project, "pairs") == []


# -- pairs: sibling ratings ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("node_scheme", "key"),
    [
        ("{annotation_type: likert, size: 5}", "rating"),
        ("{annotation_type: number, min: 0, max: 10}", "value"),
        ("{annotation_type: slider}", "value"),
    ],
)
def test_siblings_rated_with_numbers_give_pairs_the_higher_chosen_and_equal_ones_none(
    alice, shop, node_scheme, key
):
    project = project_over(shop, tree_config("rated", f"    node_scheme: {node_scheme}\n"))
    ratings = {"a1": 4, "r1": 5, "r2": 3, "r3": 5}  # a1 has no sibling; r1 and r3 tie
    answer(project, alice, "rated", {"node_annotations": {n: {key: value} for n, value in ratings.items()}})

    assert exported(project, "pairs") == [
        {
            "prompt": PROMPT,
            "chosen": reply(1),
            "rejected": reply(2),
            "source": {
                "tree": "shop",
                "parent": "u2",
                "chosen_id": "r1",
                "rejected_id": "r2",
                "kind": "node_rating",
                "scheme": "rated",
            },
            "annotator": "alice",
        },
        {
            "prompt": PROMPT,
            "chosen": reply(3),
            "rejected": reply(2),
            "source": {
                "tree": "shop",
                "parent": "u2",
                "chosen_id": "r3",
                "rejected_id": "r2",
                "kind": "node_rating",
                "scheme": "rated",
            },
            "annotator": "alice",
        },
    ]


@pytest.mark.parametrize(
    ("node_scheme", "answers"),
    [
        ("{annotation_type: radio, labels: [good, bad]}", [{"label": "good"}, {"label": "bad"}]),
        (
            "{annotation_type: multiselect, labels: [kind, correct]}",
            [{"labels": ["kind", "correct"]}, {"labels": []}],
        ),
        ("{annotation_type: multirate, options: [tone], labels: ['1', '2']}", [{"tone": "2"}, {"tone": "1"}]),
        ("{annotation_type: text}", [{"text": "great"}, {"text": "poor"}]),
    ],
)
def test_siblings_answered_with_labels_or_text_give_no_pairs(alice, shop, node_scheme, answers):
    project = project_over(shop, tree_config("labelled", f"    node_scheme: {node_scheme}\n"))
    answer(project, alice, "labelled", {"node_annotations": {"r1": answers[0], "r2": answers[1]}})

    assert exported(project, "pairs") == []


def test_pairs_quoting_a_deleted_message_are_left_out(alice, shop):
    project = project_over(shop, LIKERT_NODES)
    answer(
        project,
        alice,
        "rated",
        {"node_annotations": {"r1": {"rating": 5}, "r2": {"rating": 3}, "r3": {"rating": 1}}},
    )
    Message.objects.filter(external_id="r2").update(deleted=True)

    assert [(p["source"]["chosen_id"], p["source"]["rejected_id"]) for p in exported(project, "pairs")] == [
        ("r1", "r3")
    ]


def test_preferences_are_plain_functions_of_a_scheme_an_answer_and_a_tree():
    """No database: the rules read a parsed scheme, a payload and the tree's nodes."""
    from annotation.projects.config import parse_config

    tree = TreeText(
        {
            "q": Node(None, "user", "?", 0, False),
            "x": Node("q", "assistant", "x", 0, False),
            "y": Node("q", "assistant", "y", 1, False),
        }
    )
    compare = parse_config(COMPARE_PAIRS).schemes[0]
    rate = parse_config(LIKERT_NODES).schemes[0]

    [by_label] = comparison_preferences(
        compare, {"branch_comparisons": {"q": {"pairs": [{"a": "y", "b": "x", "label": "Better"}]}}}, tree
    )
    [by_rating] = rating_preferences(
        rate, {"node_annotations": {"x": {"rating": 2}, "y": {"rating": 1}}}, tree
    )

    assert (by_label.chosen, by_label.rejected, by_label.label) == ("y", "x", "Better")
    assert (by_rating.chosen, by_rating.rejected, by_rating.kind) == ("x", "y", "node_rating")


# -- sft -------------------------------------------------------------------------------------


def test_each_selected_path_is_a_conversation_from_the_root(alice, bob):
    dataset = DatasetFactory(name="support")
    PotatoTreeFactory(dataset=dataset, item=seed_item())
    project = project_over(dataset, seed_configs()[0])
    tree = dataset.trees.get()
    AnnotationFactory(
        project=project,
        tree=tree,
        user=alice,
        scheme="response_quality",
        payload=seed_output()["response_quality"],
    )
    AnnotationFactory(
        project=project,
        tree=tree,
        user=bob,
        scheme="response_quality",
        payload={"node_annotations": {}, "selected_path": ["root", "resp_b"]},
    )

    assert exported(project, "sft") == [
        {
            "messages": [
                {"role": "user", "content": "Hello, I need help with my order"},
                {"role": "assistant", "content": "I'd be happy to help! Can you provide your order number?"},
                {"role": "user", "content": "It's ORDER-12345"},
            ],
            "source": {"tree": "conv_001", "annotator": "alice", "scheme": "response_quality"},
        },
        {
            "messages": [
                {"role": "user", "content": "Hello, I need help with my order"},
                {"role": "assistant", "content": "Sure, what seems to be the problem?"},
            ],
            "source": {"tree": "conv_001", "annotator": "bob", "scheme": "response_quality"},
        },
    ]


def test_an_empty_path_or_a_scheme_without_path_selection_gives_no_conversation(alice, bob, shop):
    project = project_over(
        shop,
        seed_configs()[2].rstrip()
        + "\n  - {annotation_type: tree_annotation, name: rated, description: Rated, node_scheme: {annotation_type: likert, size: 5}}\n",
    )
    answer(project, alice, "best_path", {"selected_path": []})
    answer(project, bob, "rated", {"node_annotations": {"r1": {"rating": 3}}})

    assert exported(project, "sft") == []


# -- streaming and queries -------------------------------------------------------------------


def test_exports_are_generators_that_read_nothing_until_asked(alice, shop):
    project = project_over(shop, LIKERT_NODES)
    answer(project, alice, "rated", {"node_annotations": {"r1": {"rating": 3}}})

    with CaptureQueriesContext(connection) as queries:
        lines = annotations_export(project=project, format_name="pairs")
    assert len(queries) == 0
    assert next(iter(lines), None) is None  # one rating: no sibling to compare with


def bushy_item(item_id: str, size: int) -> dict[str, Any]:
    """A tree of ``size`` messages: the root's replies each get one reply of their own."""
    replies = [
        node(f"{item_id}-r{i}", "assistant", f"reply {i}", [node(f"{item_id}-u{i}", "user", "ok")])
        for i in range(size // 2)
    ]
    return {"id": item_id, "tree": node("root", "user", "Hi", replies)}


@pytest.mark.parametrize("format_name", ["potato", "pairs", "sft"])
def test_queries_per_page_of_trees_do_not_grow_with_trees_messages_or_annotators(format_name):
    dataset = DatasetFactory(name="bushy")
    for index, size in enumerate([2, 40, 8, 120, 4]):
        PotatoTreeFactory(dataset=dataset, item=bushy_item(f"t{index}", size))
    project = project_over(
        dataset,
        tree_config(
            "both",
            "    node_scheme: {annotation_type: likert, size: 5}\n    path_selection: {enabled: true}\n",
        ),
    )
    users = [UserFactory(username=f"annotator{index}") for index in range(3)]
    for tree in dataset.trees.all():
        for rating, user in enumerate(users, start=1):
            payload = {
                "node_annotations": {
                    f"{tree.external_id}-r0": {"rating": rating},
                    f"{tree.external_id}-r1": {"rating": 5},
                },
                "selected_path": ["root"],
            }
            AnnotationFactory(project=project, tree=tree, user=user, scheme="both", payload=payload)
    config = project_config(project)
    writer = get_export(format_name)

    with CaptureQueriesContext(connection) as queries:
        lines = list(
            writer.write(item_annotations(project=project, with_text=writer.NEEDS_TEXT, chunk_size=2), config)
        )

    per_page = 3 if writer.NEEDS_TEXT else 2
    assert len(queries) == 3 * per_page  # pages of 2, 2 and 1 trees; the short last page ends it
    # 5 trees x 3 annotators; pairs only where a tree has both r0 and r1 (4 trees).
    assert len(lines) == {"potato": 15, "pairs": 12, "sft": 15}[format_name]
