"""Agreement in a project: its submitted answers read per scheme and field, measured with what fits
each scheme, per pair of annotators, and kept until the answers change.

Ann, Ben and Cleo answer items; imports bring in annotators who exist only in files.
"""

from __future__ import annotations

import io
import json
import math
import random
from collections import Counter
from itertools import combinations
from typing import Any

import pytest

from annotation.collection.annotations import ranking_record
from annotation.imports.annotations import annotations_import
from annotation.models import Annotation, Assignment, ProjectItem
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_submit
from evaluation.agreement.fields import Field
from evaluation.agreement.figures import field_figures
from evaluation.agreement.project import agreement_compute, agreement_current, agreement_stamp
from evaluation.models import AgreementSnapshot
from tests.annotation.annotator_items import person, project_over
from tests.annotation.collection.collect import collect_project, prompt, review
from tests.factories import AnnotationFactory, ConversationTreeFactory, ProjectFactory, RubricFactory

pytestmark = pytest.mark.django_db

LABELS = ["Better", "Same", "Worse"]
COMPARE = """
annotation_schemes:
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    branch_comparison: {enabled: true}
"""


def two_replies(item_id: str) -> dict[str, Any]:
    """A Potato item: a question and two replies to compare."""
    return {
        "id": item_id,
        "tree": {
            "id": "q",
            "role": "user",
            "content": "Which is better?",
            "children": [
                {"id": "r1", "role": "assistant", "content": "One reply."},
                {"id": "r2", "role": "assistant", "content": "Another reply."},
            ],
        },
    }


def imported(project, records: list[dict[str, Any]]) -> None:
    report = annotations_import(
        project=project, source=io.BytesIO("\n".join(json.dumps(r) for r in records).encode())
    )
    assert report.committed, report.summary()


def scheme_of(figures: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [scheme for scheme in figures["schemes"] if scheme["scheme"] == name]
    return found


def field_of(figures: dict[str, Any], scheme: str, name: str) -> dict[str, Any]:
    (found,) = [field for field in scheme_of(figures, scheme)["fields"] if field["field"] == name]
    return found


def measure_of(field: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [measure for measure in field["measures"] if measure["measure"] == name]
    return found


def pair_values(field: dict[str, Any]) -> dict[tuple[str, str], float | None]:
    return {(pair["a"], pair["b"]): pair["value"] for pair in field["pairs"]}


# -- the acceptance test: imported pairwise judgements --------------------------------------


def cohen_by_hand(first: list[str], second: list[str]) -> float:
    """(p_o - p_e) / (1 - p_e), p_e from each annotator's own label shares."""
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    shares_a, shares_b = Counter(first), Counter(second)
    expected = sum(shares_a[label] * shares_b[label] for label in LABELS) / (n * n)
    return (observed - expected) / (1 - expected)


def fleiss_by_hand(labels_per_item: list[list[str]]) -> float:
    """Fleiss (1971): the mean share of agreeing rater pairs against the pooled label shares."""
    raters, items = len(labels_per_item[0]), len(labels_per_item)
    agreeing = [
        (sum(count * count for count in Counter(labels).values()) - raters) / (raters * (raters - 1))
        for labels in labels_per_item
    ]
    pooled = Counter(label for labels in labels_per_item for label in labels)
    chance = sum((count / (items * raters)) ** 2 for count in pooled.values())
    return (sum(agreeing) / items - chance) / (1 - chance)


def test_three_annotators_imported_pairwise_judgements_give_cohens_kappa_per_pair_and_fleiss_kappa_over_all():
    items = [two_replies(f"pair-{index:03d}") for index in range(300)]
    project = project_over("judged-pairs", COMPARE, items)
    rng = random.Random(7)
    names = ["ivy", "jon", "kim"]
    # What each annotator thinks of r1 against r2; each answers in the order they were shown the replies.
    truths = {item["id"]: rng.choice(LABELS) for item in items}
    meant: dict[str, dict[str, str]] = {name: {} for name in names}
    records = []
    for name in names:
        for item_id, truth in truths.items():
            label = truth if rng.random() < 0.75 else rng.choice(LABELS)
            meant[name][item_id] = label
            if rng.random() < 0.5:
                shown, pair = ["r1", "r2"], {"a": "r1", "b": "r2", "label": label}
            else:  # the same judgement, given about r2 against r1
                shown, pair = ["r2", "r1"], {"a": "r2", "b": "r1", "label": LABELS[2 - LABELS.index(label)]}
            comparison = {"q": {"shown_order": shown, "pairs": [pair]}}
            records.append(
                {"id": item_id, "user": name, "annotations": {"compare": {"branch_comparisons": comparison}}}
            )
    imported(project, records)

    field = field_of(agreement_current(project).figures, "compare", "branch comparison")

    order = sorted(truths)
    expected_pairs = {
        (a, b): cohen_by_hand([meant[a][i] for i in order], [meant[b][i] for i in order])
        for a, b in combinations(names, 2)
    }
    assert pair_values(field) == pytest.approx(expected_pairs, abs=1e-12)
    assert {pair["n_units"] for pair in field["pairs"]} == {300}
    fleiss = measure_of(field, "Fleiss' kappa")
    assert fleiss["value"] == pytest.approx(fleiss_by_hand([[meant[n][i] for n in names] for i in order]))
    assert (fleiss["n_units"], fleiss["n_coders"]) == (300, 3)
    assert (field["n_items"], field["n_units"], field["n_annotators"]) == (300, 300, 3)
    assert 0.4 < fleiss["value"] < 0.8  # 75% agreement with a truth over three labels


# -- what each scheme gets ----------------------------------------------------------------------------


def answered(project, answers: dict[str, list[Any]]) -> list[Any]:
    """Trees of ``project`` answered per annotator: ``{"ann": [payload of item 0, ...], ...}``."""
    count = max(len(payloads) for payloads in answers.values())
    trees = [ConversationTreeFactory(dataset=project.dataset) for _ in range(count)]
    for username, payloads in answers.items():
        user = person(username)
        for tree, payload in zip(trees, payloads, strict=False):
            if payload is not None:
                AnnotationFactory(project=project, tree=tree, user=user, scheme="s", payload=payload)
    return trees


def figures_for(scheme_yaml: str, answers: dict[str, list[Any]]) -> dict[str, Any]:
    project = ProjectFactory(config_yaml=f"annotation_schemes:\n  - {scheme_yaml}\n")
    answered(project, answers)
    return scheme_of(agreement_compute(project), "s")


def test_radio_labels_are_nominal_with_alpha_fleiss_percent_and_cohens_kappa_per_pair():
    scheme = figures_for(
        "{annotation_type: radio, name: s, description: S, labels: [good, bad]}",
        {
            "ann": [{"label": v} for v in ["good", "good", "bad", "bad"]],
            "ben": [{"label": v} for v in ["good", "bad", "bad", "bad"]],
        },
    )

    (field,) = scheme["fields"]
    assert (field["field"], field["values"], field["unit"]) == ("label", "nominal", "item")
    assert [m["measure"] for m in field["measures"]] == [
        "Krippendorff's alpha (nominal)",
        "Fleiss' kappa",
        "percent agreement",
    ]
    assert measure_of(field, "percent agreement")["value"] == 0.75
    # p_o = 3/4, p_e = (2·1 + 2·3) / 16 = 1/2: kappa = (3/4 - 1/2) / (1/2).
    assert pair_values(field) == {("ann", "ben"): pytest.approx(0.5)}


def test_likert_ratings_are_ordinal_with_cohens_kappa_quadratically_weighted_per_pair():
    scheme = figures_for(
        "{annotation_type: likert, name: s, description: S, size: 3}",
        {"ann": [{"rating": v} for v in [1, 2, 3]], "ben": [{"rating": v} for v in [1, 3, 3]]},
    )

    (field,) = scheme["fields"]
    assert (field["field"], field["values"]) == ("rating", "ordinal")
    assert [m["measure"] for m in field["measures"]] == [
        "Krippendorff's alpha (ordinal)",
        "percent agreement",
    ]
    (pair,) = field["pairs"]
    assert pair["measure"] == "Cohen's kappa (quadratic weights)"
    # Weights ((i - j) / 2)²: observed 1/4 / 3; expected from the marginals (1,1,1) and (1,0,2) over 9.
    observed = (0.25) / 3
    expected = (1 * 0 + 2 * 1 + 1 * 0.25 + 0 + 0 + 1 * 0.25 * 2 + 1 * 1 + 0 + 0) / 9
    assert pair["value"] == pytest.approx(1 - observed / expected)


def test_numbers_and_sliders_are_interval_and_multiselect_answers_are_sets():
    slider = figures_for(
        "{annotation_type: slider, name: s, description: S}",
        {"ann": [{"value": v} for v in [10, 50, 90]], "ben": [{"value": v} for v in [12, 48, 95]]},
    )
    labels = figures_for(
        "{annotation_type: multiselect, name: s, description: S, labels: [clear, polite, short]}",
        {
            "ann": [{"labels": ["clear", "polite"]}, {"labels": []}],
            "ben": [{"labels": ["clear"]}, {"labels": []}],
        },
    )

    assert [m["measure"] for m in slider["fields"][0]["measures"]] == ["Krippendorff's alpha (interval)"]
    assert slider["fields"][0]["measures"][0]["value"] > 0.9
    assert slider["fields"][0]["pairs"] == []
    assert [m["measure"] for m in labels["fields"][0]["measures"]] == [
        "Krippendorff's alpha (set)",
        "percent agreement",
    ]
    assert measure_of(labels["fields"][0], "percent agreement")["value"] == 0.5


def test_multirate_options_are_a_field_each_ordered_by_the_labels():
    scheme = figures_for(
        "{annotation_type: multirate, name: s, description: S, options: [tone, facts], labels: [bad, ok, good]}",
        {
            "ann": [{"tone": "good", "facts": "bad"}, {"tone": "ok", "facts": "good"}],
            "ben": [{"tone": "good", "facts": "ok"}, {"tone": "ok", "facts": "good"}],
        },
    )

    assert [field["field"] for field in scheme["fields"]] == ["option tone", "option facts"]
    assert pair_values(scheme["fields"][0]) == {("ann", "ben"): 1.0}


def test_spans_are_compared_by_f1_exactly_and_by_overlap_per_pair():
    def span(start: int, end: int) -> dict[str, Any]:
        return {"node": "m0", "start": start, "end": end, "text": "", "label": "NAME", "attributes": {}}

    scheme = figures_for(
        "{annotation_type: span, name: s, description: S, labels: [NAME]}",
        {"ann": [{"spans": [span(0, 5), span(10, 15)]}], "ben": [{"spans": [span(0, 5), span(11, 15)]}]},
    )

    (field,) = scheme["fields"]
    assert {m["measure"]: m["value"] for m in field["measures"]} == {
        "span F1 (exact)": 0.5,
        "span F1 (overlap)": 1.0,
    }
    assert sorted((p["measure"], p["value"]) for p in field["pairs"]) == [
        ("span F1 (exact)", 0.5),
        ("span F1 (overlap)", 1.0),
    ]


def test_tree_annotation_gives_node_ratings_per_item_and_node_the_selected_path_and_comparisons():
    scheme = figures_for(
        "{annotation_type: tree_annotation, name: s, description: S, node_scheme: {annotation_type: likert, size: 5},"
        " path_selection: {enabled: true}, branch_comparison: {enabled: true}}",
        {
            "ann": [
                {
                    "node_annotations": {"r1": {"rating": 5}, "r2": {"rating": 1}},
                    "selected_path": ["q", "r1"],
                    "branch_comparisons": {
                        "q": {
                            "shown_order": ["r1", "r2"],
                            "pairs": [{"a": "r1", "b": "r2", "label": "Better"}],
                        }
                    },
                }
            ],
            "ben": [
                {
                    "node_annotations": {"r1": {"rating": 4}, "r2": {"rating": 1}},
                    "selected_path": ["q", "r1"],
                    "branch_comparisons": {
                        "q": {
                            "shown_order": ["r2", "r1"],
                            "pairs": [{"a": "r2", "b": "r1", "label": "Worse"}],
                        }
                    },
                }
            ],
        },
    )

    nodes, path, comparison = scheme["fields"]
    assert (nodes["field"], nodes["unit"], nodes["n_items"], nodes["n_units"]) == (
        "node rating",
        "item and node",
        1,
        2,
    )
    assert (path["field"], path["values"]) == ("selected path", "set")
    assert measure_of(path, "percent agreement")["value"] == 1.0
    # Worse for (r2, r1) is Better for (r1, r2): the two agree.
    assert (comparison["field"], comparison["unit"]) == ("branch comparison", "item and sibling pair")
    assert measure_of(comparison, "percent agreement")["value"] == 1.0


def test_sibling_rankings_are_compared_by_kendalls_w_per_decision_point():
    scheme = figures_for(
        "{annotation_type: tree_annotation, name: s, description: S, branch_comparison: {enabled: true, mode: ranking}}",
        {
            "ann": [
                {"branch_comparisons": {"q": {"shown_order": ["a", "b", "c"], "ranking": ["a", "b", "c"]}}}
            ],
            "ben": [
                {"branch_comparisons": {"q": {"shown_order": ["c", "b", "a"], "ranking": ["a", "b", "c"]}}}
            ],
        },
    )

    (field,) = scheme["fields"]
    assert (field["field"], field["values"], field["unit"]) == (
        "sibling ranking",
        "rankings",
        "item and decision point",
    )
    assert measure_of(field, "Kendall's W (mean over units)")["value"] == 1.0


def test_rubric_criteria_are_a_nominal_field_each():
    rubric = RubricFactory()
    scheme = figures_for(
        f"{{annotation_type: rubric, name: s, description: S, rubric: {rubric.name}}}",
        {
            "ann": [
                {"criteria": {"helpful": True, "polite": True}},
                {"criteria": {"helpful": False, "polite": True}},
            ],
            "ben": [
                {"criteria": {"helpful": True, "polite": False}},
                {"criteria": {"helpful": False, "polite": True}},
            ],
        },
    )

    assert [(f["field"], f["values"]) for f in scheme["fields"]] == [
        ("criterion helpful", "nominal"),
        ("criterion polite", "nominal"),
    ]
    assert measure_of(scheme["fields"][0], "percent agreement")["value"] == 1.0
    assert measure_of(scheme["fields"][1], "percent agreement")["value"] == 0.5


def test_free_text_has_no_measure_and_says_so():
    scheme = figures_for(
        "{annotation_type: text, name: s, description: S}",
        {"ann": [{"text": "fine"}], "ben": [{"text": "good"}]},
    )

    assert scheme["fields"] == []
    assert scheme["note"] == "free text: no agreement measure"


def test_a_measure_without_enough_data_is_undefined_with_its_reason_never_nan():
    scheme = figures_for(
        "{annotation_type: radio, name: s, description: S, labels: [good, bad]}",
        {"ann": [{"label": "good"}, {"label": "good"}], "ben": [{"label": "good"}, None]},
    )

    (field,) = scheme["fields"]
    alpha = measure_of(field, "Krippendorff's alpha (nominal)")
    assert alpha["value"] is None
    assert (
        alpha["undefined_reason"]
        == "every pairable value is 'good': no variation, so expected disagreement is 0"
    )
    fleiss = measure_of(field, "Fleiss' kappa")
    assert fleiss["undefined_reason"].startswith("units have between 1 and 2 ratings")
    (pair,) = field["pairs"]
    assert (pair["value"], pair["n_units"]) == (None, 1)
    assert "no variation" in pair["undefined_reason"]
    text = json.dumps(agreement_compute(ProjectFactory()))
    assert "NaN" not in text and "Infinity" not in text


def test_answers_stored_under_labels_the_config_no_longer_has_make_measures_undefined_not_errors():
    field = Field("branch comparison", "item and sibling pair", "nominal")
    field.problem = "the pair labels cannot be read: label 'Meh' is not one of the comparison labels"
    field.data = {("i", "q", "r1", "r2"): {"ann": "Better", "ben": "Better"}}
    figures = field_figures(field)
    assert {m["undefined_reason"] for m in figures["measures"]} == {field.problem}

    scheme = figures_for(
        "{annotation_type: tree_annotation, name: s, description: S, branch_comparison: {enabled: true}}",
        {
            "ann": [
                {
                    "branch_comparisons": {
                        "q": {"shown_order": ["a", "b"], "pairs": [{"a": "a", "b": "b", "label": "Meh"}]}
                    }
                }
            ],
        },
    )
    (comparison,) = scheme["fields"]
    assert comparison["measures"][0]["value"] is None
    assert "label 'Meh' is not one of the comparison labels" in comparison["measures"][0]["undefined_reason"]


# -- what counts ---------------------------------------------------------------------------------------

RATING = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\nassignment: {annotations_per_item: 3}\n"


def rated(project, ratings: dict[str, list[int]]) -> list[Any]:
    """``ratings`` per annotator, one per item of the project in order, stored as submitted answers."""
    trees = [item.tree for item in ProjectItem.objects.filter(project=project).order_by("tree_id")]
    for username, values in ratings.items():
        user = person(username)
        for tree, value in zip(trees, values, strict=False):
            AnnotationFactory(
                project=project, tree=tree, user=user, scheme="quality", payload={"rating": value}
            )
    return trees


def rating_field(project) -> dict[str, Any]:
    return field_of(agreement_compute(project), "quality", "rating")


@pytest.fixture
def rating_project():
    return project_over("rated", RATING, [two_replies(f"item-{index}") for index in range(4)])


def test_drafts_and_skipped_answers_do_not_count(rating_project):
    trees = rated(rating_project, {"ann": [1, 2, 3, 4], "ben": [1, 2, 3, 4]})
    cleo = person("cleo")
    AnnotationFactory(project=rating_project, tree=trees[0], user=cleo, scheme="quality", status="draft")
    AnnotationFactory(project=rating_project, tree=trees[1], user=cleo, scheme="quality", status="skipped")

    assert rating_field(rating_project)["n_annotators"] == 2


def test_gold_items_and_gold_or_training_work_are_left_out_while_imported_work_counts(rating_project):
    trees = rated(rating_project, {"ann": [1, 2, 3, 4], "ben": [1, 2, 3, 4]})
    ProjectItem.objects.filter(project=rating_project, tree=trees[0]).update(is_gold=True)
    ben = Annotation.objects.get(tree=trees[1], user__username="ben").user
    for kind in ("gold", "training"):
        Assignment.objects.update_or_create(
            project=rating_project, tree=trees[1], user=ben, defaults={"kind": kind, "status": "submitted"}
        )
        assert rating_field(rating_project)["n_items"] == 3  # item 0 (gold), and item 1 only by Ann
    imported(rating_project, [{"id": "item-2", "user": "zed", "annotations": {"quality": {"rating": 3}}}])

    field = rating_field(rating_project)
    assert field["n_annotators"] == 3
    assert pair_values(field).keys() == {("ann", "ben"), ("ann", "zed"), ("ben", "zed")}


def test_collection_projects_count_review_labels_per_label_and_sibling_rankings():
    writer, ann, ben = person("wren"), person("ann"), person("ben")
    project = collect_project([writer, ann, ben])
    question = prompt(project, writer)
    review(project, [ann], question, {"spam": 0, "lang_mismatch": 0, "quality": 0.75})
    review(project, [ben], question, {"spam": 0, "lang_mismatch": 1, "quality": 0.5})
    for user, order in ((ann, ["x", "y", "z"]), (ben, ["x", "z", "y"])):
        ranking_record(
            project=project,
            tree_id=question.tree_id,
            user=user,
            parent_id=question.external_id,
            order=order,
            shown_order=["z", "y", "x"],
            not_rankable=False,
            now=question.created_at,
        )

    figures = agreement_compute(project)

    labels = scheme_of(figures, "label_prompt")
    assert [(f["field"], f["values"], f["unit"]) for f in labels["fields"]] == [
        ("label spam", "nominal", "item and message"),
        ("label lang_mismatch", "nominal", "item and message"),
        ("label quality", "interval", "item and message"),
    ]
    assert measure_of(labels["fields"][1], "percent agreement")["value"] == 0.0
    (ranking,) = scheme_of(figures, "rank_replies")["fields"]
    # Two rankers, three replies, one swap: rank sums 2, 5, 5 around 4, so W = 12·6 / (2²·(3³ - 3)).
    assert measure_of(ranking, "Kendall's W (mean over units)")["value"] == pytest.approx(12 * 6 / (4 * 24))
    assert scheme_of(figures, "label_reply")["note"] == "no submitted answers yet"


# -- kept until the answers change --------------------------------------------------------------------


def test_the_figures_are_computed_once_and_kept_until_an_answer_is_submitted_imported_or_changed(
    rating_project,
):
    rating_project.config_yaml = RATING
    rated(rating_project, {"ann": [1, 2, 3], "ben": [1, 2, 4]})

    first = agreement_current(rating_project)
    again = agreement_current(rating_project)
    assert (first.recomputed, again.recomputed) == (True, False)
    assert again.figures == first.figures
    assert AgreementSnapshot.objects.get(project=rating_project).stamp == agreement_stamp(rating_project)

    cleo = person("cleo")
    assignment = item_next(project=rating_project, user=cleo)
    draft_save(
        project=rating_project, tree=assignment.tree, user=cleo, answers={"quality": {"rating": 2}}, version=1
    )
    assert not agreement_current(rating_project).recomputed  # a draft changes nothing
    item_submit(
        project=rating_project, tree=assignment.tree, user=cleo, answers={"quality": {"rating": 2}}, version=2
    )
    submitted = agreement_current(rating_project)
    assert submitted.recomputed
    assert submitted.figures["annotators"] == ["ann", "ben", "cleo"]

    # An import replacing an answer with the same count and an older date still changes the stamp.
    old = "2020-01-01T00:00:00+00:00"
    imported(
        rating_project,
        [{"id": "item-0", "user": "ann", "updated_at": old, "annotations": {"quality": {"rating": 5}}}],
    )
    assert agreement_current(rating_project).recomputed
    assert not agreement_current(rating_project).recomputed

    ProjectItem.objects.filter(project=rating_project, tree__external_id="item-1").update(is_gold=True)
    assert agreement_current(rating_project).recomputed


def test_reading_costs_one_query_per_scheme_and_one_more_whatever_the_number_of_items(
    django_assert_num_queries,
):
    config = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"
        "  - {annotation_type: radio, name: verdict, description: Verdict, labels: [ok, bad]}\n"
    )
    small = project_over("small", config, [two_replies(f"s-{index}") for index in range(2)])
    large = project_over("large", config, [two_replies(f"l-{index}") for index in range(30)])
    for project in (small, large):
        imported(
            project,
            [
                {
                    "id": item.tree.external_id,
                    "user": name,
                    "annotations": {"quality": {"rating": 3}, "verdict": {"label": "ok"}},
                }
                for item in ProjectItem.objects.filter(project=project).select_related("tree")
                for name in ("ann", "ben", "cleo")
            ],
        )

    for project in (small, large):
        with django_assert_num_queries(3):  # gold and training work, then each scheme
            agreement_compute(project)
        with django_assert_num_queries(6):  # the stamp, no snapshot yet, the three reads, the write
            agreement_current(project)
        with django_assert_num_queries(2):  # the stamp, the snapshot
            agreement_current(project)


def test_figures_are_plain_json_with_each_measures_value_or_reason():
    project = project_over("json", COMPARE, [two_replies("only")])
    imported(
        project,
        [
            {
                "id": "only",
                "user": name,
                "annotations": {
                    "compare": {
                        "branch_comparisons": {
                            "q": {
                                "shown_order": ["r1", "r2"],
                                "pairs": [{"a": "r1", "b": "r2", "label": label}],
                            }
                        }
                    }
                },
            }
            for name, label in (("ann", "Better"), ("ben", "Same"))
        ],
    )

    figures = agreement_current(project).figures

    assert json.loads(json.dumps(figures)) == figures
    assert figures["annotations"] == 2 and figures["annotators"] == ["ann", "ben"]
    field = field_of(figures, "compare", "branch comparison")
    for measure in field["measures"]:
        assert (measure["value"] is None) != (measure["undefined_reason"] is None)
        assert measure["value"] is None or math.isfinite(measure["value"])
