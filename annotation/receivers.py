"""Keeping projects in step with their datasets."""

from typing import Any

from django.dispatch import receiver

from annotation.corpora import imported_spans_sync
from annotation.models import Project
from annotation.projects import project_config, project_items_sync
from trees.models import Dataset
from trees.signals import trees_imported


@receiver(trees_imported)
def sync_project_items(sender: type, dataset: Dataset, replaced: list[int] = (), **kwargs: Any) -> None:
    """Trees imported into a dataset become items of every project over it, with
    the spans they were imported with for projects that take them (replaced
    trees get theirs anew: their messages, and so their spans, changed)."""
    for project in Project.objects.filter(dataset=dataset):
        project_items_sync(project)
        imported_spans_sync(project=project, config=project_config(project), refresh=replaced)
