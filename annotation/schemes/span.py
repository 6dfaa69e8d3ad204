"""Labelled spans of the messages' text: ``span``.

Config::

    - annotation_type: span
      name: entities
      labels: [ENTITY_NAME, {name: ENTITY_PREFERENCE, key_value: p, color: "#2a9d8f"}]
      attributes:                       # optional: further label sets every span gets
        - {name: entityType, labels: [MOVIE_OR_SERIES, PERSON]}
      allow_overlap: true               # the default: spans may nest and cross
      import_spans: ccpe                # optional: items get the corpus's own spans (projects.references)

One payload per annotator and tree, naming nodes by id::

    {"spans": [{"node": "1", "start": 7, "end": 16, "text": "thrillers",
                "label": "ENTITY_NAME", "attributes": {"entityType": "MOVIE_GENRE_OR_CATEGORY"}}]}

Offsets count characters (Unicode code points, as Python indexes a string)
and ``end`` is exclusive; ``text`` must be the node's text from ``start`` to
``end``, which catches offsets taken against another version of the text.
Every attribute is answered unless it says ``required: false``.

Payloads are normalised so that equal answers are equal payloads: spans are
sorted by node (in document order), start, end, label and attributes, and
each has all six keys with its attributes in the configured order. Two
annotators' spans are then compared by ``span_key`` — node, offsets, label,
attributes — which is what exact and overlap F1 are computed over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Label, Scheme, expect_mapping, labels_config, read_bool, read_labels
from annotation.schemes.registry import register
from trees.formats import ccpe
from trees.shapes import TreeShape

SPAN_KEYS = {"node", "start", "end", "text", "label", "attributes"}
ATTRIBUTE_KEYS = {"name", "labels", "description", "required"}
# Where imported spans can come from: the corpus formats that carry them.
IMPORT_SOURCES = ("ccpe",)
MAX_SPANS = 10_000

SpanKey = tuple[str, int, int, str, tuple[tuple[str, str], ...]]


def span_key(span: Mapping[str, Any]) -> SpanKey:
    """What makes two annotators' spans the same span: node, offsets, label and attributes."""
    attributes = span.get("attributes") or {}
    return (span["node"], span["start"], span["end"], span["label"], tuple(sorted(attributes.items())))


class Attribute:
    """A further label set each span gets (CCPE's ``entityType``, say)."""

    def __init__(self, name: str, labels: list[Label], description: str = "", required: bool = True):
        self.name = name
        self.labels = labels
        self.description = description
        self.required = required

    @property
    def label_names(self) -> list[str]:
        return [label.name for label in self.labels]

    def as_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"name": self.name, "labels": labels_config(self.labels)}
        if self.description:
            config["description"] = self.description
        config["required"] = self.required
        return config


@register
class Span(Scheme):
    annotation_type = "span"
    keys = frozenset({"labels", "attributes", "allow_overlap", "import_spans"})
    agreement = "spans"
    node_level = False
    reads_text = True
    widget_script = "annotation/spans.js"
    widget_stylesheet = "annotation/spans.css"

    labels: list[Label]
    attributes: list[Attribute]

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        self.labels = read_labels(raw, "labels", path, problems)
        self.attributes = self._read_attributes(raw.get("attributes"), join(path, "attributes"), problems)
        self.allow_overlap = read_bool(raw, "allow_overlap", path, problems, default=True)
        self.import_spans: str | None = None
        source = raw.get("import_spans")
        if source is not None:
            if source not in IMPORT_SOURCES:
                shown = f'"{source}"' if isinstance(source, str) else describe(source)
                problems.add(
                    join(path, "import_spans"),
                    f"{shown} is not a corpus we import spans from (expected ccpe)",
                )
            else:
                self.import_spans = source
                self._check_ccpe_labels(join(path, "import_spans"), problems)

    def _read_attributes(self, raw: Any, path: str, problems: Problems) -> list[Attribute]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            problems.add(path, f"must be a list of {{name, labels}}, got {describe(raw)}")
            return []
        attributes: list[Attribute] = []
        seen: dict[str, int] = {}
        for index, item in enumerate(raw):
            where = join(path, index)
            if not isinstance(item, Mapping):
                problems.add(where, f"must be a mapping with a name and labels, got {describe(item)}")
                continue
            problems.check_keys(item, where, ATTRIBUTE_KEYS)
            name = item.get("name")
            if not isinstance(name, str) or not name.strip():
                problems.add(join(where, "name"), "is required (a non-empty string)")
                continue
            if name in seen:
                problems.add(
                    join(where, "name"), f'repeats the attribute "{name}" (first at {join(path, seen[name])})'
                )
                continue
            seen[name] = index
            description = item.get("description", "")
            if not isinstance(description, str):
                problems.add(join(where, "description"), f"must be a string, got {describe(description)}")
                description = ""
            required = read_bool(item, "required", where, problems, default=True)
            labels = read_labels(item, "labels", where, problems)
            attributes.append(Attribute(name, labels, description, required))
        return attributes

    def _check_ccpe_labels(self, path: str, problems: Problems) -> None:
        """CCPE's spans must fit: its annotation types as labels, its entity types as ``entityType``."""
        if not self.allow_overlap:
            problems.add(path, "ccpe's spans nest and overlap: allow_overlap must stay true")
        missing = [name for name in ccpe.ANNOTATION_TYPES if name not in self.label_names]
        if missing:
            problems.add(path, f"ccpe needs the labels {', '.join(missing)} (CCPE's annotation types)")
        attribute = next((a for a in self.attributes if a.name == "entityType"), None)
        if attribute is None:
            problems.add(path, "ccpe needs an attribute entityType (CCPE's entity types)")
            return
        missing = [name for name in ccpe.ENTITY_TYPES if name not in attribute.label_names]
        if missing:
            problems.add(path, f"ccpe needs the entityType labels {', '.join(missing)}")

    @property
    def label_names(self) -> list[str]:
        return [label.name for label in self.labels]

    def as_config(self) -> dict[str, Any]:
        config = super().as_config() | {
            "labels": labels_config(self.labels),
            "attributes": [attribute.as_config() for attribute in self.attributes],
            "allow_overlap": self.allow_overlap,
        }
        if self.import_spans:
            config["import_spans"] = self.import_spans
        return config

    # -- payloads --------------------------------------------------------------

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        if tree is None or (tree.parent and not tree.with_texts):
            raise ValueError("span payloads are checked against their tree's texts")
        value = expect_mapping(payload, path, problems, {"spans"})
        if value is None:
            return None
        spans = value.get("spans", [])
        where = join(path, "spans")
        if not isinstance(spans, list):
            problems.add(where, f"must be a list of spans, got {describe(spans)}")
            return None
        if len(spans) > MAX_SPANS:
            problems.add(where, f"{len(spans):,} spans, over the limit of {MAX_SPANS:,}")
            return None
        before = len(problems.items)
        checked: list[tuple[int, dict[str, Any]]] = []
        for index, span in enumerate(spans):
            normalized = self._span(span, join(where, index), problems, tree)
            if normalized is not None:
                checked.append((index, normalized))
        if len(problems.items) > before:
            return None
        order = {node: position for position, node in enumerate(tree.preorder())}
        attribute_names = [attribute.name for attribute in self.attributes]

        def sort_key(entry: tuple[int, dict[str, Any]]) -> tuple[Any, ...]:
            span = entry[1]
            answers = tuple(span["attributes"].get(name, "") for name in attribute_names)
            return (order[span["node"]], span["start"], span["end"], span["label"], answers)

        checked.sort(key=sort_key)
        self._check_repeats(checked, where, problems)
        if len(problems.items) > before:
            return None
        return {"spans": [span for _, span in checked]}

    def _span(self, span: Any, where: str, problems: Problems, tree: TreeShape) -> dict[str, Any] | None:
        value = expect_mapping(span, where, problems, SPAN_KEYS)
        if value is None:
            return None
        before = len(problems.items)
        missing = [key for key in ("node", "start", "end", "text", "label") if key not in value]
        if missing:
            problems.add(where, "missing " + ", ".join(missing))
            return None
        node, start, end, text = value["node"], value["start"], value["end"], value["text"]
        if not isinstance(node, str) or node not in tree:
            shown = f'"{node}"' if isinstance(node, str) else describe(node)
            problems.add(join(where, "node"), f"no node {shown} in this tree", "unknown_node")
            return None
        for key, offset in (("start", start), ("end", end)):
            if isinstance(offset, bool) or not isinstance(offset, int):
                problems.add(join(where, key), f"must be an integer, got {describe(offset)}")
        if not isinstance(text, str):
            problems.add(join(where, "text"), f"must be a string, got {describe(text)}")
        if len(problems.items) > before:
            return None
        node_text = tree.texts.get(node, "")
        if start < 0:
            problems.add(join(where, "start"), f"must be 0 or more, got {start}")
        elif end <= start:
            problems.add(join(where, "end"), f"must be greater than start ({start}), got {end}")
        elif end > len(node_text):
            problems.add(
                join(where, "end"),
                f'{end} is past the end of the text of node "{node}" ({len(node_text)} characters)',
            )
        elif node_text[start:end] != text:
            problems.add(
                join(where, "text"),
                f'"{text}" is not the text of node "{node}" from {start} to {end} ("{node_text[start:end]}")',
            )
        label = value["label"]
        if not isinstance(label, str) or label not in self.label_names:
            shown = f'"{label}"' if isinstance(label, str) else describe(label)
            problems.add(
                join(where, "label"), f"{shown} is not one of the labels ({', '.join(self.label_names)})"
            )
        attributes = self._attributes(value.get("attributes", {}), join(where, "attributes"), problems)
        if len(problems.items) > before:
            return None
        return {
            "node": node,
            "start": start,
            "end": end,
            "text": text,
            "label": label,
            "attributes": attributes,
        }

    def _attributes(self, value: Any, where: str, problems: Problems) -> dict[str, str]:
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            problems.add(where, f"must be an object of attribute: label, got {describe(value)}")
            return {}
        known = {attribute.name for attribute in self.attributes}
        for name in value:
            if name not in known:
                expected = (
                    f"expected {', '.join(sorted(known))}" if known else "this scheme has no attributes"
                )
                problems.add(join(where, str(name)), f"no attribute of that name ({expected})")
        answers = {}
        for attribute in self.attributes:
            answer = value.get(attribute.name)
            if answer is None:
                if attribute.required:
                    problems.add(
                        where, f"{attribute.name} is required (one of {', '.join(attribute.label_names)})"
                    )
                continue
            if not isinstance(answer, str) or answer not in attribute.label_names:
                shown = f'"{answer}"' if isinstance(answer, str) else describe(answer)
                problems.add(
                    join(where, attribute.name),
                    f"{shown} is not one of its labels ({', '.join(attribute.label_names)})",
                )
                continue
            answers[attribute.name] = answer
        return answers

    def _check_repeats(self, spans: list[tuple[int, dict[str, Any]]], where: str, problems: Problems) -> None:
        """A span may not repeat another; without ``allow_overlap``, spans of one node may not share text."""
        seen: dict[SpanKey, int] = {}
        reach: dict[str, tuple[int, int]] = {}  # node -> (furthest end so far, index of that span)
        originals = dict(spans)
        for index, span in spans:
            key = span_key(span)
            if key in seen:
                problems.add(
                    join(where, index),
                    f"repeats {join(where, seen[key])} (same node, offsets, label and attributes)",
                )
                continue
            seen[key] = index
            if self.allow_overlap:
                continue
            furthest = reach.get(span["node"])
            if furthest is not None and span["start"] < furthest[0]:
                other = originals[furthest[1]]
                problems.add(
                    join(where, index),
                    f'overlaps {join(where, furthest[1])} ("{other["text"]}", '
                    f'{other["start"]} to {other["end"]} on node "{other["node"]}"): '
                    "this scheme does not allow overlapping spans",
                )
            if furthest is None or span["end"] > furthest[0]:
                reach[span["node"]] = (span["end"], index)

    def is_empty(self, payload: Any) -> bool:
        return not payload or not payload.get("spans")
