"""Importing gold items: the records ``import_annotations`` reads (an expert's export loads as
it is), or Potato's gold files, each answer checked by its scheme, every problem named by line
and key, all or nothing.

Erin is the expert whose answers become the gold ones; Alice annotates.
"""

from __future__ import annotations

import gzip
import io
import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from annotation.exports import annotations_export
from annotation.models import ProjectItem
from annotation.quality.gold_imports import gold_import
from annotation.work.assignment import item_next
from tests.annotation.quality.test_gold import T0, answer, gold_project
from tests.factories import PersonaFactory

pytestmark = pytest.mark.django_db


def lines(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def gold_of(project) -> dict[str, tuple[dict, str]]:
    return {
        external_id: (answers, explanation)
        for external_id, answers, explanation in ProjectItem.objects.filter(project=project, is_gold=True)
        .order_by("tree_id")
        .values_list("tree__external_id", "gold_answers", "gold_explanation")
    }


def test_records_mark_their_items_gold_with_their_answers_and_explanations():
    project = gold_project(work=3, gold=0)

    report = gold_import(
        project=project,
        source=io.BytesIO(
            lines(
                {
                    "id": "w1",
                    "annotations": {"sentiment": {"label": "negative"}},
                    "explanation": "A complaint.",
                },
                {"id": "w2", "annotations": {"sentiment": {"label": "neutral"}, "notes": {"text": "flat"}}},
            )
        ),
    )

    assert report.committed, report.summary()
    assert report.summary() == f"2 gold items imported into {project.name}"
    assert gold_of(project) == {
        "w1": ({"sentiment": {"label": "negative"}}, "A complaint."),
        "w2": ({"sentiment": {"label": "neutral"}, "notes": {"text": "flat"}}, ""),
    }


def test_potatos_gold_records_read_with_their_bare_values():
    project = gold_project(work=2, gold=0)
    records = [
        {"id": "w1", "gold_label": {"sentiment": "negative"}, "explanation": "Angry."},
        {"id": "w2", "correct_answers": {"sentiment": "positive"}},
    ]

    report = gold_import(project=project, source=io.BytesIO(json.dumps(records).encode()))

    assert report.committed, report.summary()
    assert gold_of(project) == {
        "w1": ({"sentiment": {"label": "negative"}}, "Angry."),
        "w2": ({"sentiment": {"label": "positive"}}, ""),
    }


def test_every_problem_is_named_by_line_and_key_and_nothing_is_imported():
    project = gold_project(work=2, gold=0)

    report = gold_import(
        project=project,
        source=io.BytesIO(
            lines(
                {"id": "w1", "annotations": {"sentiment": {"label": "negative"}}},
                {"id": "w9", "annotations": {"sentiment": "positive"}},
                {"id": "w2", "annotations": {"sentiment": {"label": "positve"}, "tone": {}}},
                {"id": "w1", "annotations": {"sentiment": "positive"}, "score": 1},
                {"annotations": {}},
                {"id": "w2", "annotations": {"sentiment": "positive"}, "gold_label": {}},
                "{not json",
            )
        ),
    )

    assert not report.committed
    assert [str(issue) for issue in report.errors] == [
        "line 4: score: unknown key (expected id, annotations, gold_label, correct_answers, expected_answer, explanation, user, status, updated_at)",
        'line 4: id: a second record for item "w1" (the first is on line 1)',
        "line 5: id: is required: the item id, a non-empty string (got null)",
        "line 6: gold_label: gives the answers again (they are under annotations already)",
        'line 6: id: a second record for item "w2" (the first is on line 3)',
        "line 7: malformed JSON at column 2: Expecting property name enclosed in double quotes",
        'line 2: id: no item "w9" in project "' + project.name + '"',
        'line 3: annotations.sentiment.label: "positve" is not one of the labels (positive, negative, neutral)',
        "line 3: annotations.tone: no scheme of that name (expected notes, sentiment)",
    ]
    assert gold_of(project) == {}


def test_an_expert_s_export_imports_as_the_gold_answers(tmp_path):
    project = gold_project(work=3, gold=0)
    erin = PersonaFactory(username="erin")
    answer(item_next(project=project, user=erin, now=T0), "negative")
    answer(item_next(project=project, user=erin, now=T0), "neutral")
    export = tmp_path / "erin.jsonl.gz"
    with gzip.open(export, "wt", encoding="utf-8") as out:
        out.writelines(annotations_export(project=project, format_name="potato", user=erin))

    out, err = StringIO(), StringIO()
    call_command("import_gold", project.name, str(export), "--user", "erin", stdout=out, stderr=err)

    assert out.getvalue().strip() == f"2 gold items imported into {project.name}"
    assert gold_of(project) == {
        "w1": ({"sentiment": {"label": "negative"}}, ""),
        "w2": ({"sentiment": {"label": "neutral"}}, ""),
    }
    # Erin's answers to them now measure others; they are no longer exported as data.
    assert list(annotations_export(project=project, format_name="potato")) == []


def test_user_keeps_one_persons_records_from_a_file_of_several():
    project = gold_project(work=2, gold=0)
    records = lines(
        {"id": "w1", "user": "erin", "annotations": {"sentiment": "negative"}},
        {"id": "w1", "user": "alice", "annotations": {"sentiment": "positive"}},
    )

    report = gold_import(project=project, source=io.BytesIO(records), user="erin")

    assert (
        report.summary() == f"1 gold item imported into {project.name}; 1 record of other annotators skipped"
    )
    assert gold_of(project) == {"w1": ({"sentiment": {"label": "negative"}}, "")}


def test_the_command_lists_the_problems_and_exits_2(tmp_path):
    project = gold_project(work=1, gold=0)
    path = tmp_path / "gold.jsonl"
    path.write_bytes(lines({"id": "w1", "annotations": {"sentiment": "great"}}))
    err = StringIO()

    with pytest.raises(CommandError) as failed:
        call_command("import_gold", project.name, str(path), stderr=err)

    assert failed.value.returncode == 2
    assert str(failed.value) == f"nothing imported into {project.name}: 1 error in 1 record"
    assert err.getvalue().strip() == (
        'line 1: annotations.sentiment.label: "great" is not one of the labels (positive, negative, neutral)'
    )


def test_an_empty_file_imports_nothing_and_says_so():
    project = gold_project(work=1, gold=0)

    report = gold_import(project=project, source=io.BytesIO(b""))

    assert not report.committed
    assert [str(issue) for issue in report.errors] == ["no gold records in the file"]
