"""The datasets admin's import page: the form (``import_trees``'s options) and the import it
runs, in the request or, above ``BRANCHPOINT_JOB_THRESHOLD_BYTES``, as a job."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import transaction
from django.http import HttpRequest

from trees.formats import FORMATS
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue
from trees.models import Dataset
from trees.services import ImportReport, dataset_get_or_create, tree_import
from trees.tasks import TREES_IMPORT, trees_import_job


class TreeImportForm(forms.Form):
    """What ``import_trees`` takes on the command line, as a form."""

    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.order_by("name"),
        required=False,
        help_text="Import into this dataset…",
    )
    new_dataset = forms.SlugField(
        max_length=Dataset._meta.get_field("name").max_length,
        required=False,
        label="or a new dataset",
        help_text="…or into a new dataset with this name (letters, digits, - and _).",
    )
    file = forms.FileField(
        help_text="JSON, JSON array or JSONL (or Parquet, for oasst-messages); a gzip file is read as such."
    )
    format_name = forms.ChoiceField(label="Format", choices=[(name, name) for name in FORMATS])
    id_key = forms.CharField(
        label="Potato id key", initial="id", required=False, max_length=100, help_text="The item id's key."
    )
    tree_key = forms.CharField(
        label="Potato tree key", initial="tree", required=False, max_length=100, help_text="The tree's key."
    )
    skip_invalid = forms.BooleanField(
        required=False, help_text="Import the good items and list the bad ones (otherwise all or nothing)."
    )
    replace = forms.BooleanField(
        required=False, help_text="Replace trees whose id the dataset already has (otherwise refused)."
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        dataset, name = data.get("dataset"), data.get("new_dataset")
        if dataset and name:
            raise forms.ValidationError("Pick an existing dataset or name a new one, not both.")
        if not dataset and not name and "new_dataset" not in self.errors:
            raise forms.ValidationError("Pick a dataset or name a new one.")
        if name:
            if Dataset.objects.filter(name=name).exists():
                self.add_error("new_dataset", f'A dataset named "{name}" already exists: pick it above.')
            elif not self.user.has_perm("trees.add_dataset"):
                self.add_error("new_dataset", "You may not create datasets.")
        if data.get("replace") and not self.user.has_perm("trees.change_conversationtree"):
            self.add_error("replace", "You may not replace trees.")
        return data

    def format_options(self) -> dict[str, str]:
        """The reader's options, as ``import_trees`` passes them: only potato has any."""
        if self.cleaned_data["format_name"] != "potato":
            return {}
        return {
            "id_key": self.cleaned_data["id_key"] or "id",
            "tree_key": self.cleaned_data["tree_key"] or "tree",
        }


def import_from_form(form: TreeImportForm) -> tuple[ImportReport, Dataset | None]:
    """Run the import the form describes; nothing stays written unless it commits.

    ``tree_import`` rolls its own work back on failure; the outer transaction
    also takes back a dataset created for it, so a failed upload leaves no
    empty dataset behind. Returns the dataset only when the import committed.
    """
    data = form.cleaned_data
    upload = data["file"]
    upload.seek(0)
    with transaction.atomic():
        dataset = data["dataset"] or dataset_get_or_create(data["new_dataset"])
        report = tree_import(
            dataset=dataset,
            source=upload.file,
            format_name=data["format_name"],
            options=form.format_options(),
            skip_invalid=data["skip_invalid"],
            replace=data["replace"],
        )
        if not report.committed:
            transaction.set_rollback(True)
            return report, None
    return report, dataset


def import_job_from_form(form: TreeImportForm, request: HttpRequest) -> Job:
    """A job importing the form's file (one above ``BRANCHPOINT_JOB_THRESHOLD_BYTES``): a new
    dataset it names is created by the job, with the trees, or not at all."""
    data = form.cleaned_data
    upload = data["file"]
    upload.seek(0)
    return job_enqueue(
        kind=TREES_IMPORT,
        task=trees_import_job,
        created_by=request.user,
        via="admin",
        dataset_name=data["dataset"].name if data["dataset"] else data["new_dataset"],
        params={
            "format": data["format_name"],
            "options": form.format_options(),
            "skip_invalid": data["skip_invalid"],
            "replace": data["replace"],
        },
        source=upload.file,
        total=upload.size,
    )
