"""A scheme's answers as reliability data: one ``Field`` per thing its annotators answered.

Plain Python over ``(item, annotator, payload)`` rows, no ORM (the rubric
reader asks its scheme for the rubric's order, one query). Each
annotation type registers a reader (``READERS``) that knows where its
answers sit in a payload and which kind of values they are, so that
``figures`` can pick the measures that fit:

- ``radio``: the label, nominal, one unit per item;
- ``likert``: the rating, ordinal over the scale's points;
- ``multirate``: each option's label, ordinal over the labels (a field per option);
- ``multiselect``: the set of labels (set distance);
- ``number``, ``slider``: the value, interval;
- ``span``: the spans on the item (node, offsets, label and attributes);
- ``tree_annotation``: node ratings (the node scheme's values, one unit per
  item and node), the selected path (its node set), branch-comparison pair
  labels (one unit per item and sibling pair, oriented as
  ``evaluation.agreement.comparisons`` says) or sibling rankings (one unit per
  item and decision point);
- ``rubric``: each criterion's yes or no, nominal, one unit per judged unit
  (the conversation, a path's last node, or a node);
- the collection workflow's own records (``label_prompt``, ``label_reply``,
  ``rank_replies``): each label on each reviewed message (flags nominal,
  scales interval) and the rankings of siblings;
- ``text``: free text has no agreement measure.

Units are tuples whose first element is the item, so a field can say how
many items it covers whatever its unit. Payloads are decoded JSON, so their
objects are checked as ``dict`` (an ABC check costs more than the reading,
over 50,000 payloads).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.projects.text_labels import FLAG, LABELS, ORDER
from evaluation.agreement import Span, comparison_units, mirror_from_order

Row = tuple[str, str, Any]  # (item id, annotator, payload)
Unit = tuple[Hashable, ...]

NOMINAL, ORDINAL, INTERVAL, SET, SPANS, RANKINGS = (
    "nominal",
    "ordinal",
    "interval",
    "set",
    "spans",
    "rankings",
)

# The collection workflow's schemes (annotation.collection.annotations) and its label kinds.
WORKFLOW_LABELS = ("label_prompt", "label_reply")
WORKFLOW_RANKINGS = "rank_replies"


@dataclass
class Field:
    """One thing annotators answered, as reliability data ``unit → {annotator: value}``."""

    name: str  # "rating", "node rating", "selected path", "criterion helpful", ...
    unit: str  # what one unit is: "item", "item and node", "item and sibling pair", ...
    values: str  # the kind of value, which decides the measures: NOMINAL, ORDINAL, ...
    data: dict[Unit, dict[str, Any]] = field(default_factory=dict)
    # The values' order, for ordinal fields (a scale's points, labels in their configured order).
    order: tuple[Hashable, ...] | None = None
    # Why the answers could not be read as reliability data (every measure is then undefined).
    problem: str = ""

    def add(self, unit: Unit, annotator: str, value: Any) -> None:
        """Record ``annotator``'s ``value`` for ``unit`` (None: no answer). The hot loops inline this."""
        if value is not None:
            self.data.setdefault(unit, {})[annotator] = value

    @property
    def n_items(self) -> int:
        return len({unit[0] for unit in self.data})


@dataclass
class SchemeFields:
    """What a scheme's answers give: its fields, or a note saying why it has none."""

    fields: list[Field]
    note: str = ""


# -- values of the value schemes (item level, or a node's answer in tree_annotation) --------


@dataclass(frozen=True)
class ValuePart:
    """Where one value sits in a value scheme's payload, and its kind."""

    name: str
    values: str
    read: Callable[[Any], Any]
    order: tuple[Hashable, ...] | None = None


def _key(key: str) -> Callable[[Any], Any]:
    return lambda payload: payload.get(key) if isinstance(payload, dict) else None


def _number(payload: Any) -> Any:
    value = payload.get("value") if isinstance(payload, dict) else None
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _label_set(payload: Any) -> frozenset[str] | None:
    labels = payload.get("labels") if isinstance(payload, dict) else None
    return frozenset(labels) if isinstance(labels, list) else None


def _names(labels: Sequence[Any]) -> tuple[str, ...]:
    return tuple(getattr(label, "name", label) for label in labels)


VALUE_PARTS: dict[str, Callable[[Any], list[ValuePart]]] = {
    "radio": lambda scheme: [ValuePart("label", NOMINAL, _key("label"))],
    "likert": lambda scheme: [
        ValuePart("rating", ORDINAL, _key("rating"), tuple(range(1, (scheme.size or 5) + 1)))
    ],
    "multirate": lambda scheme: [
        ValuePart(f"option {option}", ORDINAL, _key(option), _names(scheme.labels))
        for option in _names(scheme.options)
    ],
    "multiselect": lambda scheme: [ValuePart("labels", SET, _label_set)],
    "number": lambda scheme: [ValuePart("value", INTERVAL, _number)],
    "slider": lambda scheme: [ValuePart("value", INTERVAL, _number)],
}


def value_parts(scheme: Any) -> list[ValuePart]:
    """The values a value scheme's payload holds (none for free text or an unknown type)."""
    parts = VALUE_PARTS.get(scheme.annotation_type)
    return parts(scheme) if parts else []


# -- readers, by annotation type ------------------------------------------------------------

Reader = Callable[[Any, Sequence[Row]], SchemeFields]
READERS: dict[str, Reader] = {}


def reader(*types: str) -> Callable[[Reader], Reader]:
    def register(function: Reader) -> Reader:
        for name in types:
            READERS[name] = function
        return function

    return register


def scheme_fields(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    """The fields of ``scheme`` (a parsed scheme of the project's config) over ``rows``."""
    read = READERS.get(scheme.annotation_type)
    if read is None:
        return SchemeFields([], f"no agreement measure for {scheme.annotation_type} answers")
    return read(scheme, rows)


@reader("radio", "likert", "multirate", "multiselect", "number", "slider")
def _values(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    fields = []
    for part in value_parts(scheme):
        found = Field(part.name, "item", part.values, order=part.order)
        read, data = part.read, found.data
        for item, annotator, payload in rows:
            value = read(payload)
            if value is not None:
                data.setdefault((item,), {})[annotator] = value
        fields.append(found)
    return SchemeFields(fields)


@reader("text")
def _text(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    return SchemeFields([], "free text: no agreement measure")


@reader("span")
def _spans(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    found = Field("spans", "item", SPANS)
    for item, annotator, payload in rows:
        spans = payload.get("spans") if isinstance(payload, dict) else None
        if not isinstance(spans, list):
            continue
        # The label carries the attributes: spans agree only when both do (annotation.schemes.span).
        found.add(
            (item,),
            annotator,
            [
                Span(
                    span.get("node"),
                    span.get("start"),
                    span.get("end"),
                    (span.get("label"), tuple(sorted((span.get("attributes") or {}).items()))),
                )
                for span in spans
                if isinstance(span, dict)
            ],
        )
    return SchemeFields([found])


@reader("tree_annotation")
def _tree(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    fields: list[Field] = []
    if scheme.rates_nodes:
        parts = value_parts(scheme.node_scheme)
        node_fields = [
            (Field(f"node {part.name}", "item and node", part.values, order=part.order), part.read)
            for part in parts
        ]
        for found, read in node_fields:
            data = found.data
            for item, annotator, payload in rows:
                answers = payload.get("node_annotations") if isinstance(payload, dict) else None
                if not isinstance(answers, dict):
                    continue
                for node, answer in answers.items():
                    value = read(answer)
                    if value is not None:
                        data.setdefault((item, node), {})[annotator] = value
        fields += [found for found, _ in node_fields]
    if scheme.path_enabled:
        path_field = Field("selected path", "item", SET)
        for item, annotator, payload in rows:
            path = payload.get("selected_path") if isinstance(payload, dict) else None
            if isinstance(path, list) and path:
                path_field.add((item,), annotator, frozenset(path))
        fields.append(path_field)
    if scheme.comparison_enabled:
        if scheme.comparison_mode == "ranking":
            fields.append(_sibling_rankings(rows, "branch_comparisons", "ranking", "sibling ranking"))
        else:
            fields.append(_comparisons(rows, scheme.comparison_labels))
    if not fields:
        return SchemeFields([], "nothing in this scheme has an agreement measure")
    return SchemeFields(fields)


def _comparisons(rows: Sequence[Row], labels: Sequence[str]) -> Field:
    """Pair labels, one unit per item and sibling pair, as ``comparison_units`` orients them."""

    def judgements() -> Any:
        for item, annotator, payload in rows:
            comparisons = payload.get("branch_comparisons") if isinstance(payload, dict) else None
            if not isinstance(comparisons, dict):
                continue
            for parent, comparison in comparisons.items():
                pairs = comparison.get("pairs") if isinstance(comparison, dict) else None
                for pair in pairs if isinstance(pairs, list) else ():
                    if isinstance(pair, dict):
                        # (item, parent, annotator, a, b, label): a PairJudgement's fields, as a plain tuple.
                        yield (item, parent, annotator, pair.get("a"), pair.get("b"), pair.get("label"))

    found = Field("branch comparison", "item and sibling pair", NOMINAL, order=tuple(labels))
    try:
        found.data = comparison_units(judgements(), mirror_from_order(list(labels)))
    except (ValueError, TypeError) as error:
        # Answers stored under other labels (the config changed since): said, not a server error.
        found.problem = f"the pair labels cannot be read: {error}"
    return found


def _sibling_rankings(rows: Sequence[Row], section: str, key: str, name: str) -> Field:
    """Rankings best first, one unit per item and decision point (an empty or refused ranking is none)."""
    found = Field(name, "item and decision point", RANKINGS)
    for item, annotator, payload in rows:
        decisions = payload.get(section) if isinstance(payload, dict) else None
        if not isinstance(decisions, dict):
            continue
        for parent, decision in decisions.items():
            if not isinstance(decision, dict) or decision.get("not_rankable"):
                continue
            order = decision.get(key)
            if isinstance(order, list) and len(order) >= 2:
                found.add((item, parent), annotator, order)
    return found


@reader("rubric")
def _rubric(scheme: Any, rows: Sequence[Row]) -> SchemeFields:
    """One nominal field per criterion (and gate), in the rubric's order.

    The judged unit is read off the payload's shape (``evaluation.judgments``):
    nodes, a path (its last node), or the whole conversation. The order is the
    rubric's current version's (``scheme.spec()``, the one query a reader
    makes): stored payloads do not keep their keys' order on PostgreSQL.
    """
    fields: dict[str, Field] = {}
    for item, annotator, payload in rows:
        if not isinstance(payload, dict):
            continue
        if "nodes" in payload:
            units = payload["nodes"] if isinstance(payload["nodes"], dict) else {}
            answers = [(str(node), answer.get("criteria")) for node, answer in units.items() if answer]
            kind = "item and node"
        elif "path" in payload:
            path = payload["path"]
            answers = [(str(path[-1]), payload.get("criteria"))] if isinstance(path, list) and path else []
            kind = "item and path"
        else:
            answers = [("", payload.get("criteria"))]
            kind = "item"
        for unit, criteria in answers:
            if not isinstance(criteria, dict):
                continue
            for key, answer in criteria.items():
                if isinstance(answer, bool):
                    found = fields.get(key)
                    if found is None:
                        found = fields[key] = Field(f"criterion {key}", kind, NOMINAL)
                    found.add((item, unit), annotator, answer)
    if not fields:
        return SchemeFields([], "no criterion answered yet")
    spec = scheme.spec()
    order = {key: index for index, key in enumerate(spec.keys if spec is not None else ())}
    return SchemeFields(
        [fields[key] for key in sorted(fields, key=lambda key: (order.get(key, len(order)), key))]
    )


# -- the collection workflow's records --------------------------------------------------------


def workflow_fields(scheme: str, rows: Sequence[Row]) -> SchemeFields:
    """Reviews' labels (a field per label, over each reviewed message) or sibling rankings."""
    if scheme == WORKFLOW_RANKINGS:
        return SchemeFields([_sibling_rankings(rows, "rankings", "order", "sibling ranking")])
    fields: dict[str, Field] = {}
    for item, annotator, payload in rows:
        messages = payload.get("node_annotations") if isinstance(payload, dict) else None
        if not isinstance(messages, dict):
            continue
        for message, labels in messages.items():
            if not isinstance(labels, dict):
                continue
            for name, value in labels.items():
                if not isinstance(value, int | float) or isinstance(value, bool):
                    continue
                found = fields.get(name)
                if found is None:
                    # Flags are yes or no; scales a number from 0 to 1.
                    label = LABELS.get(name)
                    kind = NOMINAL if label is not None and label.kind == FLAG else INTERVAL
                    found = fields[name] = Field(f"label {name}", "item and message", kind)
                found.add((item, message), annotator, value)
    ordered = sorted(fields.items(), key=lambda entry: (ORDER.get(entry[0], len(ORDER)), entry[0]))
    return SchemeFields([found for _, found in ordered])
