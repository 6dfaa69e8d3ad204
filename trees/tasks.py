"""Trees' jobs (``trees.jobs``): an import of trees too large for a request, and the delete
of a dataset too large for one (in batches, ``trees.deletion``)."""

from __future__ import annotations

from django.db import transaction
from django_tasks import task

from trees.deletion import DatasetInUse, dataset_delete
from trees.jobs.services import JobRun, Outcome, job_execute
from trees.models import Dataset
from trees.services import dataset_get_or_create, tree_import

TREES_IMPORT = "trees.import"
DATASET_DELETE = "dataset.delete"


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


@task()
def dataset_delete_job(job_id: int) -> None:
    """Delete the job's dataset a batch of trees at a time (each batch commits): a worker that
    dies part-way leaves a smaller, consistent dataset, and the retry finishes it."""
    job_execute(job_id, dataset_delete_work, atomic=False)


def dataset_delete_work(run: JobRun) -> Outcome:
    """The batched delete, reporting messages deleted; a retry after the last batch finds the
    dataset gone and is done too."""
    name = run.job.dataset_name
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        return Outcome(ok=True, result={"dataset": name, "messages": 0}, message=f"dataset {name!r} is gone")
    try:
        deleted = dataset_delete(dataset=dataset, progress=run.progress)
    except DatasetInUse as in_use:
        return Outcome(ok=False, result={"dataset": name}, message=str(in_use))
    return Outcome(
        ok=True,
        result={"dataset": name, "messages": deleted},
        message=f"deleted dataset {name!r} and its {deleted:,} messages",
    )
