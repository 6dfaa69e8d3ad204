"""Exports say which answers were made with a judge's suggestion visible (a project's
``suggestions:``): Potato records carry ``suggestions`` by scheme, pairs and SFT lines
``source.suggestion``; records of projects without suggestions keep Potato's shape, and an
export read back in keeps its marks.

Alice copied the judge's sentiment and rated quality herself; Bob answered before the judge's
answers were shown (``after``); the judge ``rater`` answered too.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from annotation.exports import annotations_export
from annotation.imports.annotations import annotations_import
from annotation.models import Annotation
from annotation.projects.services import project_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person
from tests.annotation.suggested import config_with, judge_answers, judge_made, suggested_project
from tests.factories import AnnotationFactory, DatasetFactory, PotatoTreeFactory, ProjectFactory
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db

JUDGE_SAYS = {"sentiment": {"label": "negative"}, "quality": {"rating": 2}}


def exported(project: Any, format_name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in annotations_export(project=project, format_name=format_name)]


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def judge() -> Any:
    return judge_made("rater")


def answered(project: Any, user: Any, answers: dict[str, Any], taken: tuple[str, ...] = ()) -> None:
    held = item_next(project=project, user=user)
    item_submit(
        project=project,
        tree=held.tree_id,
        user=user,
        answers=answers,
        version=held.version,
        suggestions_taken=taken,
    )


def test_potato_records_say_for_each_answer_whether_a_suggestion_was_visible(alice, judge):
    project = suggested_project("judged", "before", [alice])
    judge_answers(judge, project, project.items.get().tree_id, JUDGE_SAYS)
    answered(
        project, alice, {"sentiment": {"label": "negative"}, "quality": {"rating": 4}}, taken=("sentiment",)
    )

    records = {record["user"]: record for record in exported(project, "potato")}

    assert records["alice"]["suggestions"] == {"sentiment": "before_taken", "quality": "before"}
    # The judge's own answers are a coder's like any other, made with no suggestion.
    assert records["judge:rater"]["suggestions"] == {"sentiment": "none", "quality": "none"}


def test_answers_made_before_an_after_suggestion_was_shown_say_so(judge):
    bob = person("bob")
    project = suggested_project("measured", "after", [bob])
    judge_answers(judge, project, project.items.get().tree_id, JUDGE_SAYS)
    answered(project, bob, {"sentiment": {"label": "positive"}, "quality": {"rating": 4}})

    [bobs] = [record for record in exported(project, "potato") if record["user"] == "bob"]

    assert bobs["suggestions"] == {"sentiment": "after", "quality": "after"}


def test_a_project_without_suggestions_exports_potatos_records_unchanged(alice, judge):
    project = suggested_project("plain", None, [alice])
    judge_answers(judge, project, project.items.get().tree_id, JUDGE_SAYS)
    answered(project, alice, {"sentiment": {"label": "negative"}})

    assert {tuple(record) for record in exported(project, "potato")} == {
        ("id", "user", "status", "annotations", "updated_at")
    }


def test_an_export_read_back_into_a_project_keeps_its_marks_and_exports_the_same_records(alice, judge):
    project = suggested_project("first", "before", [alice])
    judge_answers(judge, project, project.items.get().tree_id, JUDGE_SAYS)
    answered(
        project, alice, {"sentiment": {"label": "negative"}, "quality": {"rating": 4}}, taken=("sentiment",)
    )
    records = [r for r in exported(project, "potato") if r["user"] == "alice"]
    copy = project_create(name="copy", dataset=project.dataset, config_yaml=config_with("before"))

    report = annotations_import(
        project=copy, source=io.BytesIO("\n".join(json.dumps(r) for r in records).encode())
    )

    assert report.committed, report.summary()
    assert exported(copy, "potato") == records
    assert dict(Annotation.objects.filter(project=copy).values_list("scheme", "suggestion")) == {
        "sentiment": "before_taken",
        "quality": "before",
    }


def test_an_import_names_a_mark_it_does_not_know(alice, judge):
    project = suggested_project("strict", "before", [alice])
    record = {
        "id": "c0",
        "user": "alice",
        "status": "submitted",
        "annotations": {"sentiment": {"label": "negative"}},
        "suggestions": {"sentiment": "peeked"},
    }

    report = annotations_import(project=project, source=io.BytesIO(json.dumps(record).encode()))

    assert not report.committed
    assert any(
        "suggestions.sentiment" in str(issue) and '"peeked" is not one of none' in str(issue)
        for issue in report.errors
    ), report.summary()


# -- pairs and SFT: a tree scheme's answer ------------------------------------------------

TREE_CONFIG = (
    "annotation_schemes:\n"
    "  - annotation_type: tree_annotation\n"
    "    name: ranked\n"
    "    description: Rank the replies and choose the best path\n"
    "    branch_comparison: {enabled: true, mode: ranking}\n"
    "    path_selection: {enabled: true}\n"
)
BRANCHING = {
    "id": "shop",
    "tree": {
        "id": "q",
        "role": "user",
        "content": "Any boots?",
        "children": [
            {"id": "r1", "role": "assistant", "content": "Yes"},
            {"id": "r2", "role": "assistant", "content": "No"},
        ],
    },
}
RANKED = {
    "branch_comparisons": {"q": {"shown_order": ["r1", "r2"], "ranking": ["r1", "r2"]}},
    "selected_path": ["q", "r1"],
}


@pytest.mark.parametrize(("show", "expected"), [("before", "before_taken"), (None, None)])
def test_pairs_and_sft_lines_say_whether_a_suggestion_was_visible(alice, judge, show, expected):
    dataset = DatasetFactory(name="shop")
    PotatoTreeFactory(dataset=dataset, item=BRANCHING)
    config = TREE_CONFIG + (f"suggestions: {{from: 'judge:rater', show: {show}}}\n" if show else "")
    project = ProjectFactory(name="shop", dataset=dataset, config_yaml=config)
    tree = ConversationTree.objects.get(dataset=dataset)
    AnnotationFactory(
        project=project, tree=tree, user=alice, scheme="ranked", payload=RANKED, suggestion=expected or ""
    )

    [pair] = exported(project, "pairs")
    [path] = exported(project, "sft")

    assert pair["source"].get("suggestion") == expected
    assert path["source"].get("suggestion") == expected
