"""Files over the API: imports (a multipart upload, or a JSON body of items) and streamed exports.

An import takes a ``file`` (multipart/form-data, gzip read as such) or a JSON
list of items, which is written out as JSONL for the same reader the command
uses. Either way the answer is the command's report (``--json``); when the
import did not commit it comes as a 400 whose ``errors`` locate each problem:
by line for a file, by index (``items[3].tree.children[1]``) for a JSON body.

An export streams in the format's own media type with a file name
(``<name>.<format>.<extension>``), a piece at a time, whatever its size.
"""

from __future__ import annotations

import io
import json
from typing import IO, Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response

from annotation.api.errors import MAX_LISTED_ERRORS
from annotation.problems import join
from trees.formats.records import CSV, JSON, JSONL, ImportIssue


def upload_source(data: dict[str, Any], items_key: str) -> tuple[IO[bytes], bool]:
    """The bytes to import, and whether they came as a JSON list (one item per line)."""
    upload = data.get("file")
    if upload is not None:
        upload.seek(0)
        return upload.file, False
    lines = "\n".join(json.dumps(item, ensure_ascii=False) for item in data[items_key])
    return io.BytesIO(lines.encode()), True


def issue_located(issue: ImportIssue, items_key: str, from_items: bool) -> ImportIssue:
    """``issue`` as the caller sent it: line N of a JSON body is its item N - 1."""
    if not from_items or issue.line is None:
        return issue
    item = f"{items_key}[{issue.line - 1}]"
    return ImportIssue(None, join(item, issue.path) if issue.path else item, issue.message)


def import_answer(report: Any, items_key: str, from_items: bool) -> Response:
    """The report (``as_dict``, as the command prints it): 200 when it committed, else a 400
    in the API's error shape with the report beside it."""
    report.errors = [issue_located(issue, items_key, from_items) for issue in report.errors]
    body = report.as_dict()
    if report.committed:
        return Response(body)
    listed = report.errors[:MAX_LISTED_ERRORS]
    return Response(
        {
            "code": "import_failed",
            "message": report.summary(),
            "errors": [
                {"code": "invalid", "path": issue.path, "message": issue.message, issue.unit: issue.line}
                for issue in listed
            ],
            "report": body,
        },
        status=status.HTTP_400_BAD_REQUEST,
    )


class AnyAccept(BaseContentNegotiation):
    """Downloads answer in their format whatever ``Accept`` says; errors still come as JSON."""

    def select_parser(self, request: Any, parsers: list[Any]) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(self, request: Any, renderers: list[Any], format_suffix: str | None = None) -> Any:
        return renderers[0], renderers[0].media_type


# The schema of a download: text in each format's media type (JSON files are one array).
DOWNLOAD_RESPONSES: dict[Any, Any] = {
    (200, JSONL.media_type): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines, streamed"),
    (200, JSON.media_type): OpenApiResponse(
        {"type": "array", "items": {}}, description="one JSON array, streamed"
    ),
    (200, CSV.media_type): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header row, streamed"),
}
