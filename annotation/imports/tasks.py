"""Annotation imports as jobs (``trees.jobs``): a records file too large for a request."""

from __future__ import annotations

from django_tasks import task

from annotation.imports.annotations import annotations_import
from annotation.models import Project
from trees.jobs.services import JobRun, Outcome, job_execute

ANNOTATIONS_IMPORT = "annotations.import"


@task()
def annotations_import_job(job_id: int) -> None:
    """Import the job's uploaded records into its project, all or nothing, as ``import_annotations`` would."""
    job_execute(job_id, annotations_import_work)


def annotations_import_work(run: JobRun) -> Outcome:
    project = Project.objects.get(name=run.job.project_name)
    with open(run.source_path, "rb") as source:
        report = annotations_import(project=project, source=source, progress=run.progress)
    result = report.as_dict()
    return Outcome(ok=report.committed, result=result, message=report.summary(), problems=result["errors"])
