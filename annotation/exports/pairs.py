"""Preference pairs for reward models and DPO: which of two sibling replies is better.

::

    {"prompt": [{"role": "user", "content": "Hello, I need help with my order"}],
     "chosen": [{"role": "assistant", "content": "I'd be happy to help! ..."}],
     "rejected": [{"role": "assistant", "content": "Sure, what seems to be the problem?"}],
     "source": {"tree": "conv_001", "parent": "root", "chosen_id": "resp_a", "rejected_id": "resp_b",
                "kind": "branch_comparison", "scheme": "branch_compare", "label": "Better"},
     "annotator": "alice"}

With ``--status final`` the pairs are the final answers': ``annotator`` is
who adjudicated, and ``source.provenance`` says where the comparison or the
two ratings came from (an annotator, ``edited`` or ``auto:majority``). In a
project with suggestions (its config's ``suggestions:``), ``source.suggestion``
says whether a judge's suggestion was visible when the answer was made
(``none``, ``after``, ``after_seen``, ``before``, ``before_taken``: docs/formats.md).
A model judge's pairs (its ``judge:<name>`` account) also say ``"annotator_source": "model"``.

``prompt`` is the conversation from the root down to the replies' parent
(inclusive); ``chosen`` and ``rejected`` are the two replies. Pairs come from
the ``tree_annotation`` schemes only:

- **Branch comparisons, pairs mode** (``kind: branch_comparison``). Each
  answer ``{a, b, label}`` reads "a is <label> than b" against the scheme's
  comparison labels in their configured order: the *first* label prefers
  ``a`` (Potato's default ``Better``), the *last* prefers ``b`` (``Worse``),
  and any label in between (``Same``) is a tie, which gives no pair. The
  label answered is kept in ``source.label``.
- **Branch comparisons, ranking mode** (``kind: branch_comparison``). A
  ranking lists the replies best first; every ordered pair of it is a pair
  (n replies give n(n-1)/2), the earlier one chosen. No ``label``.
- **Sibling ratings** (``kind: node_rating``). When the node scheme gives a
  number — ``likert`` (``rating``), ``number`` or ``slider`` (``value``) —
  every two rated replies of the same parent with different values make a
  pair, the higher chosen; equal values give none. Label schemes (``radio``,
  ``multiselect``, ``multirate``) and ``text`` have no order and give none.

Pairs run in tree order (parents in document order, siblings by position).
A pair that would quote a message deleted since, or no longer in the tree,
is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from annotation.exports.rows import ItemAnnotations, TreeText, suggestion_written
from annotation.projects.config import ProjectConfig
from annotation.schemes.tree import TreeAnnotation
from trees.formats.jsonstream import encode
from trees.formats.records import JSONL

NAME = "pairs"
FILE = JSONL
UNIT = "pair"
NEEDS_TEXT = True
DESCRIPTION = "preference pairs {prompt, chosen, rejected, source, annotator}"

BRANCH_COMPARISON = "branch_comparison"
NODE_RATING = "node_rating"
# The answer key that holds a node scheme's number, for the schemes that give one.
NUMERIC_NODE_KEYS = {"likert": "rating", "number": "value", "slider": "value"}


@dataclass(frozen=True, slots=True)
class Preference:
    parent: str
    chosen: str
    rejected: str
    kind: str
    label: str | None = None


def comparison_preferences(scheme: TreeAnnotation, payload: Any, tree: TreeText) -> Iterator[Preference]:
    """Pairs from the scheme's branch comparisons (see the module docstring for the labels)."""
    comparisons = payload.get("branch_comparisons") if isinstance(payload, dict) else None
    if not scheme.comparison_enabled or not isinstance(comparisons, dict):
        return
    labels = scheme.comparison_labels
    for parent in _in_tree_order(comparisons, tree):
        comparison = comparisons[parent]
        if not isinstance(comparison, dict):
            continue
        if scheme.comparison_mode == "ranking":
            ranking = comparison.get("ranking")
            if isinstance(ranking, list):
                for better, worse in combinations(ranking, 2):
                    yield Preference(parent, better, worse, BRANCH_COMPARISON)
            continue
        pairs = comparison.get("pairs")
        for pair in pairs if isinstance(pairs, list) else []:
            # Stored answers were validated by the scheme; anything else is skipped, not guessed at.
            label = pair.get("label") if isinstance(pair, dict) else None
            if (
                label not in labels
                or not isinstance(pair.get("a"), str)
                or not isinstance(pair.get("b"), str)
            ):
                continue
            if label == labels[0]:
                yield Preference(parent, pair["a"], pair["b"], BRANCH_COMPARISON, label)
            elif label == labels[-1]:
                yield Preference(parent, pair["b"], pair["a"], BRANCH_COMPARISON, label)


def rating_preferences(scheme: TreeAnnotation, payload: Any, tree: TreeText) -> Iterator[Preference]:
    """Pairs from sibling replies rated with different numbers, the higher chosen."""
    answers = payload.get("node_annotations") if isinstance(payload, dict) else None
    if not scheme.rates_nodes or scheme.node_scheme is None or not isinstance(answers, dict):
        return
    key = NUMERIC_NODE_KEYS.get(scheme.node_scheme.annotation_type)
    if key is None:
        return
    by_parent: dict[str, list[tuple[str, float]]] = {}
    for node, answer in answers.items():
        value = answer.get(key) if isinstance(answer, dict) else None
        if node not in tree or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        parent = tree.nodes[node].parent
        if parent is not None:
            by_parent.setdefault(parent, []).append((node, value))
    for parent in _in_tree_order(by_parent, tree):
        siblings = sorted(by_parent[parent], key=lambda rated: tree.nodes[rated[0]].position)
        for (a, value_a), (b, value_b) in combinations(siblings, 2):
            if value_a > value_b:
                yield Preference(parent, a, b, NODE_RATING)
            elif value_b > value_a:
                yield Preference(parent, b, a, NODE_RATING)


def _in_tree_order(parents: Iterable[str], tree: TreeText) -> list[str]:
    order = tree.order
    return sorted((parent for parent in parents if parent in order), key=order.__getitem__)


def pair_record(item: ItemAnnotations, scheme: str, preference: Preference) -> dict[str, Any] | None:
    """The JSON record of one preference, or None when it would quote a missing or deleted message."""
    tree = item.text
    assert tree is not None, "pairs need the trees' texts"
    prompt = tree.path_to(preference.parent)
    quoted = [*(prompt or []), preference.chosen, preference.rejected]
    if prompt is None or any(node not in tree or tree.nodes[node].deleted for node in quoted):
        return None
    source: dict[str, Any] = {
        "tree": item.tree,
        "parent": preference.parent,
        "chosen_id": preference.chosen,
        "rejected_id": preference.rejected,
        "kind": preference.kind,
        "scheme": scheme,
    }
    if preference.label is not None:
        source["label"] = preference.label
    if item.provenance is not None:
        source["provenance"] = _provenance(item.provenance, scheme, preference)
    return {
        "prompt": tree.messages(prompt),
        "chosen": tree.messages([preference.chosen]),
        "rejected": tree.messages([preference.rejected]),
        "source": source,
        "annotator": item.user,
    } | ({"annotator_source": "model"} if item.by_model else {})


def _provenance(provenance: dict[str, str], scheme: str, preference: Preference) -> dict[str, str]:
    """Where a final answer's pair came from: its comparison, or its two ratings (the fields as
    ``annotation.review.merging`` names them)."""
    if preference.kind == NODE_RATING:
        fields = [f"{scheme}/node/{preference.chosen}", f"{scheme}/node/{preference.rejected}"]
    else:
        fields = [f"{scheme}/comparison/{preference.parent}"]
    return {field: provenance[field] for field in fields if field in provenance}


def write(items: Iterable[ItemAnnotations], config: ProjectConfig) -> Iterator[str]:
    schemes = [scheme for scheme in config.schemes if isinstance(scheme, TreeAnnotation)]
    for item in items:
        assert item.text is not None, "pairs need the trees' texts"
        for scheme in schemes:
            payload = item.annotations.get(scheme.name)
            if payload is None:
                continue
            for found in (comparison_preferences, rating_preferences):
                for preference in found(scheme, payload, item.text):
                    record = pair_record(item, scheme.name, preference)
                    if record is None:
                        continue
                    if config.suggestions.enabled and item.provenance is None:
                        record["source"]["suggestion"] = suggestion_written(item, scheme.name)
                    yield encode(record) + "\n"
