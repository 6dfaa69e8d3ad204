"""Collection's jobs.

- Retrying trees' scoring (the collected trees admin's action): one job per project, one
  transaction per tree, so what a dead or cancelled run scored stays scored and the next run
  takes up the rest.
- Filling the ranking backlog (the projects admin's action): the dataset's uncollected trees
  join it, and as many are taken up for ranking as ``min_active_rankings_per_lang`` wants;
  a retry after a dead run does neither twice.
"""

from __future__ import annotations

from typing import Any

import pytest

from annotation.collection import scoring
from annotation.collection.jobs import backlog_job, scoring_retry_job
from tests.annotation.collection.collect import collect_project, fresh, rank, reply, review, state
from tests.annotation.collection.test_admin import act, growing
from tests.annotation.collection.test_admin import ada as ada
from tests.annotation.collection.test_admin import team as team
from tests.factories import ProjectFactory
from trees.jobs.models import Job
from trees.models import ConversationTree
from trees.services import tree_import

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


def backlog_project(team: list[Any], fixture_path: Any, **workflow: Any) -> Any:
    project = collect_project(team, **workflow)
    with fixture_path("oasst/en_10_trees.jsonl").open("rb") as source:
        assert tree_import(dataset=project.dataset, source=source, format_name="oasst").committed
    return project


def test_the_projects_admin_fills_the_ranking_backlog_in_a_job(
    ada: Any, team: Any, fixture_path: Any, settings: Any
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    project = backlog_project(team, fixture_path, min_active_rankings_per_lang=2, p_activate_backlog_tree=0.0)

    response = ada.post(
        "/admin/annotation/project/",
        {"action": "backlog_in_a_job", "_selected_action": [str(project.pk)]},
        follow=True,
    )

    job = Job.objects.get()
    assert [str(message) for message in response.context["messages"]] == [
        f"{project.name}: job {job.pk} fills the ranking backlog (its progress: /admin/jobs/job/)"
    ]
    assert (job.kind, job.state, job.result) == ("collection.backlog", "done", {"added": 10, "activated": 2})
    assert job.message == f"{project.name}: 10 trees added to the ranking backlog, 2 moved to ranking"
    states = sorted(ConversationTree.objects.filter(dataset=project.dataset).values_list("state", flat=True))
    assert states == ["backlog_ranking"] * 8 + ["ranking"] * 2


def test_a_retried_backlog_job_adds_and_activates_nothing_twice(
    ada: Any, team: Any, fixture_path: Any, settings: Any
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    project = backlog_project(team, fixture_path, min_active_rankings_per_lang=1, p_activate_backlog_tree=0.0)
    ada.post(
        "/admin/annotation/project/", {"action": "backlog_in_a_job", "_selected_action": [str(project.pk)]}
    )
    job = Job.objects.get()

    backlog_job.call(job.pk)  # the first run does the work
    Job.objects.filter(pk=job.pk).update(state="queued")  # as the reaper would, had it died after
    backlog_job.call(job.pk)

    job.refresh_from_db()
    assert (job.state, job.attempts, job.result) == ("done", 2, {"added": 0, "activated": 0})
    assert ConversationTree.objects.filter(dataset=project.dataset, state="ranking").count() == 1


def test_the_backlog_action_refuses_a_project_that_does_not_collect(ada: Any, settings: Any) -> None:
    project = ProjectFactory()

    response = ada.post(
        "/admin/annotation/project/",
        {"action": "backlog_in_a_job", "_selected_action": [str(project.pk)]},
        follow=True,
    )

    assert [str(message) for message in response.context["messages"]] == [
        f"{project.name}: does not collect trees; it has no ranking backlog"
    ]
    assert not Job.objects.exists()
