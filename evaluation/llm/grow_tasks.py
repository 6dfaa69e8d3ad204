"""Models' jobs (``trees.jobs``): growing branches with model replies, off the request.

The run keeps each reply as it comes (``atomic=False``): a worker that dies part-way leaves
the replies it made, and the retried job, being the same run (``generation.run_key``), asks
only for the ones still missing. A cancel stops it between requests, keeping what is done.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django_tasks import task

from annotation.models import Project, ProjectItem
from evaluation.llm.generation import branches_grow
from evaluation.llm.grow_requests import GrowRequest
from evaluation.llm.models import ModelEndpoint
from trees.jobs.models import Job
from trees.jobs.services import JobRun, Outcome, job_enqueue, job_execute
from trees.models import ConversationTree, Dataset

BRANCHES_GROW = "branches.grow"


def grow_trees(
    *, dataset: Dataset | None = None, project: Project | None = None, tree_ids: list[str] | None = None
) -> tuple[QuerySet[ConversationTree], list[str]]:
    """The trees of ``dataset`` (or the items of ``project``), only ``tree_ids`` if given, and
    the ids given that are not among them."""
    if project is not None:
        trees = ConversationTree.objects.filter(
            pk__in=ProjectItem.objects.filter(project=project).values("tree_id")
        )
    elif dataset is not None:
        trees = ConversationTree.objects.filter(dataset=dataset)
    else:
        raise ValueError("grow the trees of a dataset or of a project")
    if tree_ids is None:
        return trees, []
    trees = trees.filter(external_id__in=tree_ids)
    found = set(trees.values_list("external_id", flat=True))
    return trees, [tree_id for tree_id in tree_ids if tree_id not in found]


def grow_enqueue(
    *,
    request: GrowRequest,
    user: Any,
    via: str,
    dataset: Dataset | None = None,
    project: Project | None = None,
) -> Job:
    """A job growing the branches of ``dataset``'s trees (or ``project``'s items) as asked."""
    return job_enqueue(
        kind=BRANCHES_GROW,
        task=branches_grow_job,
        created_by=user,
        via=via,
        dataset_name=dataset.name if dataset is not None else "",
        project_name=project.name if project is not None else "",
        params=request.as_params(),
        unit="turns",
    )


@task()
def branches_grow_job(job_id: int) -> None:
    """Grow the job's trees' branches (``params``: a ``GrowRequest``)."""
    job_execute(job_id, branches_grow_work, atomic=False)


def branches_grow_work(run: JobRun) -> Outcome:
    job = run.job
    request = GrowRequest(**job.params)
    if not ModelEndpoint.objects.filter(name=request.endpoint).exists():
        return Outcome(ok=False, result={}, message=f"model endpoint {request.endpoint!r} is gone")
    if job.project_name:
        project = Project.objects.filter(name=job.project_name).first()
        if project is None:
            return Outcome(ok=False, result={}, message=f"project {job.project_name!r} is gone")
        trees, unknown = grow_trees(project=project, tree_ids=request.trees)
    else:
        dataset = Dataset.objects.filter(name=job.dataset_name).first()
        if dataset is None:
            return Outcome(ok=False, result={}, message=f"dataset {job.dataset_name!r} is gone")
        trees, unknown = grow_trees(dataset=dataset, tree_ids=request.trees)
    report = branches_grow(trees=trees, request=request, job_id=job.pk, progress=run.progress)
    for tree_id in unknown:
        report.problem(tree_id, "-", "no such tree here")
    run.progress(report.nodes_done + report.failed, report.nodes)
    return Outcome(ok=True, result=report.as_dict(), message=report.summary(), problems=report.problems)
