"""Retrying trees' scoring in a job (the collected trees admin's action): one job per project,
one transaction per tree, so what a dead or cancelled run scored stays scored and the next
run takes up the rest.
"""

from __future__ import annotations

from typing import Any

import pytest

from annotation.collection import scoring
from annotation.collection.jobs import scoring_retry_job
from tests.annotation.collection.collect import fresh, rank, reply, review, state
from tests.annotation.collection.test_admin import act, growing
from tests.annotation.collection.test_admin import ada as ada
from tests.annotation.collection.test_admin import team as team
from trees.jobs.models import Job

pytestmark = pytest.mark.django_db


def failed_scoring(team: list[Any], monkeypatch: Any) -> tuple[Any, Any, Any, Any]:
    alice, bob, carol, dave, erin = team
    project, root = growing(team)
    first, second = reply(project, bob, root), reply(project, carol, root)
    review(project, [dave, erin], first)
    review(project, [dave, erin], second)
    review(project, [dave, erin], reply(project, alice, first))
    monkeypatch.setattr(scoring, "ranked_pairs", lambda rankings: 1 / 0)
    rank(project, dave, root, [second, first])
    rank(project, erin, root, [second, first])
    monkeypatch.undo()
    assert state(root) == "scoring_failed"
    return project, root, first, second


def test_the_admin_retries_the_scoring_in_a_job(ada: Any, team: Any, monkeypatch: Any, settings: Any) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    project, root, _first, second = failed_scoring(team, monkeypatch)

    shown = act(ada, "collectedtree", "retry_scoring_in_a_job", [root.tree_id])

    job = Job.objects.get()
    assert shown == [f"{project.name}: job {job.pk} retries the scoring (its progress: /admin/jobs/job/)"]
    assert (job.kind, job.state, job.unit, job.done, job.total) == (
        "collection.scoring_retry",
        "done",
        "trees",
        1,
        1,
    )
    assert job.message == f"{project.name}: 1 scored, 0 failed again, 0 back to ranking (rankings missing)"
    assert (state(root), fresh(second).rank) == ("ready_for_export", 0)


def test_a_second_run_of_the_retry_finds_nothing_left_to_do(
    ada: Any, team: Any, monkeypatch: Any, settings: Any
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    _project, root, _first, _second = failed_scoring(team, monkeypatch)
    act(ada, "collectedtree", "retry_scoring_in_a_job", [root.tree_id])
    job = Job.objects.get()

    scoring_retry_job.call(job.pk)  # the first run scores the tree
    Job.objects.filter(pk=job.pk).update(state="queued")  # as the reaper would, had it died after
    scoring_retry_job.call(job.pk)

    job.refresh_from_db()
    assert (job.state, job.attempts, job.result) == (
        "done",
        2,
        {"scored": 0, "failed": 0, "back_to_ranking": 0},
    )
    assert state(root) == "ready_for_export"
