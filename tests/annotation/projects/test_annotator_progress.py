"""Each annotator's submitted items are kept as a count (``AnnotatorProgress``), not counted.

The count follows every way work becomes submitted or stops being so, and always equals a
recount of their assignments (gold checks in, training out):

- a submission counts once, a later save of the submitted item not again;
- a reviewer sending work back takes it off, resubmitting puts it back;
- an import of annotation records counts its submitted records, and one replacing a
  submitted record with a draft takes it off.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from annotation.imports.annotations import annotations_import
from annotation.models import Assignment, Project
from annotation.projects.selectors import project_progress
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_submit
from tests.annotation.annotator_items import SEED_ITEM, person, project_over

pytestmark = pytest.mark.django_db

QUALITY = "annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def project(alice: Any) -> Project:
    items = [{**SEED_ITEM, "id": f"conv_{index}"} for index in range(3)]
    return project_over("kept", QUALITY, items, [alice], managers=[person("maggie")])


def recount(project: Project, user: Any) -> int:
    return (
        Assignment.objects.filter(project=project, user=user, status=Assignment.Status.SUBMITTED)
        .exclude(kind=Assignment.Kind.TRAINING)
        .count()
    )


def submitted(project: Project, user: Any) -> int:
    kept = project_progress(project=project, user=user).submitted
    assert kept == recount(project, user)
    return kept


def answer(project: Project, user: Any) -> Assignment:
    held = item_next(project=project, user=user)
    return item_submit(
        project=project, tree=held.tree, user=user, answers={"quality": {"rating": 4}}, version=held.version
    )


def test_a_submission_counts_once(project: Project, alice: Any) -> None:
    assert submitted(project, alice) == 0
    done = answer(project, alice)
    answer(project, alice)
    assert submitted(project, alice) == 2

    item_submit(
        project=project, tree=done.tree, user=alice, answers={"quality": {"rating": 2}}, version=done.version
    )
    draft_save(
        project=project,
        tree=done.tree,
        user=alice,
        answers={"quality": {"rating": 3}},
        version=done.version + 1,
    )

    assert submitted(project, alice) == 2


def test_work_sent_back_is_taken_off_until_resubmitted(project: Project, alice: Any) -> None:
    done = answer(project, alice)
    maggie = project.memberships.get(role="manager").user

    review_decide(
        reviewer=maggie, assignment=done, decision="rejected", comment="why 4?", version=done.version
    )
    assert submitted(project, alice) == 0

    done.refresh_from_db()
    item_submit(
        project=project, tree=done.tree, user=alice, answers={"quality": {"rating": 3}}, version=done.version
    )
    assert submitted(project, alice) == 1


def test_an_import_counts_its_submitted_records_and_a_draft_replacing_one_takes_it_off(
    project: Project, alice: Any
) -> None:
    def records(*pairs: tuple[str, str]) -> io.BytesIO:
        lines = [
            {"id": item, "user": "alice", "status": status, "annotations": {"quality": {"rating": 5}}}
            for item, status in pairs
        ]
        return io.BytesIO("\n".join(json.dumps(line) for line in lines).encode())

    assert annotations_import(
        project=project, source=records(("conv_0", "submitted"), ("conv_1", "submitted"))
    ).committed
    assert submitted(project, alice) == 2

    assert annotations_import(project=project, source=records(("conv_1", "draft"))).committed
    assert submitted(project, alice) == 1
