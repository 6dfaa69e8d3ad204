"""Rubrics saved with their versions, and automatic evaluation in bulk: the ``create_rubric``
and ``evaluate`` commands over the service, idempotent, with one JSON line per item."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.problems import ProblemsError
from evaluation.models import EvaluationResult, Rubric, RubricVersion
from evaluation.services import project_evaluate, rubric_save
from tests.evaluation.samples import CONVERSATIONS, EXPECTED, RUBRIC_YAML, SAMPLE, scheduling_project
from tests.factories import RubricFactory

pytestmark = pytest.mark.django_db


def run(name: str, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def failure(name: str, *args: str) -> tuple[CommandError, str]:
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command(name, *args, stdout=io.StringIO(), stderr=err)
    return caught.value, err.getvalue()


# -- rubrics and versions -----------------------------------------------------------------------


def test_create_rubric_makes_version_one_and_a_changed_file_a_new_version(tmp_path: Path):
    path = tmp_path / "scheduling.yaml"
    path.write_text(RUBRIC_YAML)

    created, _ = run("create_rubric", str(path))
    unchanged, _ = run("create_rubric", str(path))
    path.write_text(
        RUBRIC_YAML.replace("weight: 0.10", "weight: 0.05").replace(
            "weight: 0.20\n    check:\n      any", "weight: 0.25\n    check:\n      any"
        )
    )
    changed, _ = run("create_rubric", str(path))

    assert created == "created rubric scheduling v1 (conversation): 5 criteria, 1 gate, 4 outcomes\n"
    assert unchanged == "unchanged rubric scheduling v1 (conversation): 5 criteria, 1 gate, 4 outcomes\n"
    assert changed == "new version of rubric scheduling v2 (conversation): 5 criteria, 1 gate, 4 outcomes\n"
    rubric = Rubric.objects.get(name="scheduling")
    assert [v.number for v in rubric.versions.all()] == [2, 1]
    assert rubric.versions.get(number=1).yaml == RUBRIC_YAML
    assert rubric.versions.get(number=2).spec["criteria"][2]["weight"] == 0.05


def test_create_rubric_lists_every_problem_and_exits_2(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\ncriteria:\n  - {key: a, question: 'A?', weight: 0.5, check: {python: launch}}\n"
        "outcomes:\n  - {name: ok, requires: [b]}\n  - {name: fallback}\n"
    )

    error, err = failure("create_rubric", str(path))

    assert error.returncode == 2
    assert str(error) == f"rubric not saved: 3 problems in {path}"
    assert err.splitlines() == [
        'criteria[0].check.python: no Python check "launch" is registered (settings.BRANCHPOINT_RUBRIC_CHECKS has: booking_confirmed)',
        'outcomes[0].requires[0]: unknown key "b" (criteria and gates are: a)',
        "criteria: the weights sum to 0.5, not 1.0: fix them, or set normalize: true to divide scores by their sum",
    ]
    assert not Rubric.objects.exists()


def test_a_normalised_rubric_is_saved_with_a_warning(tmp_path: Path):
    path = tmp_path / "points.yaml"
    path.write_text(
        "name: points\nnormalize: true\ncriteria:\n  - {key: a, question: 'A?', weight: 3}\noutcomes:\n  - {name: all}\n"
    )

    out, _ = run("create_rubric", str(path))

    assert out.splitlines() == [
        "warning: the positive weights sum to 3: scores are divided by 3",
        "created rubric points v1 (conversation): 1 criterion, 0 gates, 1 outcome",
    ]


def test_a_rubric_keeps_its_name_when_edited():
    RubricFactory(yaml=RUBRIC_YAML)

    with pytest.raises(ProblemsError) as caught:
        rubric_save(yaml_text=RUBRIC_YAML.replace("name: scheduling", "name: booking"), name="scheduling")

    assert [str(p) for p in caught.value.problems] == [
        'name: "booking" is not this rubric\'s name: a rubric keeps its name ("scheduling")'
    ]


# -- evaluate ------------------------------------------------------------------------------------


def test_evaluate_stores_one_automatic_result_per_item_with_the_version_it_used(tmp_path: Path):
    project = scheduling_project()

    out, _ = run("evaluate", "scheduling", "--rubric", "scheduling")

    assert out.startswith("evaluated 8 items of scheduling with rubric scheduling v1 in ")
    assert out.endswith(": successful_completion 2, graceful_failure 2, partial_failure 3, hard_failure 1\n")
    results = EvaluationResult.objects.filter(project=project).select_related("tree", "rubric_version")
    assert {
        r.tree.external_id: {"details": r.details, "score": r.score, "outcome": r.outcome} for r in results
    } == EXPECTED
    assert {(r.source, r.node, r.rubric_version.number) for r in results} == {("auto", "", 1)}


def test_evaluate_writes_one_json_line_per_item_for_ci(tmp_path: Path):
    scheduling_project()
    output = tmp_path / "results.jsonl"

    run("evaluate", "scheduling", "--rubric", "scheduling", "-o", str(output))

    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["id"] for line in lines] == [f"sched_00{i}" for i in range(1, 9)]
    assert {line["id"]: {k: line[k] for k in ("details", "score", "outcome")} for line in lines} == EXPECTED
    assert list(lines[0]) == ["id", "score", "outcome", "details", "explanation"]
    assert lines[7]["explanation"].startswith("Outcome hard_failure: the fallback (rule 4 of 4)")


def test_evaluate_can_write_the_lines_to_standard_output_and_its_summary_to_standard_error():
    scheduling_project(items=CONVERSATIONS[:2])

    out, err = run("evaluate", "scheduling", "--rubric", "scheduling", "-o", "-")

    assert [json.loads(line)["outcome"] for line in out.splitlines()] == ["successful_completion"] * 2
    assert err.startswith("evaluated 2 items of scheduling")


def test_evaluating_again_replaces_the_results_instead_of_adding_to_them():
    project = scheduling_project()
    rubric = Rubric.objects.get(name="scheduling")

    project_evaluate(project=project, rubric=rubric, chunk_size=3)
    first = sorted(EvaluationResult.objects.values_list("tree_id", "score", "outcome", "details"))
    project_evaluate(project=project, rubric=rubric, chunk_size=5)

    assert EvaluationResult.objects.count() == 8
    assert sorted(EvaluationResult.objects.values_list("tree_id", "score", "outcome", "details")) == first


def test_a_new_version_keeps_the_results_of_the_old_one():
    project = scheduling_project()
    rubric = Rubric.objects.get(name="scheduling")
    project_evaluate(project=project, rubric=rubric)
    stricter = RUBRIC_YAML.replace("min_score: 0.75", "min_score: 0.95")
    rubric_save(yaml_text=stricter)

    project_evaluate(project=project, rubric=rubric)

    by_version = {
        number: sorted(
            EvaluationResult.objects.filter(rubric_version__number=number).values_list("outcome", flat=True)
        )
        for number in (1, 2)
    }
    assert by_version[1].count("successful_completion") == 2
    assert by_version[2].count("successful_completion") == 1  # sched_002 scores 0.9
    assert RubricVersion.objects.get(number=1).results.count() == 8


def test_evaluate_judges_every_path_or_node_when_the_rubric_says_so():
    rubric = RubricFactory(
        yaml="name: replies\ntarget: node\ncriteria:\n"
        "  - {key: long, question: 'Long enough?', weight: 1, check: {length: {message: last_assistant, min: 20}}}\n"
        "outcomes:\n  - {name: good, min_score: 1}\n  - {name: bad}\n"
    )
    project = scheduling_project(
        "nodes",
        "annotation_schemes:\n  - {annotation_type: likert, name: q, description: Q, size: 3}\n",
        CONVERSATIONS[:2],
    )

    summary = project_evaluate(project=project, rubric=rubric)

    results = {
        (r.tree.external_id, r.node): r.outcome for r in EvaluationResult.objects.select_related("tree")
    }
    assert summary.results == 3 and summary.items == 2
    assert results == {("sched_001", "m1"): "good", ("sched_001", "m3"): "good", ("sched_002", "m1"): "good"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere", "--rubric", "scheduling"], 'no project named "nowhere"'),
        (["scheduling", "--rubric", "nothing"], 'no rubric named "nothing"'),
    ],
)
def test_evaluate_refuses_unknown_names_with_exit_code_2(args, message):
    scheduling_project(items=CONVERSATIONS[:1])

    error, _ = failure("evaluate", *args)

    assert (error.returncode, str(error)) == (2, message)


def test_the_sample_files_are_what_the_docs_say():
    assert sorted(path.name for path in SAMPLE.iterdir()) == [
        "README.md",
        "conversations.json",
        "expected.json",
        "rubric.yaml",
    ]
