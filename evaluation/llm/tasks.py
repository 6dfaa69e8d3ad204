"""Model work as jobs (``trees.jobs``): a judge's run over a project.

The run commits item by item (``atomic=False``): a worker that dies mid-way keeps the
items it finished, and the retried job skips them (``judging``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django_tasks import task

from annotation.models import Project
from evaluation.llm.judging import judge_run, judge_schemes
from evaluation.llm.limits import Budget
from evaluation.llm.models import Judge
from trees.jobs.models import Job
from trees.jobs.services import JobRun, Outcome, job_enqueue, job_execute

JUDGE_RUN = "judge.run"


def judge_run_enqueue(
    *,
    judge: Judge,
    project: Project,
    user: Any,
    via: str,
    scheme: str = "",
    redo: bool = False,
    max_tokens: int | None = None,
    max_cost: Decimal | None = None,
) -> Job:
    """A job running ``judge`` over ``project`` (refused with ``JudgeRunRefused`` before
    anything is queued when the judge answers none of its schemes)."""
    judge_schemes(judge, project, scheme)
    return job_enqueue(
        kind=JUDGE_RUN,
        task=judge_run_job,
        created_by=user,
        via=via,
        project_name=project.name,
        params={
            "judge": judge.name,
            "scheme": scheme,
            "redo": redo,
            "max_tokens": max_tokens,
            "max_cost": str(max_cost) if max_cost is not None else None,
        },
        unit="items",
    )


@task()
def judge_run_job(job_id: int) -> None:
    """Run the job's judge over its project's items (``params``: judge, scheme, redo, budget)."""
    job_execute(job_id, judge_run_work, atomic=False)


def judge_run_work(run: JobRun) -> Outcome:
    params = run.job.params
    project = Project.objects.get(name=run.job.project_name)
    judge = Judge.objects.get(name=params["judge"])
    budget = None
    if params.get("max_tokens") is not None or params.get("max_cost") is not None:
        budget = Budget(
            max_tokens=params.get("max_tokens"),
            max_cost=Decimal(params["max_cost"]) if params.get("max_cost") is not None else None,
        )
    report = judge_run(
        judge=judge,
        project=project,
        scheme=params.get("scheme") or "",
        redo=bool(params.get("redo")),
        budget=budget,
        job_id=run.job.pk,
        progress=run.progress,
    )
    # A spent budget ends a run that did what it could; a refused key or model fails it.
    ok = not report.stopped or report.stopped.startswith("budget")
    return Outcome(ok=ok, result=report.as_result(), message=report.line(), problems=report.problems)
