"""Trees' jobs (``trees.jobs``): an import of trees too large for a request."""

from __future__ import annotations

from django.db import transaction
from django_tasks import task

from trees.jobs.services import JobRun, Outcome, job_execute
from trees.services import dataset_get_or_create, tree_import

TREES_IMPORT = "trees.import"


@task()
def trees_import_job(job_id: int) -> None:
    """Import the job's uploaded file into its dataset, all or nothing, as ``import_trees`` would."""
    job_execute(job_id, trees_import_work)


def trees_import_work(run: JobRun) -> Outcome:
    """The import, reporting the bytes read; a dataset the job asked to create is kept only
    with the trees (the admin's upload may name a new one)."""
    job, params = run.job, run.job.params
    with transaction.atomic(), open(run.source_path, "rb") as source:
        dataset = dataset_get_or_create(job.dataset_name)
        report = tree_import(
            dataset=dataset,
            source=source,
            format_name=params["format"],
            options=params.get("options") or {},
            skip_invalid=params.get("skip_invalid", False),
            replace=params.get("replace", False),
            progress=lambda _items, read: run.progress(read),
        )
        if not report.committed:
            transaction.set_rollback(True)
    result = report.as_dict()
    return Outcome(ok=report.committed, result=result, message=report.summary(), problems=result["errors"])
