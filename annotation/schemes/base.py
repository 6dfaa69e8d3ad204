"""What every annotation scheme does: read its config, check a payload.

A scheme class parses the keys of one ``annotation_schemes`` entry (reporting
problems with their key path), then validates and normalises the payloads
annotators send for it. Value schemes (likert, radio, ...) answer for a
whole item or, inside ``tree_annotation``, for one node.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from annotation.problems import Problems, describe, join
from trees.shapes import TreeShape

COMMON_KEYS = frozenset({"annotation_type", "name", "description", "label_requirement"})
# Keys of Potato's schemes that only change Potato's own page layout.
POTATO_DISPLAY_KEYS = frozenset(
    {
        "sequential_key_binding",
        "horizontal",
        "has_free_response",
        "tooltips",
        "tooltips_file",
        "displaying_score",
        "display_config",
        "option_randomization",
        "video_as_label",
        "bad_text_label",
        "allow_paste",
        "title",
        "instructions",
        "placeholder",
        "textarea",
        "label_suggestions",
        "annotation_id",
    }
)


@dataclass(frozen=True)
class Label:
    name: str
    key: str | None = None  # keyboard shortcut
    color: str | None = None


class Scheme:
    """One entry of ``annotation_schemes`` (or a ``node_scheme``)."""

    annotation_type: ClassVar[str]
    # Keys this type reads beyond annotation_type, name, description.
    keys: ClassVar[frozenset[str]] = frozenset()
    # How agreement between annotators is measured on this scheme's values.
    agreement: ClassVar[str] = "nominal"
    # Whether it can answer for a single node inside tree_annotation.
    node_level: ClassVar[bool] = True
    # Whether its payloads are checked against the messages' texts (spans
    # quote them): the tree's shape is then loaded with the texts.
    reads_text: ClassVar[bool] = False
    # A static file adding this type's widget to the annotate page (types the
    # page script does not draw itself), registered on window.BranchpointWidgets.
    widget_script: ClassVar[str | None] = None
    # Its stylesheet, linked in the page's head when the type is on the page.
    widget_stylesheet: ClassVar[str | None] = None

    def __init__(self, name: str, description: str = "", required: bool = False):
        self.name = name
        self.description = description
        self.required = required

    # -- configuration ---------------------------------------------------------

    @classmethod
    def from_config(cls, raw: Mapping[str, Any], path: str, problems: Problems, *, name: str) -> Scheme:
        problems.check_keys(raw, path, COMMON_KEYS | cls.keys, POTATO_DISPLAY_KEYS)
        description = raw.get("description", "")
        if not isinstance(description, str):
            problems.add(join(path, "description"), f"must be a string, got {describe(description)}")
            description = ""
        required = False
        requirement = raw.get("label_requirement")
        if requirement is not None:
            if isinstance(requirement, Mapping) and isinstance(requirement.get("required", False), bool):
                required = requirement.get("required", False)
            else:
                problems.add(join(path, "label_requirement"), "must be a mapping like {required: true}")
        scheme = cls(name, description, required)
        scheme.read(raw, path, problems)
        return scheme

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        """Read the type's own keys from ``raw``."""

    def as_config(self) -> dict[str, Any]:
        """The normalised config, as stored on the project and sent to pages."""
        config: dict[str, Any] = {"annotation_type": self.annotation_type, "name": self.name}
        if self.description:
            config["description"] = self.description
        if self.required:
            config["label_requirement"] = {"required": True}
        return config

    # -- payloads --------------------------------------------------------------

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        """The normalised payload, or None after adding what is wrong to ``problems``."""
        raise NotImplementedError

    def is_empty(self, payload: Any) -> bool:
        """True when an annotator has not answered (for ``label_requirement``)."""
        return not payload

    # -- beside the conversation -----------------------------------------------

    def metadata_shown(self, metadata: Mapping[str, Any]) -> list[tuple[str, str | None]]:
        """What of the tree's ``metadata`` the annotate page shows beside the conversation for
        this scheme: (key, value as text, or None when the tree has none), in order. A rubric's
        questions can be about metadata its judges would otherwise never see."""
        return []


# -- readers shared by the scheme types -------------------------------------------


def read_int(
    raw: Mapping[str, Any],
    key: str,
    path: str,
    problems: Problems,
    *,
    minimum: int | None = None,
    default: int | None = None,
    required: bool = False,
) -> int | None:
    value = raw.get(key)
    if value is None:
        if required:
            problems.add(join(path, key), "is required" + (f" (an integer ≥ {minimum})" if minimum else ""))
        return default
    if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
        bound = f" ≥ {minimum}" if minimum is not None else ""
        problems.add(join(path, key), f"must be an integer{bound}")
        return default
    return value


def read_number(
    raw: Mapping[str, Any], key: str, path: str, problems: Problems, *, default: float | None = None
) -> float | None:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.add(join(path, key), f"must be a number, got {describe(value)}")
        return default
    return value


def read_str(
    raw: Mapping[str, Any], key: str, path: str, problems: Problems, *, default: str | None = None
) -> str | None:
    value = raw.get(key)
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # YAML reads `min_label: 1` as a number
    if not isinstance(value, str):
        problems.add(join(path, key), f"must be a string, got {describe(value)}")
        return default
    return value


def read_bool(raw: Mapping[str, Any], key: str, path: str, problems: Problems, *, default: bool) -> bool:
    value = raw.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        problems.add(join(path, key), f"must be true or false, got {describe(value)}")
        return default
    return value


def read_labels(
    raw: Mapping[str, Any],
    key: str,
    path: str,
    problems: Problems,
    *,
    required: bool = True,
    minimum: int = 1,
) -> list[Label]:
    """Labels as Potato writes them: strings, or mappings with ``name`` (and ``key_value``)."""
    value = raw.get(key)
    where = join(path, key)
    if value is None:
        if required:
            problems.add(where, "is required (a list of labels)")
        return []
    if not isinstance(value, list):
        problems.add(where, f"must be a list of labels, got {describe(value)}")
        return []
    labels: list[Label] = []
    seen: dict[str, int] = {}
    before = len(problems.items)
    for index, item in enumerate(value):
        item_path = join(where, index)
        if isinstance(item, bool) or (isinstance(item, Mapping) and isinstance(item.get("name"), bool)):
            where_bool = join(item_path, "name") if isinstance(item, Mapping) else item_path
            problems.add(
                where_bool, "must be a label name, got a boolean (YAML reads yes/no as one: quote it)"
            )
            continue
        if isinstance(item, str | int | float):
            label = Label(str(item))
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str | int | float):
            problems.check_keys(item, item_path, {"name", "key_value", "color"}, {"tooltip", "videopath"})
            key_value = item.get("key_value")
            color = item.get("color")
            label = Label(
                str(item["name"]),
                str(key_value) if key_value is not None else None,
                color if isinstance(color, str) else None,
            )
        else:
            problems.add(item_path, "must be a label name or a mapping with a name")
            continue
        if not label.name.strip():
            problems.add(item_path, "must not be empty")
            continue
        if label.name in seen:
            problems.add(
                item_path, f'repeats the label "{label.name}" (first at {join(where, seen[label.name])})'
            )
            continue
        seen[label.name] = index
        labels.append(label)
    # Only when every entry was readable: a bad entry is reason enough.
    if len(labels) < minimum and len(problems.items) == before:
        problems.add(where, f"needs at least {minimum} label{'s' if minimum > 1 else ''}")
    return labels


def labels_config(labels: list[Label]) -> list[Any]:
    return [
        label.name
        if label.key is None and label.color is None
        else {
            "name": label.name,
            **({"key_value": label.key} if label.key else {}),
            **({"color": label.color} if label.color else {}),
        }
        for label in labels
    ]


def expect_mapping(payload: Any, path: str, problems: Problems, keys: set[str]) -> Mapping[str, Any] | None:
    """``payload`` if it is a mapping with only ``keys``; else None after reporting."""
    if not isinstance(payload, Mapping):
        problems.add(path, f"must be an object, got {describe(payload)}")
        return None
    unknown = [key for key in payload if key not in keys]
    for key in unknown:
        allowed = ", ".join(sorted(keys))
        problems.add(join(path, str(key)), f"unknown key (expected {allowed})")
    return None if unknown else payload
