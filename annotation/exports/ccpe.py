"""CCPE dialogues with each annotator's spans as their segments (``trees.formats.ccpe``).

One dialogue per item and annotator, written by the trees' own CCPE writer
with the segments taken from the annotator's answer to the project's span
scheme (the first one, preferring one that imports CCPE's spans) — the
original layout as one JSON array, or ``ccpe-hf`` as JSONL. Each span is
one annotation of a segment: ``annotationType`` is its label and
``entityType`` its attribute of that name; spans with the same offsets
share a segment.

Spans that came from the corpus keep its segments as they were: walking the
utterance's imported segments in order, each annotation the annotator still
has is kept in its place (so a segment with several annotations stays one
segment); the spans left over are new segments after them, in order of
offsets. Exporting the gold set of an imported corpus (``--gold``) therefore
gives back the corpus itself, and an annotator's export shows their
additions in the corpus's own format.

An export of several annotators names each dialogue's annotator in an
``annotator`` key after ``conversationId`` (``name_annotators``); one of a
single annotator (``--user``, ``--gold``) is the plain corpus format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from annotation.exports.rows import ItemAnnotations
from annotation.projects.config import ProjectConfig
from annotation.schemes.span import Span
from trees.formats import ccpe
from trees.formats.jsonstream import encode
from trees.formats.records import JSON, MessageRecord

NAME = "ccpe"
FILE = JSON
UNIT = "dialogue"
NEEDS_TEXT = False
NEEDS_RECORDS = True
DESCRIPTION = "CCPE dialogues (the original release's JSON array) with each annotator's spans as segments"


def span_scheme(config: ProjectConfig) -> Span | None:
    """The scheme whose spans become segments: the first span scheme, one importing CCPE's first."""
    spans = [scheme for scheme in config.schemes if isinstance(scheme, Span)]
    return next((scheme for scheme in spans if scheme.import_spans == "ccpe"), spans[0] if spans else None)


def segments_for(message: MessageRecord, spans: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The utterance's segments for ``spans`` (its spans, in payload order); None for none."""
    imported = ccpe.imported_segments(message)
    remaining = list(spans)
    segments: list[dict[str, Any]] = []
    for segment in imported if isinstance(imported, list) else ():
        if not isinstance(segment, dict):
            continue  # not CCPE's (metadata another format brought in): nothing to keep
        annotations = [a for a in segment.get("annotations") or [] if isinstance(a, dict)]
        if not annotations:
            segments.append(segment)  # nothing an annotator could have taken away
            continue
        kept = []
        for annotation in annotations:
            match = next((span for span in remaining if _same(span, segment, annotation)), None)
            if match is not None:
                remaining.remove(match)
                kept.append(annotation)
        if kept:
            segments.append(segment if len(kept) == len(annotations) else segment | {"annotations": kept})
    added: dict[tuple[int, int, str], list[dict[str, str]]] = {}
    for span in remaining:
        annotation = {"annotationType": span["label"]}
        if "entityType" in span.get("attributes", {}):
            annotation["entityType"] = span["attributes"]["entityType"]
        added.setdefault((span["start"], span["end"], span["text"]), []).append(annotation)
    for (start, end, text), annotations in added.items():
        segments.append({"startIndex": start, "endIndex": end, "text": text, "annotations": annotations})
    if segments:
        return segments
    # No segments: "segments": [] if the corpus said so, else no key at all (CCPE's way).
    return imported if imported == [] else None


def _same(span: dict[str, Any], segment: dict[str, Any], annotation: dict[str, Any]) -> bool:
    return (
        span["start"] == segment.get("startIndex")
        and span["end"] == segment.get("endIndex")
        and span["text"] == segment.get("text")
        and span["label"] == annotation.get("annotationType")
        and span.get("attributes", {}).get("entityType") == annotation.get("entityType")
    )


def dialogues(
    items: Iterable[ItemAnnotations], config: ProjectConfig, *, layout: str, name_annotators: bool
) -> Iterator[str]:
    """Each item and annotator as one dialogue's JSON text."""
    scheme = span_scheme(config)
    for item in items:
        assert item.record is not None, "ccpe needs the trees as records"
        payload = item.annotations.get(scheme.name) if scheme is not None else None
        by_node: dict[str, list[dict[str, Any]]] = {}
        for span in (payload or {}).get("spans", []):
            by_node.setdefault(span["node"], []).append(span)
        body = ccpe.dialogue_object(
            item.record,
            layout=layout,
            segments=lambda message, by_node=by_node: segments_for(
                message, by_node.get(message.external_id, [])
            ),
            head={"annotator": item.user} if name_annotators else None,
        )
        yield encode(body)


def write(
    items: Iterable[ItemAnnotations], config: ProjectConfig, *, name_annotators: bool = True
) -> Iterator[str]:
    """One JSON array, one dialogue per piece."""
    return ccpe.json_array(dialogues(items, config, layout=ccpe.ORIGINAL, name_annotators=name_annotators))
