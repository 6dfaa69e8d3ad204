"""Potato's ``tree_annotation``, made to do what its documentation says.

One payload per annotator and tree::

    {"node_annotations": {"resp_a": {"rating": 4}},
     "selected_path": ["root", "resp_a", "user_2"],
     "branch_comparisons": {"root": {"shown_order": ["resp_b", "resp_a"],
                                     "pairs": [{"a": "resp_a", "b": "resp_b", "label": "Better"}]}}}

Node annotations use ``node_scheme`` (any value scheme); the selected path is
a chain from the root where each node is a child of the one before; at each
decision point (a node with two or more children) the children are shown in
a random order that is stored with the draft, and compared in pairs with a
label, or ordered best first (``branch_comparison.mode: ranking``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Scheme, read_bool, read_labels, read_str
from annotation.schemes.registry import SCHEMES, register
from trees.shapes import TreeShape

DEFAULT_COMPARISON_LABELS = ["Better", "Same", "Worse"]
# Potato's own default, shown above the path selection when the config gives none.
DEFAULT_PATH_DESCRIPTION = "Select the best response path"
_PATH_KEYS = {"enabled", "description"}
_COMPARISON_KEYS = {"enabled", "mode", "labels", "description"}


@register
class TreeAnnotation(Scheme):
    annotation_type = "tree_annotation"
    keys = frozenset({"node_scheme", "path_selection", "branch_comparison"})
    agreement = "compound"
    node_level = False

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        before = len(problems.items)
        self.node_scheme: Scheme | None = None
        node_raw = raw.get("node_scheme")
        if node_raw not in (None, {}):
            self.node_scheme = parse_node_scheme(node_raw, join(path, "node_scheme"), problems)

        self.path_enabled, self.path_description = False, DEFAULT_PATH_DESCRIPTION
        path_raw = raw.get("path_selection")
        if path_raw is not None:
            where = join(path, "path_selection")
            if not isinstance(path_raw, Mapping):
                problems.add(where, f"must be a mapping like {{enabled: true}}, got {describe(path_raw)}")
            else:
                problems.check_keys(path_raw, where, _PATH_KEYS)
                self.path_enabled = read_bool(path_raw, "enabled", where, problems, default=False)
                self.path_description = (
                    read_str(path_raw, "description", where, problems, default=DEFAULT_PATH_DESCRIPTION) or ""
                )

        self.comparison_enabled, self.comparison_mode = False, "pairs"
        self.comparison_labels: list[str] = []
        self.comparison_description = ""
        self.labels_from_node_scheme = False
        comparison_raw = raw.get("branch_comparison")
        if comparison_raw is not None:
            where = join(path, "branch_comparison")
            if not isinstance(comparison_raw, Mapping):
                problems.add(
                    where, f"must be a mapping like {{enabled: true}}, got {describe(comparison_raw)}"
                )
            else:
                problems.check_keys(comparison_raw, where, _COMPARISON_KEYS)
                self.comparison_enabled = read_bool(comparison_raw, "enabled", where, problems, default=False)
                self.comparison_description = (
                    read_str(comparison_raw, "description", where, problems, default="") or ""
                )
                mode = comparison_raw.get("mode", "pairs")
                if mode not in ("pairs", "ranking"):
                    problems.add(join(where, "mode"), f'must be "pairs" or "ranking", got {describe(mode)}')
                else:
                    self.comparison_mode = mode
                if "labels" in comparison_raw:
                    labels = read_labels(comparison_raw, "labels", where, problems, minimum=2)
                    self.comparison_labels = [label.name for label in labels]
        if self.comparison_enabled and self.comparison_mode == "pairs" and not self.comparison_labels:
            node_labels = getattr(self.node_scheme, "label_names", None)
            if self.node_scheme is not None and self.node_scheme.annotation_type == "radio" and node_labels:
                # Potato's documented set-up: the node scheme's labels (Better/Same/Worse)
                # are the comparison's; nodes are then not rated one by one.
                self.comparison_labels = list(node_labels)
                self.labels_from_node_scheme = True
            else:
                self.comparison_labels = list(DEFAULT_COMPARISON_LABELS)
        # A part that was given but is broken has its own problem already.
        if len(problems.items) == before and not (
            self.rates_nodes or self.path_enabled or self.comparison_enabled
        ):
            problems.add(
                path,
                "does nothing: give it a node_scheme, path_selection: {enabled: true} "
                "or branch_comparison: {enabled: true}",
            )

    @property
    def rates_nodes(self) -> bool:
        return self.node_scheme is not None and not self.labels_from_node_scheme

    def as_config(self) -> dict[str, Any]:
        config = super().as_config()
        if self.node_scheme is not None:
            config["node_scheme"] = self.node_scheme.as_config()
        config["rates_nodes"] = self.rates_nodes
        config["path_selection"] = {"enabled": self.path_enabled, "description": self.path_description}
        config["branch_comparison"] = {
            "enabled": self.comparison_enabled,
            "mode": self.comparison_mode,
            "labels": self.comparison_labels,
            "description": self.comparison_description,
        }
        return config

    # -- payloads --------------------------------------------------------------

    def initial_payload(self, tree: TreeShape, rng: random.Random) -> dict[str, Any]:
        """A fresh draft: with comparisons on, each decision point's children shuffled once."""
        payload: dict[str, Any] = {}
        if self.rates_nodes:
            payload["node_annotations"] = {}
        if self.path_enabled:
            payload["selected_path"] = []
        if self.comparison_enabled:
            comparisons = {}
            for parent in tree.decision_points():
                order = list(tree.siblings_under(parent))
                rng.shuffle(order)
                answer_key = "ranking" if self.comparison_mode == "ranking" else "pairs"
                comparisons[parent] = {"shown_order": order, answer_key: []}
            payload["branch_comparisons"] = comparisons
        return payload

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        if tree is None:
            raise ValueError("tree_annotation payloads are checked against their tree")
        if not isinstance(payload, Mapping):
            problems.add(path, f"must be an object, got {describe(payload)}")
            return None
        allowed = set()
        if self.rates_nodes:
            allowed.add("node_annotations")
        if self.path_enabled:
            allowed.add("selected_path")
        if self.comparison_enabled:
            allowed.add("branch_comparisons")
        before = len(problems.items)
        for key in payload:
            if key not in allowed:
                why = "is not enabled in this scheme" if key in _PARTS else "is not part of tree_annotation"
                problems.add(join(path, str(key)), why)
        result: dict[str, Any] = {}
        if self.rates_nodes:
            result["node_annotations"] = self._node_annotations(
                payload.get("node_annotations", {}), join(path, "node_annotations"), problems, tree
            )
        if self.path_enabled:
            result["selected_path"] = self._selected_path(
                payload.get("selected_path", []), join(path, "selected_path"), problems, tree
            )
        if self.comparison_enabled:
            stored = previous.get("branch_comparisons", {}) if isinstance(previous, Mapping) else {}
            result["branch_comparisons"] = self._comparisons(
                payload.get("branch_comparisons", {}),
                join(path, "branch_comparisons"),
                problems,
                tree,
                stored,
            )
        return None if len(problems.items) > before else result

    def _node_annotations(self, value: Any, path: str, problems: Problems, tree: TreeShape) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            problems.add(path, f"must be an object of node id: answer, got {describe(value)}")
            return {}
        assert self.node_scheme is not None
        answers = {}
        for node, answer in value.items():
            where = join(path, str(node))
            if node not in tree:
                problems.add(where, f'no node "{node}" in this tree', "unknown_node")
                continue
            if answer in (None, {}):
                continue  # cleared
            normalized = self.node_scheme.validate(answer, where, problems, tree)
            if normalized is not None:
                answers[node] = normalized
        order = {node: index for index, node in enumerate(tree.preorder())}
        return dict(sorted(answers.items(), key=lambda item: order[item[0]]))

    def _selected_path(self, value: Any, path: str, problems: Problems, tree: TreeShape) -> list[str]:
        if not isinstance(value, list):
            problems.add(path, f"must be a list of node ids, got {describe(value)}")
            return []
        for index, node in enumerate(value):
            where = join(path, index)
            if not isinstance(node, str) or node not in tree:
                shown = f'"{node}"' if isinstance(node, str) else describe(node)
                problems.add(where, f"{shown} is not a node of this tree", "unknown_node")
                return []
            if index == 0:
                if node != tree.root:
                    problems.add(
                        where, f'a path starts at the root "{tree.root}", not "{node}"', "broken_path"
                    )
                    return []
            elif tree.parent.get(node) != value[index - 1]:
                problems.add(
                    where,
                    f'"{node}" is not a reply to "{value[index - 1]}", the node before it',
                    "broken_path",
                )
                return []
        return list(value)

    def _comparisons(
        self, value: Any, path: str, problems: Problems, tree: TreeShape, stored: Mapping[str, Any]
    ) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            problems.add(path, f"must be an object of parent id: comparison, got {describe(value)}")
            return {}
        result = {}
        answer_key = "ranking" if self.comparison_mode == "ranking" else "pairs"
        for parent, comparison in value.items():
            where = join(path, str(parent))
            children = tree.siblings_under(parent) if parent in tree else []
            if parent not in tree:
                problems.add(where, f'no node "{parent}" in this tree', "unknown_node")
                continue
            if len(children) < 2:
                problems.add(
                    where, f'"{parent}" is not a decision point (fewer than two replies)', "unknown_node"
                )
                continue
            if not isinstance(comparison, Mapping):
                problems.add(where, f"must be an object, got {describe(comparison)}")
                continue
            for key in comparison:
                if key not in ("shown_order", answer_key):
                    problems.add(join(where, str(key)), f"unknown key (expected shown_order, {answer_key})")
            shown = comparison.get("shown_order")
            if not _lists_each_once(shown, children):
                problems.add(
                    join(where, "shown_order"), f'must list the replies of "{parent}" once each: {children}'
                )
                continue
            earlier = (
                stored.get(parent, {}).get("shown_order") if isinstance(stored.get(parent), Mapping) else None
            )
            if earlier and list(shown) != list(earlier):
                problems.add(
                    join(where, "shown_order"),
                    f"must stay in the order it was shown: {earlier}",
                    "order_changed",
                )
                continue
            if answer_key == "pairs":
                pairs = self._pairs(comparison.get("pairs", []), join(where, "pairs"), problems, children)
                result[parent] = {"shown_order": list(shown), "pairs": pairs}
            else:
                ranking = comparison.get("ranking", [])
                if ranking != [] and not _lists_each_once(ranking, children):
                    problems.add(
                        join(where, "ranking"),
                        f'must order every reply of "{parent}" once, best first: {children}',
                    )
                    continue
                result[parent] = {"shown_order": list(shown), "ranking": list(ranking)}
        # An order once shown stays fixed even when a save leaves its decision point out.
        for parent, comparison in stored.items():
            if parent not in result and parent not in value and len(tree.siblings_under(parent)) >= 2:
                shown = comparison.get("shown_order") if isinstance(comparison, Mapping) else None
                if _lists_each_once(shown, tree.siblings_under(parent)):
                    result[parent] = {"shown_order": list(shown), answer_key: []}
        return result

    def _pairs(self, value: Any, path: str, problems: Problems, children: list[str]) -> list[dict[str, str]]:
        if not isinstance(value, list):
            problems.add(path, f"must be a list of {{a, b, label}}, got {describe(value)}")
            return []
        pairs = []
        seen: dict[frozenset[str], int] = {}
        for index, pair in enumerate(value):
            where = join(path, index)
            if not isinstance(pair, Mapping) or set(pair) != {"a", "b", "label"}:
                problems.add(where, "must be an object with exactly a, b and label")
                continue
            a, b, label = pair["a"], pair["b"], pair["label"]
            if a not in children or b not in children or a == b:
                problems.add(where, f"a and b must be two different replies among {children}", "not_siblings")
                continue
            if label not in self.comparison_labels:
                problems.add(
                    join(where, "label"),
                    f'"{label}" is not one of the labels ({", ".join(self.comparison_labels)})',
                )
                continue
            key = frozenset((a, b))
            if key in seen:
                problems.add(where, f"compares {a} and {b} again (first at {join(path, seen[key])})")
                continue
            seen[key] = index
            pairs.append({"a": a, "b": b, "label": label})
        return pairs

    def is_empty(self, payload: Any) -> bool:
        if not payload:
            return True
        comparisons = payload.get("branch_comparisons", {})
        answered = any(c.get("pairs") or c.get("ranking") for c in comparisons.values())
        return not (payload.get("node_annotations") or payload.get("selected_path") or answered)


_PARTS = {"node_annotations", "selected_path", "branch_comparisons"}


def _lists_each_once(value: Any, nodes: list[str]) -> bool:
    """True when ``value`` is a list naming each of ``nodes`` exactly once."""
    return (
        isinstance(value, list)
        and all(isinstance(node, str) for node in value)
        and sorted(value) == sorted(nodes)
    )


def parse_node_scheme(raw: Any, path: str, problems: Problems) -> Scheme | None:
    """A node scheme: any value scheme, checked like a top-level one."""
    if not isinstance(raw, Mapping):
        problems.add(path, f"must be a mapping with an annotation_type, got {describe(raw)}")
        return None
    kind = raw.get("annotation_type")
    node_types = sorted(name for name, cls in SCHEMES.items() if cls.node_level)
    if kind is None:
        problems.add(join(path, "annotation_type"), f"is required (one of {', '.join(node_types)})")
        return None
    if not isinstance(kind, str):
        problems.add(
            join(path, "annotation_type"),
            f"must be the name of a type (one of {', '.join(node_types)}), got {describe(kind)}",
        )
        return None
    cls = SCHEMES.get(kind)
    if cls is None or not cls.node_level:
        problems.add(
            join(path, "annotation_type"),
            f'"{kind}" cannot rate a node (expected one of {", ".join(node_types)})',
        )
        return None
    name = raw.get("name") if isinstance(raw.get("name"), str) else "node"
    return cls.from_config(raw, path, problems, name=name)
