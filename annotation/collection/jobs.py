"""Collection's jobs (``trees.jobs``): retrying the scoring of many trees, and filling and
taking up the ranking backlog, off the request.

Each tree is retried in a transaction of its own (``scoring_retry``), so the job runs with
``atomic=False``: a worker that dies mid-way leaves the trees it scored scored, and the
retried job takes up the ones still in ``scoring_failed``. The backlog's job adds the
dataset's uncollected trees in one transaction, then activates as many trees as the
workflow wants being ranked in another: a retry after a dead run adds nothing twice and
finds the trees it activated already being ranked.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django_tasks import task

from annotation.collection.advance import scoring_retry
from annotation.collection.backlog import backlog_activate, backlog_add
from annotation.collection.models import CollectedTree
from annotation.models import Project
from annotation.projects.config import project_config
from trees.jobs.models import Job
from trees.jobs.services import JobRun, Outcome, job_enqueue, job_execute
from trees.vocabulary import RANKING

SCORING_RETRY = "collection.scoring_retry"
BACKLOG = "collection.backlog"
# ``params["activate"]``: as many as keep ``min_active_rankings_per_lang`` trees being ranked.
MINIMUM = "minimum"


@task()
def scoring_retry_job(job_id: int) -> None:
    """Retry the scoring of the job's trees (``params["tree_ids"]``, or all that failed)."""
    job_execute(job_id, scoring_retry_work, atomic=False)


def scoring_retry_work(run: JobRun) -> Outcome:
    project = Project.objects.get(name=run.job.project_name)
    report = scoring_retry(project=project, tree_ids=run.job.params.get("tree_ids"), progress=run.progress)
    run.progress(run.job.total, run.job.total)
    result = {"scored": report.scored, "failed": report.failed, "back_to_ranking": report.back_to_ranking}
    return Outcome(ok=True, result=result, message=f"{project.name}: {report.summary()}")


def backlog_enqueue(*, project: Project, user: Any, via: str) -> Job:
    """A job that fills the project's ranking backlog and activates as many trees as its
    ``min_active_rankings_per_lang`` still wants being ranked (Open-Assistant's rule)."""
    return job_enqueue(
        kind=BACKLOG,
        task=backlog_job,
        created_by=user,
        via=via,
        project_name=project.name,
        params={"add": True, "activate": MINIMUM},
        total=2,
        unit="steps",
    )


@task()
def backlog_job(job_id: int) -> None:
    """Put the project dataset's uncollected trees in its ranking backlog (``params["add"]``),
    then move ``params["activate"]`` of them to ranking."""
    job_execute(job_id, backlog_work, atomic=False)


def backlog_work(run: JobRun) -> Outcome:
    project = Project.objects.get(name=run.job.project_name)
    params = run.job.params
    added = backlog_add(project=project) if params.get("add") else 0
    run.progress(1, 2)
    with transaction.atomic():  # all the activations or none
        wanted = _wanted(project, params.get("activate"))
        activated = backlog_activate(project=project, count=wanted) if wanted else 0
    run.progress(2, 2)
    message = f"{project.name}: {added:,} trees added to the ranking backlog, {activated:,} moved to ranking"
    return Outcome(ok=True, result={"added": added, "activated": activated}, message=message)


def _wanted(project: Project, activate: Any) -> int:
    """How many backlog trees to activate: a number, or (``MINIMUM``) as many as the project's
    ``min_active_rankings_per_lang`` still wants — counted now, so a retry wants no more."""
    if activate != MINIMUM:
        return int(activate or 0)
    ranking = CollectedTree.objects.filter(project=project, tree__state=RANKING).count()
    return max(0, project_config(project).workflow.min_active_rankings_per_lang - ranking)
