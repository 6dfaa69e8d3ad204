"""Annotation exports as jobs (``trees.jobs``): a project's answers written to a file that its
asker downloads when the job is done (``GET /api/v1/jobs/{id}/file``), until it expires."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django_tasks import task

from annotation.exports import annotations_export, get_export
from annotation.models import Project
from trees.jobs.services import JobRun, Outcome, job_execute, job_result_path

ANNOTATIONS_EXPORT = "annotations.export"
# Lines written between progress reports.
PROGRESS_EVERY = 500


@task()
def annotations_export_job(job_id: int) -> None:
    """Write the project's answers as the job's params ask (``ExportInput``'s options)."""
    job_execute(job_id, annotations_export_work)


def annotations_export_work(run: JobRun) -> Outcome:
    job, params = run.job, run.job.params
    project = Project.objects.get(name=job.project_name)
    users = get_user_model().objects
    user = users.get(pk=params["user_id"]) if params.get("user_id") else None
    format_name, reference = params["format"], params.get("reference", "exclude")
    named = user is None and reference != "only"
    kind = get_export(format_name).FILE
    name = f"{project.name}.{format_name}.{kind.extension}"
    lines = annotations_export(
        project=project,
        format_name=format_name,
        status=params.get("status", "submitted"),
        user=user,
        options={"name_annotators": named} if format_name in ("ccpe", "ccpe-hf") else {},
        reader=job.created_by,
        reference=reference,
        include_gold=reference == "only",
    )
    path = job_result_path(job, name)
    written = 0
    with path.open("w", encoding="utf-8") as out:
        for piece in lines:
            out.write(piece)
            written += 1
            if written % PROGRESS_EVERY == 0:
                run.progress(written)
    run.progress(written, written)
    result = {
        "file_name": name,
        "media_type": kind.media_type,
        "pieces": written,
        "bytes": path.stat().st_size,
    }
    return Outcome(
        ok=True, result=result, message=f"exported {project.name} as {format_name}", file=str(path)
    )
