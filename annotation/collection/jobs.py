"""Collection's jobs (``trees.jobs``): retrying the scoring of many trees off the request.

Each tree is retried in a transaction of its own (``scoring_retry``), so the job runs with
``atomic=False``: a worker that dies mid-way leaves the trees it scored scored, and the
retried job takes up the ones still in ``scoring_failed``.
"""

from __future__ import annotations

from django_tasks import task

from annotation.collection.advance import scoring_retry
from annotation.models import Project
from trees.jobs.services import JobRun, Outcome, job_execute

SCORING_RETRY = "collection.scoring_retry"


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
