"""Files handed to a browser or an integration as they are written: one way for every download.

Pages, admin actions and the API all stream exports; they share the response
(media type, UTF-8, attachment name) and, for the admin, the "export selected"
action, which refuses to join several files of a format whose files cannot be
joined (a JSON array, a CSV with its header).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, StreamingHttpResponse
from django.utils.http import content_disposition_header

from trees.formats.records import FileKind


def file_download(pieces: Iterable[str], *, kind: FileKind, filename: str) -> StreamingHttpResponse:
    """``pieces`` streamed as the attachment ``filename`` of ``kind``."""
    response = StreamingHttpResponse(pieces, content_type=f"{kind.media_type}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(as_attachment=True, filename=filename)
    return response


def joined(exports: Iterable[Iterable[str]]) -> Iterator[str]:
    """Several exports as one stream, one after another."""
    for export in exports:
        yield from export


def export_action(
    *,
    format_name: str,
    kind: FileKind,
    model: type[Model],
    noun: str,
    description: str,
    respond: Callable[[list[Any], str], StreamingHttpResponse],
) -> Callable[..., StreamingHttpResponse | None]:
    """An admin action exporting the selected rows of ``model`` (a ``noun`` each, in name order)
    through ``respond``."""

    def export(
        modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Any]
    ) -> StreamingHttpResponse | None:
        # The changelist queryset carries the count subqueries; the export needs none of them.
        chosen = list(model._default_manager.filter(pk__in=queryset.values("pk")).order_by("name"))
        if len(chosen) > 1 and not kind.joinable:
            modeladmin.message_user(
                request,
                f"{format_name} files cannot be joined: export one {noun} at a time.",
                messages.ERROR,
            )
            return None
        return respond(chosen, format_name)

    export.__name__ = f"export_{format_name}"
    return admin.action(permissions=["view"], description=description)(export)
