"""tree_annotation answers, checked on the server: the documented payload comes
out exactly, every bad payload is refused with its path and reason and
nothing is saved, and the sibling order shown for comparisons is random,
stored and kept.

The tree is Potato's documented conversation: root → resp_a → user_2, and
root → resp_b.
"""

import json
from pathlib import Path

import pytest

from annotation.models import Annotation, Assignment, ProjectItem
from annotation.problems import Problems, ProblemsError
from annotation.projects.config import parse_config
from annotation.work.assignment import item_next
from annotation.work.submissions import StaleVersion, draft_save, item_answers, item_submit
from tests.factories import DatasetFactory, PersonaFactory, PotatoTreeFactory, ProjectFactory
from trees.shapes import TreeShape

pytestmark = pytest.mark.django_db

POTATO = Path(__file__).resolve().parents[2] / "fixtures" / "potato"
SEED_ITEM = json.loads((POTATO / "seed_conversation.json").read_text())
EXPECTED = json.loads((POTATO / "seed_expected_output.json").read_text())
SEED_CONFIGS = (POTATO / "seed_configs.yaml").read_text().split("\n---\n")
RESPONSE_QUALITY, RESPONSE_RATING, BEST_PATH, MULTI_CRITERIA, BRANCH_COMPARE = SEED_CONFIGS

COMPARE = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    node_scheme: {annotation_type: likert, size: 5}
    path_selection: {enabled: true}
    branch_comparison: {enabled: true}
"""
RANK = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: rank
    description: Rank
    branch_comparison: {enabled: true, mode: ranking}
"""


def wide_item(item_id: str, replies: int = 4) -> dict:
    """root with ``replies`` answers r0, r1, ...; r0 has two replies of its own."""
    children = [
        {"id": f"r{index}", "role": "assistant", "content": f"answer {index}"} for index in range(replies)
    ]
    children[0]["children"] = [
        {"id": "u0", "role": "user", "content": "thanks"},
        {"id": "u1", "role": "user", "content": "no"},
    ]
    return {
        "id": item_id,
        "tree": {"id": "root", "role": "user", "content": "question", "children": children},
    }


@pytest.fixture
def alice():
    return PersonaFactory(username="alice")


def leased_project(config_yaml: str, user, item: dict = SEED_ITEM):
    dataset = DatasetFactory()
    PotatoTreeFactory(dataset=dataset, item=item)
    project = ProjectFactory(dataset=dataset, config_yaml=config_yaml)
    return project, item_next(project=project, user=user)


def write(assignment: Assignment, answers: dict, *, submit: bool = True) -> Assignment:
    save = item_submit if submit else draft_save
    return save(
        project=assignment.project,
        tree=assignment.tree,
        user=assignment.user,
        answers=answers,
        version=assignment.version,
    )


def db_state() -> tuple:
    return (
        list(Annotation.objects.order_by("pk").values()),
        list(Assignment.objects.order_by("pk").values()),
        list(ProjectItem.objects.order_by("pk").values()),
    )


def refused(assignment: Assignment, answers: dict, *, submit: bool = True) -> list[str]:
    """The problems a write is refused with, after checking it changed nothing."""
    before = db_state()
    with pytest.raises(ProblemsError) as error:
        write(assignment, answers, submit=submit)
    assert db_state() == before
    return [str(problem) for problem in error.value.problems]


def stored(assignment: Assignment, scheme: str) -> dict:
    return Annotation.objects.get(tree=assignment.tree, user=assignment.user, scheme=scheme).payload


# -- the documented case ------------------------------------------------------------


def test_the_documented_answer_comes_out_exactly_as_documented(alice):
    project, assignment = leased_project(RESPONSE_QUALITY, alice)

    write(
        assignment,
        {
            "response_quality": {
                "selected_path": ["root", "resp_a", "user_2"],
                "node_annotations": {"resp_b": {"rating": 2}, "resp_a": {"rating": 4}},
            }
        },
    )

    answers = item_answers(project=project, tree=assignment.tree, user=alice)
    assert answers.payloads == EXPECTED
    assert answers.annotations["response_quality"].status == Annotation.Status.SUBMITTED


def test_the_normalised_payload_keeps_the_documented_key_order():
    scheme = parse_config(RESPONSE_QUALITY).schemes[0]
    shape = TreeShape.from_rows(
        [
            ("root", None, 0, "user"),
            ("resp_a", "root", 0, "assistant"),
            ("resp_b", "root", 1, "assistant"),
            ("user_2", "resp_a", 0, "user"),
        ]
    )
    problems = Problems()

    value = scheme.validate(
        {
            "selected_path": ["root", "resp_a", "user_2"],
            "node_annotations": {"resp_b": {"rating": 2}, "resp_a": {"rating": 4}},
        },
        "response_quality",
        problems,
        shape,
    )

    assert not problems
    assert json.dumps({"response_quality": value}) == json.dumps(EXPECTED)


def test_rating_a_node_off_the_selected_path_leaves_the_path_as_it_is(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)
    write(assignment, {"response_quality": {"selected_path": ["root", "resp_a"]}}, submit=False)
    assignment.refresh_from_db()

    write(
        assignment,
        {
            "response_quality": {
                "selected_path": ["root", "resp_a"],
                "node_annotations": {"resp_b": {"rating": 5}},
            }
        },
        submit=False,
    )

    assert stored(assignment, "response_quality") == {
        "node_annotations": {"resp_b": {"rating": 5}},
        "selected_path": ["root", "resp_a"],
    }


def test_a_cleared_node_answer_is_dropped(alice):
    _, assignment = leased_project(RESPONSE_RATING, alice)

    write(
        assignment,
        {"response_rating": {"node_annotations": {"resp_a": {"rating": 3}, "resp_b": {}, "root": None}}},
    )

    assert stored(assignment, "response_rating") == {"node_annotations": {"resp_a": {"rating": 3}}}


def test_any_value_scheme_can_rate_nodes_as_the_documented_multirate_one_does(alice):
    _, assignment = leased_project(MULTI_CRITERIA, alice)

    write(
        assignment, {"multi_criteria": {"node_annotations": {"resp_a": {"Fluency": "4", "Relevance": "5"}}}}
    )

    assert stored(assignment, "multi_criteria") == {
        "node_annotations": {"resp_a": {"Relevance": "5", "Fluency": "4"}}
    }


def test_a_path_only_scheme_answers_with_the_path_alone(alice):
    _, assignment = leased_project(BEST_PATH, alice)

    write(assignment, {"best_path": {"selected_path": ["root", "resp_b"]}})

    assert stored(assignment, "best_path") == {"selected_path": ["root", "resp_b"]}


# -- every bad payload: refused with its path and reason, nothing saved ------------------


def test_a_selected_path_must_start_at_the_root(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["resp_a", "user_2"]}}) == [
        'response_quality.selected_path[0]: a path starts at the root "root", not "resp_a"'
    ]


def test_a_path_that_jumps_to_another_branch_is_refused(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["root", "resp_b", "user_2"]}}) == [
        'response_quality.selected_path[2]: "user_2" is not a reply to "resp_b", the node before it'
    ]


def test_a_path_that_skips_a_generation_is_refused(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["root", "user_2"]}}) == [
        'response_quality.selected_path[1]: "user_2" is not a reply to "root", the node before it'
    ]


def test_a_path_that_goes_back_up_is_refused(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["root", "resp_a", "root"]}}) == [
        'response_quality.selected_path[2]: "root" is not a reply to "resp_a", the node before it'
    ]


@pytest.mark.parametrize(("node", "shown"), [("resp_z", '"resp_z"'), (3, "a number"), (None, "null")])
def test_a_path_through_a_node_that_is_not_in_the_tree_is_refused(alice, node, shown):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["root", node]}}) == [
        f"response_quality.selected_path[1]: {shown} is not a node of this tree"
    ]


def test_a_selected_path_must_be_a_list(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": "root/resp_a"}}) == [
        "response_quality.selected_path: must be a list of node ids, got a string"
    ]


@pytest.mark.parametrize(
    ("rating", "message"),
    [
        (6, "must be from 1 to 5, got 6"),
        (0, "must be from 1 to 5, got 0"),
        ("4", "must be an integer from 1 to 5, got a string"),
    ],
)
def test_a_node_rating_out_of_range_is_refused(alice, rating, message):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(
        assignment, {"response_quality": {"node_annotations": {"resp_a": {"rating": rating}}}}
    ) == [f"response_quality.node_annotations.resp_a.rating: {message}"]


def test_a_rating_of_a_node_that_is_not_in_the_tree_is_refused(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"node_annotations": {"resp_z": {"rating": 3}}}}) == [
        'response_quality.node_annotations.resp_z: no node "resp_z" in this tree'
    ]


def test_node_annotations_must_be_an_object_of_node_answers(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"node_annotations": [{"rating": 3}]}}) == [
        "response_quality.node_annotations: must be an object of node id: answer, got a list"
    ]


def test_a_node_answer_in_the_wrong_shape_is_refused_with_its_node(alice):
    _, assignment = leased_project(MULTI_CRITERIA, alice)

    assert refused(assignment, {"multi_criteria": {"node_annotations": {"resp_b": {"Tone": "3"}}}}) == [
        "multi_criteria.node_annotations.resp_b.Tone: is not one of the options (Relevance, Fluency, Helpfulness)"
    ]


def test_a_pair_that_compares_nodes_that_are_not_siblings_is_refused(alice):
    _, assignment = leased_project(COMPARE, alice)
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "user_2", "label": "Better"}]

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}}
    ) == [
        "compare.branch_comparisons.root.pairs[0]: a and b must be two different replies among ['resp_a', 'resp_b']"
    ]


def test_a_pair_that_compares_a_reply_with_itself_is_refused(alice):
    _, assignment = leased_project(COMPARE, alice)
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "resp_a", "label": "Same"}]

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}}
    ) == [
        "compare.branch_comparisons.root.pairs[0]: a and b must be two different replies among ['resp_a', 'resp_b']"
    ]


def test_a_pair_must_use_one_of_the_comparison_labels(alice):
    _, assignment = leased_project(COMPARE, alice)
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "resp_b", "label": "Good"}]

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}}
    ) == [
        'compare.branch_comparisons.root.pairs[0].label: "Good" is not one of the labels (Better, Same, Worse)'
    ]


@pytest.mark.parametrize(
    "pair",
    [
        {"a": "resp_a", "b": "resp_b"},
        {"a": "resp_a", "b": "resp_b", "label": "Better", "why": "x"},
        "resp_a>resp_b",
    ],
)
def test_a_pair_must_have_exactly_a_b_and_label(alice, pair):
    _, assignment = leased_project(COMPARE, alice)
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": [pair]}}}}
    ) == ["compare.branch_comparisons.root.pairs[0]: must be an object with exactly a, b and label"]


def test_the_same_two_replies_cannot_be_compared_twice(alice):
    _, assignment = leased_project(COMPARE, alice)
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]
    pairs = [
        {"a": "resp_a", "b": "resp_b", "label": "Better"},
        {"a": "resp_b", "b": "resp_a", "label": "Worse"},
    ]

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}}
    ) == [
        "compare.branch_comparisons.root.pairs[1]: compares resp_b and resp_a again (first at compare.branch_comparisons.root.pairs[0])"
    ]


def test_a_comparison_under_a_node_with_one_reply_is_refused(alice):
    _, assignment = leased_project(COMPARE, alice)

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"resp_a": {"shown_order": ["user_2"], "pairs": []}}}}
    ) == ['compare.branch_comparisons.resp_a: "resp_a" is not a decision point (fewer than two replies)']


def test_a_comparison_under_a_node_that_is_not_in_the_tree_is_refused(alice):
    _, assignment = leased_project(COMPARE, alice)

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"resp_z": {"shown_order": [], "pairs": []}}}}
    ) == ['compare.branch_comparisons.resp_z: no node "resp_z" in this tree']


@pytest.mark.parametrize("shown", [["resp_a"], ["resp_a", "resp_a"], ["resp_a", "resp_b", "user_2"], None])
def test_a_comparison_must_say_the_order_its_replies_were_shown_in(alice, shown):
    _, assignment = leased_project(COMPARE, alice)

    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": []}}}}
    ) == [
        "compare.branch_comparisons.root.shown_order: must list the replies of \"root\" once each: ['resp_a', 'resp_b']"
    ]


def test_a_part_the_scheme_does_not_enable_is_refused(alice):
    _, assignment = leased_project(BEST_PATH, alice)

    assert refused(
        assignment,
        {
            "best_path": {
                "selected_path": ["root"],
                "node_annotations": {"resp_a": {"rating": 3}},
                "notes": "?",
            }
        },
    ) == [
        "best_path.node_annotations: is not enabled in this scheme",
        "best_path.notes: is not part of tree_annotation",
    ]


def test_a_tree_annotation_answer_must_be_an_object(alice):
    _, assignment = leased_project(BEST_PATH, alice)

    assert refused(assignment, {"best_path": ["root", "resp_a"]}) == [
        "best_path: must be an object, got a list"
    ]


def test_every_problem_in_a_payload_is_reported_together(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(
        assignment,
        {
            "response_quality": {
                "node_annotations": {"resp_a": {"rating": 9}, "resp_q": {"rating": 1}},
                "selected_path": ["resp_a"],
            }
        },
    ) == [
        "response_quality.node_annotations.resp_a.rating: must be from 1 to 5, got 9",
        'response_quality.node_annotations.resp_q: no node "resp_q" in this tree',
        'response_quality.selected_path[0]: a path starts at the root "root", not "resp_a"',
    ]


def test_a_bad_draft_is_refused_like_a_bad_submission(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)

    assert refused(assignment, {"response_quality": {"selected_path": ["root", "user_2"]}}, submit=False) == [
        'response_quality.selected_path[1]: "user_2" is not a reply to "root", the node before it'
    ]


def test_a_stale_version_gets_a_conflict_not_a_silent_overwrite(alice):
    _, assignment = leased_project(RESPONSE_QUALITY, alice)
    old_version = assignment.version
    write(assignment, {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}}}}, submit=False)
    before = db_state()

    with pytest.raises(StaleVersion) as error:
        item_submit(
            project=assignment.project,
            tree=assignment.tree,
            user=alice,
            answers={"response_quality": {"node_annotations": {"resp_a": {"rating": 1}}}},
            version=old_version,
        )

    assert error.value.current == old_version + 1
    assert (
        str(error.value)
        == f"this item has changed since you loaded it (now version {old_version + 1}); reload it"
    )
    assert db_state() == before
    assert stored(assignment, "response_quality")["node_annotations"] == {"resp_a": {"rating": 4}}


# -- branch comparison: the shown order is random, stored and kept ---------------------


def test_each_decision_point_gets_its_replies_in_an_order_stored_with_the_first_draft(alice):
    _, assignment = leased_project(COMPARE, alice, wide_item("wide"))

    comparisons = stored(assignment, "compare")["branch_comparisons"]

    assert sorted(comparisons) == ["r0", "root"]
    assert sorted(comparisons["root"]["shown_order"]) == ["r0", "r1", "r2", "r3"]
    assert sorted(comparisons["r0"]["shown_order"]) == ["u0", "u1"]
    assert comparisons["root"]["pairs"] == comparisons["r0"]["pairs"] == []


def test_the_shown_order_is_drawn_at_random_for_each_annotator():
    dataset = DatasetFactory()
    PotatoTreeFactory(dataset=dataset, item=wide_item("wide"))
    project = ProjectFactory(
        dataset=dataset, config_yaml=COMPARE + "assignment: {annotations_per_item: 30}\n"
    )
    orders = set()

    for index in range(30):
        assignment = item_next(project=project, user=PersonaFactory(username=f"annotator{index}"))
        orders.add(tuple(stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]))

    # 24 orders are possible; 30 identical draws would happen once in 24**29 runs.
    assert len(orders) > 1


def test_asking_again_gives_back_the_same_order(alice):
    project, assignment = leased_project(COMPARE, alice, wide_item("wide"))
    first = stored(assignment, "compare")

    again = item_next(project=project, user=alice)

    assert again.pk == assignment.pk
    assert stored(again, "compare") == first


def test_a_comparison_in_another_order_than_the_one_shown_is_refused(alice):
    _, assignment = leased_project(COMPARE, alice, wide_item("wide"))
    shown = stored(assignment, "compare")["branch_comparisons"]["root"]["shown_order"]
    other = list(reversed(shown))

    with pytest.raises(ProblemsError) as error:
        write(assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": other, "pairs": []}}}})

    assert [(p.path, p.message, p.code) for p in error.value.problems] == [
        (
            "compare.branch_comparisons.root.shown_order",
            f"must stay in the order it was shown: {shown}",
            "order_changed",
        )
    ]


def test_a_comparison_in_the_order_shown_is_kept_with_its_pairs(alice):
    _, assignment = leased_project(COMPARE, alice)
    draft = stored(assignment, "compare")
    shown = draft["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_b", "b": "resp_a", "label": "Worse"}]

    write(assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}})

    assert stored(assignment, "compare") == {
        "node_annotations": {},
        "selected_path": [],
        "branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}},
    }


def test_a_save_that_leaves_the_comparisons_out_keeps_the_order_shown(alice):
    _, assignment = leased_project(COMPARE, alice, wide_item("wide"))
    shown = stored(assignment, "compare")["branch_comparisons"]

    assignment = write(assignment, {"compare": {"node_annotations": {"r1": {"rating": 2}}}}, submit=False)

    assert stored(assignment, "compare")["branch_comparisons"] == shown
    other = list(reversed(shown["root"]["shown_order"]))
    assert refused(
        assignment, {"compare": {"branch_comparisons": {"root": {"shown_order": other, "pairs": []}}}}
    ) == [
        f"compare.branch_comparisons.root.shown_order: must stay in the order it was shown: {shown['root']['shown_order']}"
    ]


# -- ranking mode ---------------------------------------------------------------------


def test_in_ranking_mode_the_replies_are_ordered_best_first(alice):
    _, assignment = leased_project(RANK, alice, wide_item("wide"))
    shown = stored(assignment, "rank")["branch_comparisons"]
    assert shown["root"]["ranking"] == []

    write(
        assignment,
        {
            "rank": {
                "branch_comparisons": {
                    "root": {
                        "shown_order": shown["root"]["shown_order"],
                        "ranking": ["r2", "r0", "r3", "r1"],
                    },
                    "r0": {"shown_order": shown["r0"]["shown_order"], "ranking": ["u1", "u0"]},
                }
            }
        },
    )

    assert stored(assignment, "rank")["branch_comparisons"] == {
        "root": {"shown_order": shown["root"]["shown_order"], "ranking": ["r2", "r0", "r3", "r1"]},
        "r0": {"shown_order": shown["r0"]["shown_order"], "ranking": ["u1", "u0"]},
    }


@pytest.mark.parametrize(
    "ranking",
    [["r2", "r0", "r3"], ["r2", "r0", "r3", "r1", "u0"], ["r2", "r2", "r3", "r1"], "r2,r0,r3,r1", 0],
)
def test_a_ranking_must_order_every_reply_once(alice, ranking):
    _, assignment = leased_project(RANK, alice, wide_item("wide"))
    shown = stored(assignment, "rank")["branch_comparisons"]["root"]["shown_order"]

    assert refused(
        assignment, {"rank": {"branch_comparisons": {"root": {"shown_order": shown, "ranking": ranking}}}}
    ) == [
        "rank.branch_comparisons.root.ranking: must order every reply of \"root\" once, best first: ['r0', 'r1', 'r2', 'r3']"
    ]


def test_pairs_are_not_part_of_a_ranking(alice):
    _, assignment = leased_project(RANK, alice)
    shown = stored(assignment, "rank")["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "resp_b", "label": "Better"}]

    assert refused(
        assignment, {"rank": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}}
    ) == ["rank.branch_comparisons.root.pairs: unknown key (expected shown_order, ranking)"]


# -- Potato's documented branch_compare set-up --------------------------------------------


def test_potatos_branch_compare_labels_pairs_with_the_radio_node_schemes_labels(alice):
    _, assignment = leased_project(BRANCH_COMPARE, alice)
    draft = stored(assignment, "branch_compare")
    shown = draft["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "resp_b", "label": "Better"}]

    write(
        assignment,
        {"branch_compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}},
    )

    assert draft == {"branch_comparisons": {"root": {"shown_order": shown, "pairs": []}}}
    assert stored(assignment, "branch_compare") == {
        "branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}
    }


def test_potatos_branch_compare_refuses_a_label_its_radio_scheme_does_not_have(alice):
    _, assignment = leased_project(BRANCH_COMPARE, alice)
    shown = stored(assignment, "branch_compare")["branch_comparisons"]["root"]["shown_order"]
    pairs = [{"a": "resp_a", "b": "resp_b", "label": "Much better"}]

    assert refused(
        assignment,
        {"branch_compare": {"branch_comparisons": {"root": {"shown_order": shown, "pairs": pairs}}}},
    ) == [
        'branch_compare.branch_comparisons.root.pairs[0].label: "Much better" is not one of the labels (Better, Same, Worse)'
    ]


def test_potatos_branch_compare_does_not_rate_nodes_one_by_one(alice):
    _, assignment = leased_project(BRANCH_COMPARE, alice)

    assert refused(assignment, {"branch_compare": {"node_annotations": {"resp_a": {"label": "Better"}}}}) == [
        "branch_compare.node_annotations: is not enabled in this scheme"
    ]


# -- the config of the compound scheme ---------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        (
            "{annotation_type: tree_annotation, name: t, description: T, node_scheme: {annotation_type: tree_annotation}}",
            'annotation_schemes[0].node_scheme.annotation_type: "tree_annotation" cannot rate a node (expected one of '
            "likert, multirate, multiselect, number, radio, slider, text)",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, node_scheme: {size: 5}}",
            "annotation_schemes[0].node_scheme.annotation_type: is required (one of likert, multirate, multiselect, "
            "number, radio, slider, text)",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, node_scheme: {annotation_type: [likert]}}",
            "annotation_schemes[0].node_scheme.annotation_type: must be the name of a type (one of likert, multirate, "
            "multiselect, number, radio, slider, text), got a list",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, node_scheme: {annotation_type: radio, labels: [Good]}}",
            "annotation_schemes[0].node_scheme.labels: needs at least 2 labels",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, node_scheme: likert}",
            "annotation_schemes[0].node_scheme: must be a mapping with an annotation_type, got a string",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, path_selection: yes}",
            "annotation_schemes[0].path_selection: must be a mapping like {enabled: true}, got a boolean",
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, branch_comparison: {enabled: true, mode: ranked}}",
            'annotation_schemes[0].branch_comparison.mode: must be "pairs" or "ranking", got a string',
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, branch_comparison: {enable: true}}",
            'annotation_schemes[0].branch_comparison.enable: unknown key (did you mean "enabled"?)',
        ),
        (
            "{annotation_type: tree_annotation, name: t, description: T, path_selection: {enabled: false}}",
            "annotation_schemes[0]: does nothing: give it a node_scheme, path_selection: {enabled: true} "
            "or branch_comparison: {enabled: true}",
        ),
    ],
)
def test_tree_annotation_config_errors(scheme, expected):
    with pytest.raises(ProblemsError) as error:
        parse_config(f"annotation_schemes:\n  - {scheme}\n")

    assert [str(problem) for problem in error.value.problems] == [expected]


def test_a_comparison_can_have_labels_of_its_own():
    scheme = parse_config(
        "annotation_schemes:\n"
        "  - {annotation_type: tree_annotation, name: t, description: T, node_scheme: {annotation_type: likert, size: 3},\n"
        "     branch_comparison: {enabled: true, labels: [A is better, Tie, B is better]}}\n"
    ).schemes[0]

    assert scheme.comparison_labels == ["A is better", "Tie", "B is better"]
    assert scheme.rates_nodes
