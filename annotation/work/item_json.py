"""An annotator's item as JSON: the one shape the API's item endpoints return and the
annotate page's script starts from.

Written straight to dicts: the API's serializers (``annotation.api.items``) keep their
fields declared for readers and the schema, but DRF's field-by-field machinery (a deep
copy of every nested field per response) cost more than the rest of the view, and ~20 ms
for a 1,000-message tree.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.work.selectors import ItemView

_DATETIME = serializers.DateTimeField(allow_null=True)


def assignment_data(assignment: Any) -> dict[str, Any]:
    """An assignment: its state, its version and when its lease runs out."""
    expires = assignment.lease_expires_at
    return {
        "status": assignment.status,
        "version": assignment.version,
        "lease_expires_at": None if expires is None else _DATETIME.to_representation(expires),
    }


def messages_data(outline: Any) -> list[dict[str, Any]]:
    """A tree's messages in preorder, each naming its parent by id (null for the root), with its
    text and the text as safe HTML (``trees.markdown``: sanitised, for a page to show as it is)."""
    return [
        {
            "id": row.external_id,
            "parent": row.parent_external_id,
            "role": row.role,
            "text": row.text,
            "html": row.html,
            "depth": row.depth,
            "lang": row.lang,
        }
        for row in outline
    ]


def tree_data(item: ItemView) -> dict[str, Any]:
    """The item's tree; its messages (flat, in preorder) when the view has them."""
    tree = {"id": item.tree.pk, "external_id": item.tree.external_id, "metadata": item.tree.metadata}
    if item.outline is not None:
        tree["messages"] = messages_data(item.outline)
    return tree


def item_data(item: ItemView) -> dict[str, Any]:
    """The whole item: its tree, the annotator's assignment, answers and progress."""
    return {
        "tree": tree_data(item),
        "assignment": assignment_data(item.assignment),
        "annotations": {str(scheme): payload for scheme, payload in item.annotations.items()},
        "progress": item.progress.as_dict(),
    }
