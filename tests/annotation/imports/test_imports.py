"""Importing annotations: the potato export read back, each record checked
like a page submission, all or nothing, with every problem located by line
and path; what it writes behaves like work done on the pages.

Alice and Bob annotate on the pages; Carol and Dave exist only in files.
"""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from annotation.exports import annotations_export
from annotation.imports import records
from annotation.imports.annotations import annotations_import
from annotation.models import Annotation, Assignment, Membership, ProjectItem
from annotation.work.assignment import NoItemAvailable, item_next
from annotation.work.submissions import draft_save, item_answers, item_skip, item_submit
from tests.annotation.exports.test_exports import branching_item, seed_configs, seed_item, seed_output
from tests.factories import DatasetFactory, MembershipFactory, PotatoTreeFactory, ProjectFactory, UserFactory
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db

User = get_user_model()
WHEN = "2025-01-31T09:30:00.123456Z"
SEED = seed_configs()[0]  # response_quality: likert node ratings and a selected path


def with_scheme(config: str, scheme: str) -> str:
    """``config`` with one more entry at the end of its annotation_schemes."""
    return config.replace("item_properties:", f"  - {scheme}\nitem_properties:")


def lines(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def run(project, data: bytes | str, **options: Any):
    source = io.BytesIO(data.encode() if isinstance(data, str) else data)
    return annotations_import(project=project, source=source, **options)


def exported(project, **options: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in annotations_export(project=project, format_name="potato", **options)]


def record(**fields: Any) -> dict[str, Any]:
    """A good record of the seed item, with ``fields`` changed (None removes one)."""
    base = {
        "id": "conv_001",
        "user": "carol",
        "status": "submitted",
        "annotations": seed_output(),
        "updated_at": WHEN,
    }
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def written() -> tuple[int, int, int, int, list[tuple[int, int]]]:
    """Everything an import could write: annotations, assignments, users, memberships, item counts."""
    counts = list(ProjectItem.objects.order_by("pk").values_list("active_count", "submitted_count"))
    return (
        Annotation.objects.count(),
        Assignment.objects.count(),
        User.objects.count(),
        Membership.objects.count(),
        counts,
    )


@pytest.fixture
def support():
    dataset = DatasetFactory(name="support")
    PotatoTreeFactory(dataset=dataset, item=seed_item())
    return dataset


@pytest.fixture
def project(support):
    return ProjectFactory(name="quality", dataset=support, config_yaml=SEED)


# -- the round trip ------------------------------------------------------------------------

ROUND_TRIP_CONFIG = (
    "annotation_schemes:\n"
    "  - annotation_type: tree_annotation\n"
    "    name: judged\n"
    "    description: Judge the conversation\n"
    "    node_scheme: {annotation_type: likert, size: 5}\n"
    "    path_selection: {enabled: true}\n"
    "    branch_comparison: {enabled: true}\n"
    "  - {annotation_type: radio, name: overall, description: Overall, labels: [good, bad]}\n"
    "assignment: {annotations_per_item: 3}\n"
)


def test_export_then_import_into_a_new_project_then_export_gives_the_same_records():
    dataset = DatasetFactory(name="shop")
    for item_id in ("boots", "sandals"):
        PotatoTreeFactory(dataset=dataset, item=branching_item(item_id))
    first = ProjectFactory(name="first", dataset=dataset, config_yaml=ROUND_TRIP_CONFIG)
    alice, bob, carol = (UserFactory(username=name) for name in ("alice", "bob", "carol"))
    for user in (alice, bob, carol):
        MembershipFactory(project=first, user=user)

    def answers(user, assignment) -> dict[str, Any]:
        shown = item_answers(project=first, tree=assignment.tree, user=user).payloads["judged"]
        order = shown["branch_comparisons"]["u2"]["shown_order"]
        return {
            "judged": {
                "node_annotations": {"r1": {"rating": 5}, "r2": {"rating": 2}},
                "selected_path": ["root", "a1", "u2", "r1"],
                "branch_comparisons": {
                    "u2": {"shown_order": order, "pairs": [{"a": order[0], "b": order[1], "label": "Better"}]}
                },
            },
            "overall": {"label": "good"},
        }

    for _ in range(2):
        assignment = item_next(project=first, user=alice)
        item_submit(
            project=first,
            tree=assignment.tree,
            user=alice,
            answers=answers(alice, assignment),
            version=assignment.version,
        )
    assignment = item_next(project=first, user=bob)
    draft_save(
        project=first,
        tree=assignment.tree,
        user=bob,
        answers=answers(bob, assignment),
        version=assignment.version,
    )
    assignment = item_next(project=first, user=carol)
    item_skip(project=first, tree=assignment.tree, user=carol)  # keeps the shuffled order it was shown
    before = exported(first, status="all")
    assert [(r["id"], r["user"], r["status"]) for r in before] == [
        ("boots", "alice", "submitted"),
        ("boots", "bob", "draft"),
        ("boots", "carol", "skipped"),
        ("sandals", "alice", "submitted"),
    ]

    second = ProjectFactory(name="second", dataset=dataset, config_yaml=ROUND_TRIP_CONFIG)
    report = run(second, lines(*before))

    assert (
        report.summary()
        == "imported into second: 4 records, 7 annotations; 3 users added as annotators: alice, bob, carol"
    )
    assert exported(second, status="all") == before
    assert set(second.annotations.values_list("source", flat=True)) == {"import"}


def test_a_json_array_of_records_is_read_too(project):
    report = run(project, json.dumps([record(user="carol"), record(user="dave", status="draft")], indent=2))

    assert report.committed
    assert [(r["user"], r["status"]) for r in exported(project, status="all")] == [
        ("carol", "submitted"),
        ("dave", "draft"),
    ]


# -- people ---------------------------------------------------------------------------------


def test_annotators_without_an_account_get_one_that_cannot_log_in_and_join_the_project(project):
    UserFactory(username="alice")

    report = run(project, lines(record(user="carol"), record(user="alice"), record(user="dave")))

    assert report.summary() == (
        "imported into quality: 3 records, 3 annotations; 2 annotators created: carol, dave; "
        "1 user added as an annotator: alice"
    )
    carol = User.objects.get(username="carol")
    assert not carol.has_usable_password()
    assert User.objects.get(username="alice").has_usable_password()
    assert set(project.memberships.values_list("user__username", "role")) == {
        ("alice", "annotator"),
        ("carol", "annotator"),
        ("dave", "annotator"),
    }


def test_existing_annotators_are_neither_created_nor_added_again(project):
    MembershipFactory(project=project, user=UserFactory(username="alice"))

    report = run(project, lines(record(user="alice")))

    assert report.summary() == "imported into quality: 1 record, 1 annotation"
    assert project.memberships.count() == 1


# -- what is written --------------------------------------------------------------------------


def test_imported_answers_keep_the_records_status_and_time_and_say_they_were_imported(project):
    run(project, lines(record()))

    annotation = Annotation.objects.get()
    assert (annotation.scheme, annotation.payload, annotation.status, annotation.source) == (
        "response_quality",
        seed_output()["response_quality"],
        "submitted",
        "import",
    )
    assert (
        annotation.updated_at
        == annotation.submitted_at
        == datetime(2025, 1, 31, 9, 30, 0, 123456, tzinfo=UTC)
    )


def test_each_record_gets_an_assignment_matching_its_status_and_the_items_count_it(project):
    run(
        project,
        lines(
            record(user="carol"),
            record(user="dave", status="draft"),
            record(user="erin", status="skipped", annotations={}),
        ),
    )

    assert dict(project.assignments.values_list("user__username", "status")) == {
        "carol": "submitted",
        "dave": "leased",
        "erin": "skipped",
    }
    dave = project.assignments.get(user__username="dave")
    assert dave.lease_expires_at is not None
    assert project.assignments.get(user__username="carol").lease_expires_at is None
    item = ProjectItem.objects.get(project=project)
    assert (item.active_count, item.submitted_count) == (2, 1)  # carol's submission and dave's lease
    assert item.is_full  # the overlap is one: nobody else is handed it


def test_hand_out_respects_imported_work(project):
    run(project, lines(record(user="carol"), record(user="dave", status="draft")))

    # One annotation per item: carol's submission fills the only item.
    with pytest.raises(NoItemAvailable):
        item_next(project=project, user=UserFactory(username="frank"))
    dave = User.objects.get(username="dave")
    # Dave's imported draft comes back to him, answers and all.
    assignment = item_next(project=project, user=dave)
    assert assignment.tree.external_id == "conv_001"
    assert item_answers(project=project, tree=assignment.tree, user=dave).payloads == seed_output()


def test_importing_the_same_records_again_replaces_the_answers_and_says_so(project):
    run(project, lines(record(user="carol"), record(user="dave", status="draft")))
    first = written()
    changed = record(
        user="carol",
        annotations={
            "response_quality": {"node_annotations": {"resp_a": {"rating": 1}}, "selected_path": []}
        },
    )

    report = run(project, lines(changed, record(user="dave", status="draft")))

    assert (
        report.summary()
        == "imported into quality: 2 records, 2 annotations; 2 records replaced earlier answers"
    )
    assert written() == first  # the same rows and counts, nothing doubled
    carol = Annotation.objects.get(user__username="carol")
    assert (carol.payload["node_annotations"], carol.version) == ({"resp_a": {"rating": 1}}, 2)


def test_replacing_a_submission_by_a_skip_frees_the_items_place(project):
    run(project, lines(record(user="carol")))

    run(project, lines(record(user="carol", status="skipped")))

    item = ProjectItem.objects.get(project=project)
    assert (item.active_count, item.submitted_count) == (0, 0)
    assert project.assignments.get().status == "skipped"


def test_a_replacing_record_drops_the_schemes_it_no_longer_answers(support):
    project = ProjectFactory(
        name="two",
        dataset=support,
        config_yaml=with_scheme(
            SEED, "{annotation_type: radio, name: overall, description: Overall, labels: [good, bad]}"
        ),
    )
    run(project, lines(record(annotations={**seed_output(), "overall": {"label": "good"}})))

    run(project, lines(record()))

    assert list(Annotation.objects.values_list("scheme", flat=True)) == ["response_quality"]


def test_an_empty_file_imports_nothing_and_says_so(project):
    report = run(project, b"")

    assert (report.committed, report.summary()) == (True, "imported into quality: 0 records, 0 annotations")


# -- bad input: every problem located, nothing written ------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(
            lines(record(), '{"id": '),
            ["line 2: malformed JSON at column 8: Expecting value"],
            id="malformed-line",
        ),
        pytest.param(
            b'[\n  {"id": ]', ["line 2: malformed JSON at column 10: Expecting value"], id="broken-array"
        ),
        pytest.param(
            lines(record(), [1, 2]),
            ["line 2: a record must be an object with id, user, status and annotations, got a list"],
            id="not-an-object",
        ),
        pytest.param(
            lines(record(colour="red")),
            ["line 1: colour: unknown key (expected id, user, status, annotations, updated_at)"],
            id="unknown-key",
        ),
        pytest.param(lines(record(id=None)), ["line 1: id: is required (the item id)"], id="no-id"),
        pytest.param(
            lines(record(id=7)), ["line 1: id: must be a non-empty string, got a number"], id="id-not-text"
        ),
        pytest.param(
            lines(record(user=None)), ["line 1: user: is required (the annotator's username)"], id="no-user"
        ),
        pytest.param(
            lines(record(user="carol smith")),
            [
                'line 1: user: "carol smith" is not a valid username: Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters.'
            ],
            id="bad-username",
        ),
        pytest.param(
            lines(record(status="done")),
            ['line 1: status: "done" is not one of submitted, draft, skipped'],
            id="bad-status",
        ),
        pytest.param(
            lines(record(updated_at="yesterday")),
            ['line 1: updated_at: "yesterday" is not an ISO 8601 date and time'],
            id="bad-time",
        ),
        pytest.param(
            lines(record(annotations=None)),
            ["line 1: annotations: is required (an object of scheme name: answer)"],
            id="no-annotations",
        ),
        pytest.param(
            lines(record(annotations=[])),
            ["line 1: annotations: must be an object of scheme name: answer, got a list"],
            id="annotations-not-object",
        ),
        pytest.param(
            lines(record(id="conv_999")),
            ['line 1: id: no item "conv_999" in project "quality"'],
            id="unknown-item",
        ),
        pytest.param(
            lines(record(annotations={"quality": {"rating": 3}})),
            ["line 1: annotations.quality: no scheme of that name (expected response_quality)"],
            id="unknown-scheme",
        ),
        pytest.param(
            lines(record(annotations={"response_quality": {"selected_path": ["root", "user_2"]}})),
            [
                'line 1: annotations.response_quality.selected_path[1]: "user_2" is not a reply to "root", the node before it'
            ],
            id="broken-path",
        ),
        pytest.param(
            lines(
                record(
                    annotations={
                        "response_quality": {
                            "node_annotations": {"resp_a": {"rating": 9}, "resp_z": {"rating": 1}}
                        }
                    }
                )
            ),
            [
                "line 1: annotations.response_quality.node_annotations.resp_a.rating: must be from 1 to 5, got 9",
                'line 1: annotations.response_quality.node_annotations.resp_z: no node "resp_z" in this tree',
            ],
            id="bad-ratings",
        ),
        pytest.param(
            lines(record(user="carol"), record(user="dave"), record(user="carol", status="draft")),
            ['line 3: a second record of "carol" for item "conv_001" (the first is on line 1)'],
            id="duplicate",
        ),
    ],
)
def test_a_bad_record_is_reported_with_its_line_and_path_and_nothing_is_written(project, content, expected):
    before = written()

    report = run(project, content)

    assert [str(issue) for issue in report.errors] == expected
    assert not report.committed
    assert written() == before


def test_a_submitted_record_must_answer_every_required_scheme_like_a_page_submission(support):
    config = with_scheme(
        SEED,
        "{annotation_type: text, name: comment, description: Comment, label_requirement: {required: true}}",
    )
    project = ProjectFactory(name="strict", dataset=support, config_yaml=config)

    report = run(project, lines(record(), record(user="dave", status="draft")))

    assert [str(issue) for issue in report.errors] == [
        "line 1: annotations.comment: is required before submitting"
    ]


def test_every_problem_of_every_record_is_listed_with_the_summary(project):
    report = run(
        project, lines(record(), record(status="done", user="dave"), "[", record(id="nope", user="erin"))
    )

    assert [str(issue) for issue in report.errors] == [
        'line 2: status: "done" is not one of submitted, draft, skipped',
        "line 3: malformed JSON at column 2: Expecting value",
        'line 4: id: no item "nope" in project "quality"',
    ]
    assert report.summary() == "nothing imported into quality: 3 errors in 4 records"


def test_records_already_written_are_taken_back_when_a_later_batch_fails(project, monkeypatch):
    monkeypatch.setattr(
        records, "BATCH_RECORDS", 1
    )  # the good first record is written before the bad one is read
    before = written()

    report = run(project, lines(record(user="carol"), record(user="dave", id="conv_999")))

    assert [str(issue) for issue in report.errors] == ['line 2: id: no item "conv_999" in project "quality"']
    assert written() == before
    assert not User.objects.filter(username="carol").exists()


def test_trees_of_other_datasets_are_not_items_of_the_project(project):
    PotatoTreeFactory(dataset=DatasetFactory(name="elsewhere"), item={**seed_item(), "id": "conv_002"})

    report = run(project, lines(record(id="conv_002")))

    assert [str(issue) for issue in report.errors] == ['line 1: id: no item "conv_002" in project "quality"']
    assert ConversationTree.objects.count() == 2


def test_a_gzipped_file_is_read_as_such_and_a_damaged_one_is_refused(project):
    packed = gzip.compress(lines(record()))

    damaged = run(project, packed[:-12])
    assert [str(issue) for issue in damaged.errors] == [
        "the gzip file is damaged (Compressed file ended before the end-of-stream marker was reached)"
    ]
    assert not Annotation.objects.exists()
    assert (
        run(project, packed).summary()
        == "imported into quality: 1 record, 1 annotation; 1 annotator created: carol"
    )
