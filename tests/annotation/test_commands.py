"""create_project, add_member, export_annotations, import_annotations: thin
commands over the services, with a summary line, errors on standard error
and exit code 2 on bad input."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation, Membership, Project
from annotation.schemes import SCHEMES
from tests.annotation.exports.test_exports import seed_configs, seed_item, seed_output
from tests.factories import (
    AnnotationFactory,
    DatasetFactory,
    MembershipFactory,
    PotatoTreeFactory,
    ProjectFactory,
    UserFactory,
)

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


@pytest.fixture
def support():
    dataset = DatasetFactory(name="support")
    PotatoTreeFactory(dataset=dataset, item=seed_item())
    return dataset


@pytest.fixture
def config_file(tmp_path: Path):
    def write(text: str, name: str = "project.yaml") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


@pytest.fixture
def quality(support):
    return ProjectFactory(name="quality", dataset=support, config_yaml=seed_configs()[0])


# -- create_project ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "index",
    range(5),
    ids=["response_quality", "response_rating", "best_path", "multi_criteria", "branch_compare"],
)
def test_each_documented_potato_config_creates_a_project_over_the_datasets_trees(support, config_file, index):
    out, err = run(
        "create_project", "judging", "--dataset", "support", "--config", config_file(seed_configs()[index])
    )

    assert (out, err) == ("created project judging over dataset support: 1 item\n", "")
    project = Project.objects.get(name="judging")
    assert project.config["annotation_schemes"][0]["annotation_type"] == "tree_annotation"
    assert project.items.count() == 1


def test_create_project_lists_the_potato_keys_it_ignores_and_how_it_read_the_others(support, config_file):
    config = seed_configs()[1] + "\nport: 8000\nassignment_strategy: random\n"

    out, _ = run("create_project", "judging", "--dataset", "support", "--config", config_file(config))

    assert out.splitlines() == [
        "ignored: port (a Potato setting Branchpoint does not use)",
        'note: assignment_strategy: read as assignment.order "random"',
        "created project judging over dataset support: 1 item",
    ]


def test_create_project_takes_a_title_and_instructions_from_a_file(support, config_file, tmp_path):
    instructions = tmp_path / "instructions.md"
    instructions.write_text("Rate every reply.\n")

    run(
        "create_project", "judging", "--dataset", "support", "--config", config_file(seed_configs()[0]),
        "--title", "Support replies", "--instructions-file", str(instructions),
    )  # fmt: skip

    project = Project.objects.get(name="judging")
    assert (project.title, project.instructions) == ("Support replies", "Rate every reply.\n")


def test_a_bad_config_exits_2_listing_each_problem_by_key_path_and_creates_nothing(support, config_file):
    config = (
        "annotation_schemes:\n"
        "  - annotation_type: tree_annotation\n"
        "    name: rated\n"
        "    description: Rate the conversation\n"
        "    node_scheme: {annotation_type: likert, size: 1}\n"
        "  - {annotation_type: likret, name: overall, description: Overall}\n"
    )
    path = config_file(config)

    error, err = failure("create_project", "judging", "--dataset", "support", "--config", path)

    assert error.returncode == 2
    assert str(error) == f"project judging not created: 2 problems in {path}"
    assert err.splitlines() == [
        "annotation_schemes[0].node_scheme.size: must be an integer ≥ 2",
        'annotation_schemes[1].annotation_type: unknown type "likret" (expected one of '
        + ", ".join(sorted(SCHEMES))
        + '; did you mean "likert"?)',
    ]
    assert not Project.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["judging", "--dataset", "nowhere"], 'no dataset named "nowhere"'),
        (["quality", "--dataset", "support"], 'a project named "quality" already exists'),
        (
            ["two words", "--dataset", "support"],
            '"two words" cannot name a project: Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.',
        ),
    ],
)
def test_create_project_refuses_an_unknown_dataset_a_taken_or_bad_name(quality, config_file, args, message):
    error, _ = failure("create_project", *args, "--config", config_file(seed_configs()[0]))

    assert (error.returncode, str(error)) == (2, message)
    assert Project.objects.count() == 1


def test_create_project_says_when_the_config_file_cannot_be_read(support, tmp_path):
    missing = tmp_path / "missing.yaml"

    error, _ = failure("create_project", "judging", "--dataset", "support", "--config", str(missing))

    assert (error.returncode, str(error)) == (
        2,
        f"cannot read the configuration {missing}: No such file or directory",
    )


# -- add_member -----------------------------------------------------------------------------------


def test_add_member_gives_a_user_a_role_once(quality):
    UserFactory(username="alice")

    assert run("add_member", "quality", "alice", "--role", "annotator") == (
        "alice is now annotator of quality\n",
        "",
    )
    assert run("add_member", "quality", "alice", "--role", "annotator") == (
        "alice was already annotator of quality\n",
        "",
    )
    assert list(Membership.objects.values_list("user__username", "role")) == [("alice", "annotator")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere", "alice", "--role", "annotator"], 'no project named "nowhere"'),
        (["quality", "zed", "--role", "annotator"], 'no user named "zed"'),
        (
            ["quality", "alice", "--role", "owner"],
            'unknown role "owner" (expected manager, annotator, reviewer)',
        ),
    ],
)
def test_add_member_refuses_an_unknown_project_user_or_role(quality, args, message):
    UserFactory(username="alice")

    error, _ = failure("add_member", *args)

    assert (error.returncode, str(error)) == (2, message)
    assert not Membership.objects.exists()


# -- export_annotations --------------------------------------------------------------------------


@pytest.fixture
def answered(quality):
    tree = quality.dataset.trees.get()
    for name, status in (("alice", "submitted"), ("bob", "draft")):
        AnnotationFactory(
            project=quality,
            tree=tree,
            user=UserFactory(username=name),
            scheme="response_quality",
            payload=seed_output()["response_quality"],
            status=status,
        )
    return quality


def test_export_writes_submitted_records_to_standard_output_and_the_summary_to_standard_error(answered):
    out, err = run("export_annotations", "quality", "--format", "potato")

    [record] = [json.loads(line) for line in out.splitlines()]
    assert (record["user"], record["annotations"]) == ("alice", seed_output())
    assert err == "exported 1 record of quality\n"


def test_export_to_a_file_with_every_status_or_one_annotator(answered, tmp_path):
    path = tmp_path / "all.jsonl"

    out, _ = run("export_annotations", "quality", "--format", "potato", "--status", "all", "-o", str(path))

    assert out == f"exported 2 records of quality to {path}\n"
    assert [json.loads(line)["user"] for line in path.read_text().splitlines()] == ["alice", "bob"]
    out, _ = run("export_annotations", "quality", "--format", "potato", "--status", "all", "--user", "bob")
    assert [json.loads(line)["user"] for line in out.splitlines()] == ["bob"]


def test_export_pairs_and_paths_counted_in_their_own_units_and_gzipped_by_name(answered, tmp_path):
    path = tmp_path / "sft.jsonl.gz"

    out, _ = run("export_annotations", "quality", "--format", "sft", "-o", str(path))
    _, err = run("export_annotations", "quality", "--format", "pairs")

    assert out == f"exported 1 path of quality to {path}\n"
    [conversation] = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    assert [message["role"] for message in conversation["messages"]] == ["user", "assistant", "user"]
    assert err == "exported 1 pair of quality\n"  # resp_a (4) over resp_b (2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere", "--format", "potato"], 'no project named "nowhere"'),
        (["quality", "--format", "potato", "--user", "zed"], 'no user named "zed"'),
    ],
)
def test_export_refuses_an_unknown_project_or_user(quality, args, message):
    error, _ = failure("export_annotations", *args)

    assert (error.returncode, str(error)) == (2, message)


# -- import_annotations --------------------------------------------------------------------------


def test_import_reads_an_export_and_ends_with_a_summary_line(answered, support, tmp_path):
    path = tmp_path / "quality.jsonl"
    run("export_annotations", "quality", "--format", "potato", "-o", str(path))
    ProjectFactory(name="again", dataset=support, config_yaml=seed_configs()[0])

    out, err = run("import_annotations", "again", str(path))

    assert (out, err) == (
        "imported into again: 1 record, 1 annotation; 1 user added as an annotator: alice\n",
        "",
    )


def test_import_exits_2_listing_every_error_and_writes_nothing(quality, tmp_path):
    path = tmp_path / "bad.jsonl"
    good = {"id": "conv_001", "user": "carol", "annotations": seed_output()}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "user": "dave", "status": "done"}) + "\n")

    error, err = failure("import_annotations", "quality", str(path))

    assert error.returncode == 2
    assert str(error) == "nothing imported into quality: 1 error in 2 records"
    assert err.splitlines() == ['line 2: status: "done" is not one of submitted, draft, skipped']
    assert not Annotation.objects.exists()


def test_import_refuses_an_unknown_project_or_a_missing_file(quality, tmp_path):
    missing = tmp_path / "missing.jsonl"

    assert str(failure("import_annotations", "nowhere", str(missing))[0]) == 'no project named "nowhere"'
    error, _ = failure("import_annotations", "quality", str(missing))
    assert (error.returncode, str(error)) == (2, f"cannot read {missing}: No such file or directory")


def test_membership_factory_and_commands_agree_on_roles(quality):
    MembershipFactory(project=quality, user=UserFactory(username="alice"), role="reviewer")

    out, _ = run("add_member", "quality", "alice", "--role", "manager")

    assert out == "alice is now manager of quality\n"
    assert sorted(Membership.objects.values_list("role", flat=True)) == ["manager", "reviewer"]


# -- text that cannot be stored -------------------------------------------------------------------


def test_create_project_refuses_a_title_that_is_not_text(support, config_file):
    """A byte the locale cannot decode arrives as a lone surrogate, which no database stores."""
    config = config_file(seed_configs()[0])

    error, _ = failure(
        "create_project", "judging", "--dataset", "support", "--config", config, "--title", "\udcff"
    )

    assert (error.returncode, str(error)) == (
        2,
        "title: contains a lone UTF-16 surrogate (\\udcff), which is not text and cannot be stored",
    )
    assert not Project.objects.exists()


def test_create_project_refuses_instructions_with_a_nul_naming_the_line(support, config_file, tmp_path):
    instructions = tmp_path / "instructions.md"
    instructions.write_text("Rate every reply.\nThen\x00stop.\n")
    config = config_file(seed_configs()[0])

    error, _ = failure(
        "create_project", "judging", "--dataset", "support", "--config", config,
        "--instructions-file", str(instructions),
    )  # fmt: skip

    assert (error.returncode, str(error)) == (
        2,
        f"cannot read the instructions file {instructions}: line 2 contains a NUL character (\\u0000), "
        "which cannot be stored",
    )
    assert not Project.objects.exists()


def test_create_project_refuses_a_yaml_escape_that_is_not_text(support, config_file):
    config = config_file('instructions: "\\ud800"\n' + seed_configs()[0])

    error, err = failure("create_project", "judging", "--dataset", "support", "--config", config)

    assert error.returncode == 2
    [problem] = err.splitlines()
    assert problem.endswith(
        "contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored"
    )
    assert problem.startswith("line ")
    assert not Project.objects.exists()


def test_import_refuses_an_answer_that_is_not_text_naming_the_line(quality, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "conv_001", "user": "carol", "annotations": {"x": "\ud800"}}) + "\n")

    error, err = failure("import_annotations", "quality", str(path))

    assert error.returncode == 2
    assert err.splitlines() == [
        "line 1: annotations.x: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored"
    ]
    assert not Annotation.objects.exists()
