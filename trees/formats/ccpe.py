"""CCPE dialogues (Radlinski et al., SIGDIAL 2019), in both layouts the corpus ships in.

The original release is a JSON array of dialogues::

    {"conversationId": "CCPE-8e113",
     "utterances": [{"index": 1, "speaker": "USER", "text": "I like thrillers a lot.",
                     "segments": [{"startIndex": 7, "endIndex": 16, "text": "thrillers",
                                   "annotations": [{"annotationType": "ENTITY_NAME",
                                                    "entityType": "MOVIE_GENRE_OR_CATEGORY"}]}]}]}

The Hugging Face layout holds the same dialogue with its enums as integers
(``SPEAKERS``, ``ANNOTATION_TYPES`` and ``ENTITY_TYPES`` list them in code
order) and its lists stored as columns: ``utterances`` is ``{index: [...],
segments: [...], speaker: [...], text: [...]}``, each utterance's segments
``{annotations: [...], endIndex: [...], startIndex: [...], text: [...]}`` and
each segment's annotations ``{annotationType: [...], entityType: [...]}``. An
utterance without segments gets a dummy segment (``HF_NO_SEGMENTS``); in the
original layout it has no ``segments`` key at all.

Reading accepts either layout (a JSON array, one object, or JSONL) and tells
them apart per dialogue. Each dialogue becomes a linear tree (USER is
``user``, ASSISTANT ``assistant``; speakers need not alternate) whose node ids
are the utterance indexes, in index order. An utterance's segments are kept
in its metadata under ``SEGMENTS_KEY``, in the original layout's shape
whichever layout they came in; other keys of a dialogue or an utterance are
kept as metadata too. Writing puts everything back, so a file read and
written in its own layout gives the same JSON (the corpus's own formatting
aside). The annotation side turns the kept segments into span annotations;
trees stay unaware of annotations.

Segments are checked on the way in, so they can become spans: offsets lie
inside the utterance's text (``endIndex`` exclusive, offsets in characters),
the segment's text is that slice, and annotation and entity types are
CCPE's. CCPE has no system turns: ours are written as ``SYSTEM`` (code 2)
and read back as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from trees import vocabulary
from trees.formats.bounds import DEFAULT_BOUNDS, ReadBounds
from trees.formats.dialogues import chain, dialogue, utterance_index
from trees.formats.jsonstream import encode, iter_documents
from trees.formats.nested import MISSING, read_node_id
from trees.formats.records import JSON, ImportIssue, MessageRecord, TreeRecord, type_name, visible_metadata

NAME = "ccpe"
FILE = JSON
ORIGINAL, HF = "original", "hf"
# Where an utterance's segments are kept in its message's metadata.
SEGMENTS_KEY = "ccpe_segments"
# In code order: the Hugging Face layout stores each as its position here.
SPEAKERS = ("USER", "ASSISTANT", "SYSTEM")
ANNOTATION_TYPES = ("ENTITY_NAME", "ENTITY_PREFERENCE", "ENTITY_DESCRIPTION", "ENTITY_OTHER")
ENTITY_TYPES = ("MOVIE_GENRE_OR_CATEGORY", "MOVIE_OR_SERIES", "PERSON", "SOMETHING_ELSE")
ROLES = {"USER": vocabulary.USER, "ASSISTANT": vocabulary.ASSISTANT, "SYSTEM": vocabulary.SYSTEM}
SPEAKER_OF = {role: speaker for speaker, role in ROLES.items()}
HF_NO_SEGMENTS: dict[str, Any] = {
    "annotations": [{"annotationType": [], "entityType": []}],
    "endIndex": [0],
    "startIndex": [0],
    "text": [""],
}
UTTERANCE_KEYS = ("index", "speaker", "text", "segments")
SEGMENT_KEYS = ("startIndex", "endIndex", "text", "annotations")
HF_SEGMENT_KEYS = ("annotations", "endIndex", "startIndex", "text")
ANNOTATION_KEYS = ("annotationType", "entityType")
_ENUMS = {"annotationType": ANNOTATION_TYPES, "entityType": ENTITY_TYPES}
_ENUM_WORDS = {"annotationType": "annotation type", "entityType": "entity type"}

Where = Callable[[str], str]  # a segment's field name -> its path in the file


def read(
    stream: IO[bytes], *, max_depth: int = 10_000, bounds: ReadBounds = DEFAULT_BOUNDS, **_: Any
) -> Iterator[TreeRecord]:
    for line, document in iter_documents(stream, max_nesting=bounds.max_json_depth, bounds=bounds):
        yield parse_dialogue(document, line)


def parse_dialogue(document: Any, line: int) -> TreeRecord:
    """One dialogue, in either layout, as a linear tree (issues recorded on it)."""
    tree = TreeRecord(external_id=None, line=line)
    if isinstance(document, ImportIssue):
        tree.issues.append(document)
        return tree
    if not isinstance(document, dict):
        tree.add_issue("", f"a dialogue must be an object, got {type_name(document)}")
        return tree
    tree.external_id = read_node_id(
        document.get("conversationId", MISSING), "conversation", "", "conversationId", tree, None
    )
    tree.metadata = {
        key: value for key, value in document.items() if key not in ("conversationId", "utterances")
    }
    utterances = document.get("utterances")
    if utterances is None:
        tree.add_issue("utterances", 'missing "utterances"')
        return tree
    if isinstance(utterances, list):
        indexed = _read_original(utterances, tree)
    elif isinstance(utterances, dict):
        indexed = _read_columns(utterances, tree)
    else:
        tree.add_issue(
            "utterances",
            "must be a list of utterances (the original layout) or an object of columns "
            f"(the Hugging Face layout), got {type_name(utterances)}",
        )
        return tree
    _check_indexes(indexed, tree)
    if tree.ok and not indexed:
        tree.add_issue("utterances", "a dialogue needs at least one utterance")
    if tree.ok:
        indexed.sort(key=lambda entry: entry[0])
        chain(tree, [message for _, _, message in indexed if message is not None])
    return tree


# -- the original layout ----------------------------------------------------------


def _read_original(utterances: list[Any], tree: TreeRecord) -> list[tuple[int, str, MessageRecord | None]]:
    indexed = []
    for slot, utterance in enumerate(utterances):
        path = f"utterances[{slot}]"
        if not isinstance(utterance, dict):
            tree.add_issue(path, f"an utterance must be an object, got {type_name(utterance)}")
            continue
        missing = [key for key in ("index", "speaker", "text") if key not in utterance]
        if missing:
            tree.add_issue(path, "missing " + " and ".join(f'"{key}"' for key in missing))
            continue
        index = _integer(utterance["index"], f"{path}.index", tree)
        role = _speaker(utterance["speaker"], f"{path}.speaker", tree)
        text = _string(utterance["text"], f"{path}.text", tree)
        metadata = {key: value for key, value in utterance.items() if key not in UTTERANCE_KEYS}
        if "segments" in utterance and text is not None:
            segments = utterance["segments"]
            if _original_segments(segments, f"{path}.segments", text, tree):
                metadata[SEGMENTS_KEY] = segments
        if index is not None:
            usable = role is not None and text is not None
            message = MessageRecord(str(index), None, role or "", text or "", metadata=metadata)
            indexed.append((index, f"{path}.index", message if usable else None))
    return indexed


def _original_segments(segments: Any, path: str, text: str, tree: TreeRecord) -> bool:
    """Check an utterance's segments as the original layout gives them; True when all is well."""
    before = len(tree.issues)
    if not isinstance(segments, list):
        tree.add_issue(path, f"must be a list of segments, got {type_name(segments)}")
        return False
    for slot, segment in enumerate(segments):
        where = f"{path}[{slot}]"
        if not _exact_keys(segment, SEGMENT_KEYS, where, "a segment", tree):
            continue
        start = _integer(segment["startIndex"], f"{where}.startIndex", tree)
        end = _integer(segment["endIndex"], f"{where}.endIndex", tree)
        piece = _string(segment["text"], f"{where}.text", tree)
        annotations = segment["annotations"]
        if not isinstance(annotations, list):
            tree.add_issue(f"{where}.annotations", f"must be a list, got {type_name(annotations)}")
        else:
            for number, annotation in enumerate(annotations):
                at = f"{where}.annotations[{number}]"
                if _exact_keys(annotation, ANNOTATION_KEYS, at, "an annotation", tree):
                    for key in ANNOTATION_KEYS:
                        _enum_name(annotation[key], key, f"{at}.{key}", tree)
        if start is not None and end is not None and piece is not None:
            _check_slice(start, end, piece, text, lambda field, where=where: f"{where}.{field}", tree)
    return len(tree.issues) == before


# -- the Hugging Face layout --------------------------------------------------------


def _read_columns(columns: dict[str, Any], tree: TreeRecord) -> list[tuple[int, str, MessageRecord | None]]:
    before = len(tree.issues)
    for key in ("index", "speaker", "text"):
        if key not in columns:
            tree.add_issue("utterances", f'missing column "{key}"')
    for key, column in columns.items():
        if not isinstance(column, list):
            tree.add_issue(
                f"utterances.{key}", f"must be a list (one entry per utterance), got {type_name(column)}"
            )
    if len(tree.issues) > before:
        return []
    count = len(columns["index"])
    for key, column in columns.items():
        if len(column) != count:
            tree.add_issue(
                f"utterances.{key}", f"has {len(column)} entries, but utterances.index has {count}"
            )
    if len(tree.issues) > before:
        return []
    extras = [key for key in columns if key not in UTTERANCE_KEYS]
    segments_column = columns.get("segments")
    indexed = []
    for slot in range(count):
        index = _integer(columns["index"][slot], f"utterances.index[{slot}]", tree)
        role = _speaker_code(columns["speaker"][slot], f"utterances.speaker[{slot}]", tree)
        text = _string(columns["text"][slot], f"utterances.text[{slot}]", tree)
        metadata = {key: columns[key][slot] for key in extras}
        if segments_column is not None and text is not None:
            segments = _column_segments(segments_column[slot], f"utterances.segments[{slot}]", text, tree)
            if segments is not None:
                metadata[SEGMENTS_KEY] = segments
        if index is not None:
            usable = role is not None and text is not None
            message = MessageRecord(str(index), None, role or "", text or "", metadata=metadata)
            indexed.append((index, f"utterances.index[{slot}]", message if usable else None))
    return indexed


def _column_segments(entry: Any, path: str, text: str, tree: TreeRecord) -> list[dict[str, Any]] | None:
    """An utterance's segments from their columns, in the original layout's shape.

    None for the dummy that stands for "no segments", and after a problem.
    """
    if entry == HF_NO_SEGMENTS:
        return None
    if not _exact_keys(entry, HF_SEGMENT_KEYS, path, "the segments", tree):
        return None
    before = len(tree.issues)
    for key in HF_SEGMENT_KEYS:
        if not isinstance(entry[key], list):
            tree.add_issue(
                f"{path}.{key}", f"must be a list (one entry per segment), got {type_name(entry[key])}"
            )
    if len(tree.issues) > before:
        return None
    count = len(entry["startIndex"])
    for key in HF_SEGMENT_KEYS:
        if len(entry[key]) != count:
            tree.add_issue(
                f"{path}.{key}", f"has {len(entry[key])} entries, but {path}.startIndex has {count}"
            )
    if len(tree.issues) > before:
        return None
    segments = []
    for slot in range(count):
        start = _integer(entry["startIndex"][slot], f"{path}.startIndex[{slot}]", tree)
        end = _integer(entry["endIndex"][slot], f"{path}.endIndex[{slot}]", tree)
        piece = _string(entry["text"][slot], f"{path}.text[{slot}]", tree)
        annotations = _column_annotations(entry["annotations"][slot], f"{path}.annotations[{slot}]", tree)
        if start is None or end is None or piece is None or annotations is None:
            continue
        if _check_slice(start, end, piece, text, lambda field, slot=slot: f"{path}.{field}[{slot}]", tree):
            segments.append({"startIndex": start, "endIndex": end, "text": piece, "annotations": annotations})
    return segments if len(tree.issues) == before else None


def _column_annotations(entry: Any, path: str, tree: TreeRecord) -> list[dict[str, str]] | None:
    if not _exact_keys(entry, ANNOTATION_KEYS, path, "a segment's annotations", tree):
        return None
    codes = [entry[key] for key in ANNOTATION_KEYS]
    for key, column in zip(ANNOTATION_KEYS, codes, strict=True):
        if not isinstance(column, list):
            tree.add_issue(
                f"{path}.{key}", f"must be a list (one entry per annotation), got {type_name(column)}"
            )
            return None
    if len(codes[0]) != len(codes[1]):
        tree.add_issue(
            f"{path}.entityType",
            f"has {len(codes[1])} entries, but {path}.annotationType has {len(codes[0])}",
        )
        return None
    annotations = []
    for slot, (kind, entity) in enumerate(zip(*codes, strict=True)):
        names = [
            _enum_code(kind, "annotationType", f"{path}.annotationType[{slot}]", tree),
            _enum_code(entity, "entityType", f"{path}.entityType[{slot}]", tree),
        ]
        if None in names:
            return None
        annotations.append(dict(zip(ANNOTATION_KEYS, names, strict=True)))
    return annotations


# -- checks shared by both layouts ------------------------------------------------------


def _check_indexes(indexed: list[tuple[int, str, MessageRecord | None]], tree: TreeRecord) -> None:
    first: dict[int, str] = {}
    for index, path, _ in indexed:
        if index in first:
            tree.add_issue(path, f"duplicate index {index} (first at {first[index]})")
        else:
            first[index] = path


def _check_slice(start: int, end: int, piece: str, text: str, where: Where, tree: TreeRecord) -> bool:
    """A segment must be a non-empty slice of its utterance's text, ``endIndex`` exclusive."""
    if start < 0:
        tree.add_issue(where("startIndex"), f"must be 0 or more, got {start}")
        return False
    if end <= start:
        tree.add_issue(where("endIndex"), f"must be greater than startIndex ({start}), got {end}")
        return False
    if end > len(text):
        tree.add_issue(
            where("endIndex"), f"{end} is past the end of the utterance's text ({len(text)} characters)"
        )
        return False
    if text[start:end] != piece:
        tree.add_issue(
            where("text"),
            f"{encode(piece)} is not the utterance's text from {start} to {end} ({encode(text[start:end])})",
        )
        return False
    return True


def _exact_keys(value: Any, keys: tuple[str, ...], path: str, what: str, tree: TreeRecord) -> bool:
    if not isinstance(value, dict):
        tree.add_issue(path, f"{what} must be an object, got {type_name(value)}")
        return False
    ok = True
    for key in value:
        if key not in keys:
            tree.add_issue(f"{path}.{key}", f"unknown key (expected {', '.join(keys)})")
            ok = False
    missing = [key for key in keys if key not in value]
    if missing:
        tree.add_issue(path, "missing " + " and ".join(f'"{key}"' for key in missing))
        ok = False
    return ok


def _integer(value: Any, path: str, tree: TreeRecord) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        tree.add_issue(path, f"must be an integer, got {type_name(value)}")
        return None
    return value


def _string(value: Any, path: str, tree: TreeRecord) -> str | None:
    if not isinstance(value, str):
        tree.add_issue(path, f"must be a string, got {type_name(value)}")
        return None
    return value


def _speaker(value: Any, path: str, tree: TreeRecord) -> str | None:
    role = ROLES.get(value) if isinstance(value, str) else None
    if role is None:
        shown = encode(value) if isinstance(value, str | int | float) else type_name(value)
        tree.add_issue(path, f"unknown speaker {shown} (expected USER or ASSISTANT)")
    return role


def _speaker_code(value: Any, path: str, tree: TreeRecord) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(SPEAKERS):
        shown = encode(value) if isinstance(value, str | int | float) else type_name(value)
        tree.add_issue(path, f"unknown speaker {shown} (expected 0 for USER or 1 for ASSISTANT)")
        return None
    return ROLES[SPEAKERS[value]]


def _enum_name(value: Any, key: str, path: str, tree: TreeRecord) -> str | None:
    names = _ENUMS[key]
    if isinstance(value, str) and value in names:
        return value
    shown = encode(value) if isinstance(value, str | int | float) else type_name(value)
    tree.add_issue(path, f"unknown {_ENUM_WORDS[key]} {shown} (expected {', '.join(names)})")
    return None


def _enum_code(value: Any, key: str, path: str, tree: TreeRecord) -> str | None:
    names = _ENUMS[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(names):
        shown = encode(value) if isinstance(value, str | int | float) else type_name(value)
        codes = ", ".join(f"{code} for {name}" for code, name in enumerate(names))
        tree.add_issue(path, f"unknown {_ENUM_WORDS[key]} {shown} (expected {codes})")
        return None
    return names[value]


# -- writing --------------------------------------------------------------------------

# An utterance's segments for the writer: the list, or None for none.
SegmentsOf = Callable[[MessageRecord], Any]


def imported_segments(message: MessageRecord) -> Any:
    """The segments the utterance was imported with (None when it had none)."""
    return message.metadata.get(SEGMENTS_KEY) if message.metadata else None


def dialogue_object(
    tree: TreeRecord,
    *,
    layout: str = ORIGINAL,
    segments: SegmentsOf = imported_segments,
    head: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The tree as one CCPE dialogue in ``layout``.

    ``segments`` gives each utterance's segments in the original layout's
    shape (by default those it was imported with); ``head`` adds keys after
    ``conversationId`` (an annotation export names the annotator there).
    """
    body: dict[str, Any] = {"conversationId": tree.external_id}
    if head:
        body.update(head)
    body.update(visible_metadata(tree.metadata))
    turns = dialogue(tree)
    if layout == HF:
        body["utterances"] = _columns(turns, segments)
        return body
    utterances = []
    for position, message in enumerate(turns):
        utterance: dict[str, Any] = {
            "index": utterance_index(message, position),
            "speaker": SPEAKER_OF.get(message.role, message.role),
            "text": message.text,
        }
        found = segments(message)
        if found is not None:
            utterance["segments"] = found
        if message.metadata:
            utterance.update(
                (key, value)
                for key, value in visible_metadata(message.metadata).items()
                if key != SEGMENTS_KEY
            )
        utterances.append(utterance)
    body["utterances"] = utterances
    return body


def _columns(turns: list[MessageRecord], segments: SegmentsOf) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {"index": [], "segments": [], "speaker": [], "text": []}
    extras: dict[str, list[Any]] = {}
    for position, message in enumerate(turns):
        columns["index"].append(utterance_index(message, position))
        columns["segments"].append(_segment_columns(segments(message)))
        speaker = SPEAKER_OF.get(message.role, message.role)
        columns["speaker"].append(SPEAKERS.index(speaker) if speaker in SPEAKERS else speaker)
        columns["text"].append(message.text)
        for key, value in visible_metadata(message.metadata or {}).items():
            if key != SEGMENTS_KEY:
                extras.setdefault(key, [None] * position).append(value)
        for column in extras.values():
            if len(column) <= position:
                column.append(None)
    return columns | extras


def _segment_columns(segments: Any) -> dict[str, Any]:
    if not isinstance(segments, list):
        return HF_NO_SEGMENTS
    columns: dict[str, list[Any]] = {key: [] for key in HF_SEGMENT_KEYS}
    for segment in segments:
        if not isinstance(segment, dict):
            continue  # not CCPE's (metadata another format brought in)
        annotations = [a for a in segment.get("annotations") or [] if isinstance(a, dict)]
        columns["annotations"].append(
            {
                key: [_code(annotation.get(key), _ENUMS[key]) for annotation in annotations]
                for key in ANNOTATION_KEYS
            }
        )
        columns["endIndex"].append(segment.get("endIndex"))
        columns["startIndex"].append(segment.get("startIndex"))
        columns["text"].append(segment.get("text"))
    return columns


def _code(name: Any, names: tuple[str, ...]) -> Any:
    return names.index(name) if name in names else name


def json_array(texts: Iterable[str]) -> Iterator[str]:
    """A JSON array of the given JSON texts, one element per piece (``[]`` when there are none).

    Each piece holds one element, so whoever counts pieces counts dialogues.
    """
    pending: str | None = None
    for text in texts:
        if pending is not None:
            yield pending
            pending = ",\n" + text
        else:
            pending = "[\n" + text
    yield "[]\n" if pending is None else pending + "\n]\n"


def write(trees: Iterable[TreeRecord], *, layout: str = ORIGINAL, **_: Any) -> Iterator[str]:
    """The original layout as one JSON array; the Hugging Face layout as JSONL (a dialogue a line)."""
    if layout == HF:
        for tree in trees:
            yield encode(dialogue_object(tree, layout=HF)) + "\n"
        return
    yield from json_array(encode(dialogue_object(tree)) for tree in trees)


def write_hf(trees: Iterable[TreeRecord], **options: Any) -> Iterator[str]:
    return write(trees, **(options | {"layout": HF}))
