"""Evaluation's jobs (``trees.jobs``): a rubric's checks over a whole project, and agreement
recomputed, off the request."""

from __future__ import annotations

from django_tasks import task

from annotation.models import Project
from evaluation.agreement.project import agreement_refresh
from evaluation.models import Rubric
from evaluation.services import NoVersion, project_evaluate
from trees.jobs.services import JobRun, Outcome, job_execute

RUBRIC_EVALUATE = "rubric.evaluate"
AGREEMENT_REFRESH = "agreement.refresh"


@task()
def rubric_evaluate_job(job_id: int) -> None:
    """Run the rubric's automatic checks over every item of the job's project (``evaluate``)."""
    job_execute(job_id, rubric_evaluate_work)


def rubric_evaluate_work(run: JobRun) -> Outcome:
    project = Project.objects.get(name=run.job.project_name)
    rubric = Rubric.objects.get(name=run.job.params["rubric"])
    try:
        summary = project_evaluate(project=project, rubric=rubric, progress=run.progress)
    except NoVersion as error:
        problem = {"path": "rubric", "message": str(error), "text": f"rubric: {error}"}
        return Outcome(ok=False, result={}, message=str(error), problems=[problem])
    result = {
        "version": summary.version.number,
        "items": summary.items,
        "results": summary.results,
        "outcomes": dict(summary.outcomes),
        "seconds": summary.seconds,
    }
    return Outcome(ok=True, result=result, message=summary.line(project.name))


@task()
def agreement_refresh_job(job_id: int) -> None:
    """Recompute and keep the job's project's agreement figures (the admin's refresh)."""
    job_execute(job_id, agreement_refresh_work)


def agreement_refresh_work(run: JobRun) -> Outcome:
    project = Project.objects.get(name=run.job.project_name)
    figures = agreement_refresh(project).figures
    return Outcome(ok=True, result=figures, message=f"agreement of {project.name} recomputed")
