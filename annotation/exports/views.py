"""The project page's download: a project's answers as a file, what export_annotations writes."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.views.decorators.http import require_GET

from annotation import permissions
from annotation.exports import EXPORTS, REFERENCES, STATUSES, annotations_export, get_export
from annotation.models import Project
from annotation.projects.config import project_config
from annotation.projects.references import imports_references
from annotation.projects.selectors import project_visible_get
from annotation.projects.views import forbidden
from trees.downloads import file_download


class ExportForm(forms.Form):
    """What the project page's download asks: a format and which answers (and, in a project with
    a corpus's reference answers, whether to add them or have them alone)."""

    format = forms.ChoiceField(
        choices=[(name, f"{name}: {module.DESCRIPTION}") for name, module in EXPORTS.items()]
    )
    status = forms.ChoiceField(
        choices=[(name, selection.description) for name, selection in STATUSES.items()],
        initial="submitted",
        required=False,  # submitted, as everywhere else
    )
    reference = forms.ChoiceField(
        label="Reference answers",
        choices=list(REFERENCES.items()),
        initial="exclude",
        required=False,  # left out, as everywhere else
    )

    def __init__(self, *args: object, project: Project, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        if not imports_references(project_config(project)):
            del self.fields["reference"]  # nothing to choose: the project has no reference answers


@require_GET
@login_required
def project_export(request: HttpRequest, name: str) -> HttpResponse:
    """The project's answers as a file (for those who may see everyone's): what export_annotations writes."""
    project = project_visible_get(user=request.user, name=name)
    if not permissions.can_export(request.user, project):
        return forbidden(request, "Downloads are for the project's managers and reviewers.", project)
    form = ExportForm(request.GET, project=project)
    if not form.is_valid():
        problems = "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
        return HttpResponseBadRequest(
            f"cannot export: {problems}\n", content_type="text/plain; charset=utf-8"
        )
    format_name, status = form.cleaned_data["format"], form.cleaned_data["status"] or "submitted"
    reference = form.cleaned_data.get("reference") or "exclude"
    # The reference alone is the corpus's own format; with annotators, each dialogue says whose it is.
    options = {"name_annotators": reference != "only"} if format_name in ("ccpe", "ccpe-hf") else {}
    lines = annotations_export(
        project=project,
        format_name=format_name,
        status=status,
        options=options,
        reader=request.user,
        reference=reference,
        include_gold=reference == "only",  # the corpus's spans cover every item, gold or not
    )
    kind = get_export(format_name).FILE
    stem = project.name if status == "submitted" else f"{project.name}.{status}"
    if reference != "exclude":
        stem += ".reference" if reference == "only" else ".with-reference"
    return file_download(lines, kind=kind, filename=f"{stem}.{format_name}.{kind.extension}")
