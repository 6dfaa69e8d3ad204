"""Supervised fine-tuning conversations: each selected path, as chat messages.

::

    {"messages": [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}, ...],
     "source": {"tree": "conv_001", "annotator": "alice", "scheme": "response_quality"}}

One line per annotator, item and ``tree_annotation`` scheme with
``path_selection`` whose ``selected_path`` is not empty: the messages from
the root down to the path's last node, roles ``user``, ``assistant`` or
``system``. A path through a message deleted since (or no longer in the
tree, after the tree was replaced) is left out rather than quoted wrong. With
``--status final`` the paths are the final answers', and ``source.provenance``
says who chose the path (an annotator, ``edited`` or ``auto:majority``). In a
project with suggestions, ``source.suggestion`` says whether a judge's
suggestion was visible when the path was chosen (docs/formats.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from annotation.exports.rows import ItemAnnotations, TreeText, suggestion_written
from annotation.projects.config import ProjectConfig
from annotation.schemes.tree import TreeAnnotation
from trees.formats.jsonstream import encode
from trees.formats.records import JSONL

NAME = "sft"
FILE = JSONL
UNIT = "path"
NEEDS_TEXT = True
DESCRIPTION = "each selected path as {messages: [{role, content}], source}"


def path_messages(payload: Any, tree: TreeText) -> list[dict[str, str]] | None:
    """The selected path's messages, or None when there is none to quote."""
    path = payload.get("selected_path") if isinstance(payload, dict) else None
    if not path or not isinstance(path, list):
        return None
    if any(node not in tree or tree.nodes[node].deleted for node in path):
        return None
    return tree.messages(path)


def write(items: Iterable[ItemAnnotations], config: ProjectConfig) -> Iterator[str]:
    schemes = [s for s in config.schemes if isinstance(s, TreeAnnotation) and s.path_enabled]
    for item in items:
        assert item.text is not None, "sft needs the trees' texts"
        for scheme in schemes:
            messages = path_messages(item.annotations.get(scheme.name), item.text)
            if messages is None:
                continue
            source = {"tree": item.tree, "annotator": item.user, "scheme": scheme.name}
            if item.by_model:
                source["annotator_source"] = "model"  # a model judge's path (docs/formats.md)
            if item.provenance is not None:
                # A final answer: who chose its path (annotation.review.merging names the field).
                source["provenance"] = item.provenance.get(f"{scheme.name}/path", "")
            elif config.suggestions.enabled:
                # Whether a judge's suggestion was visible when the path was chosen (docs/formats.md).
                source["suggestion"] = suggestion_written(item, scheme.name)
            yield encode({"messages": messages, "source": source}) + "\n"
