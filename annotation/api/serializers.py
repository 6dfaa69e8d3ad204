"""What the API reads and writes, field by field.

Inputs check only the envelope (types and bounds of ``version`` and
``time_spent_ms``, that ``annotations`` is an object): the answers inside are
checked by their schemes in the services, which report problems with the
same paths whichever door they came in by.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

# Versions and times are stored in 32-bit columns on PostgreSQL.
MAX_VERSION = 2**31 - 1
# One write counts at most an hour: a tab left open overnight is not work.
MAX_TIME_SPENT_MS = 3_600_000


class AnswersInputSerializer(serializers.Serializer):
    annotations = serializers.DictField(
        default=dict, help_text="Answers by scheme name; schemes not sent keep their saved answer."
    )
    version = serializers.IntegerField(
        min_value=1, max_value=MAX_VERSION, help_text="The item version the answers are based on."
    )
    time_spent_ms = serializers.IntegerField(
        min_value=0,
        max_value=MAX_TIME_SPENT_MS,
        default=0,
        help_text="Time spent on the item since the last write.",
    )

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        """Well-formed bodies pass without DRF's field-by-field copies (the loop posts one per
        item); anything else goes through the fields, for their errors."""
        if isinstance(data, dict) and set(data) <= {"annotations", "version", "time_spent_ms"}:
            answers, version = data.get("annotations", {}), data.get("version")
            spent = data.get("time_spent_ms", 0)
            if (
                isinstance(answers, dict)
                and _whole(version, 1, MAX_VERSION)
                and _whole(spent, 0, MAX_TIME_SPENT_MS)
            ):
                return {"annotations": answers, "version": version, "time_spent_ms": spent}
        return super().to_internal_value(data)


def _whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


class SkipInputSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)


_DATETIME = serializers.DateTimeField(allow_null=True)


def assignment_data(assignment: Any) -> dict[str, Any]:
    """An assignment as ``AssignmentOutputSerializer`` declares it, written straight to a dict.

    The loop's serializers below do the same: their fields stay declared for
    readers and the schema, but DRF's field-by-field machinery (a deep copy of
    every nested field per response) cost more than the rest of the view.
    """
    expires = assignment.lease_expires_at
    return {
        "status": assignment.status,
        "version": assignment.version,
        "lease_expires_at": None if expires is None else _DATETIME.to_representation(expires),
    }


class AssignmentOutputSerializer(serializers.Serializer):
    status = serializers.CharField()
    version = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField(allow_null=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return assignment_data(instance)


class ProgressOutputSerializer(serializers.Serializer):
    submitted = serializers.IntegerField(help_text="Items this annotator submitted.")
    quota = serializers.IntegerField(help_text="Items this annotator may do in all.")
    items = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Items with every annotation they need.")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return instance.as_dict()


class MessageListSerializer(serializers.ListSerializer):
    """A tree's messages, written straight to dicts.

    The fields are declared on ``MessageOutputSerializer`` (for readers and
    schemas); DRF's field-by-field machinery would spend ~20 ms on a
    1,000-message tree for the same result.
    """

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        return messages_data(data)


def messages_data(outline: Any) -> list[dict[str, Any]]:
    return [
        {
            "id": row.external_id,
            "parent": row.parent_external_id,
            "role": row.role,
            "text": row.text,
            "depth": row.depth,
            "lang": row.lang,
        }
        for row in outline
    ]


class MessageOutputSerializer(serializers.Serializer):
    """One message of the tree, in preorder; ``parent`` is the parent's id (null for the root)."""

    id = serializers.CharField(source="external_id")
    parent = serializers.CharField(source="parent_external_id", allow_null=True)
    role = serializers.CharField()
    text = serializers.CharField()
    depth = serializers.IntegerField()
    lang = serializers.CharField(allow_null=True)

    class Meta:
        list_serializer_class = MessageListSerializer


class TreeOutputSerializer(serializers.Serializer):
    """The tree of an ``ItemView``; its messages (flat, in preorder) when the view has them."""

    id = serializers.IntegerField(source="tree.pk")
    external_id = serializers.CharField(source="tree.external_id")
    metadata = serializers.JSONField(source="tree.metadata")
    messages = MessageOutputSerializer(source="outline", many=True, required=False)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        tree = {
            "id": instance.tree.pk,
            "external_id": instance.tree.external_id,
            "metadata": instance.tree.metadata,
        }
        if instance.outline is not None:
            tree["messages"] = messages_data(instance.outline)
        return tree


class ItemOutputSerializer(serializers.Serializer):
    """An annotator's item, as GET item and next-item return it (and the page script reads it)."""

    tree = TreeOutputSerializer(source="*")
    assignment = AssignmentOutputSerializer()
    annotations = serializers.DictField(help_text="The annotator's own answers, by scheme name.")
    progress = ProgressOutputSerializer()

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {
            "tree": TreeOutputSerializer().to_representation(instance),
            "assignment": assignment_data(instance.assignment),
            "annotations": {str(scheme): payload for scheme, payload in instance.annotations.items()},
            "progress": instance.progress.as_dict(),
        }


class WriteOutputSerializer(serializers.Serializer):
    """What a draft save, a submission or a skip returns, from the assignment: its new version and state."""

    version = serializers.IntegerField()
    assignment = AssignmentOutputSerializer(source="*")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {"version": instance.version, "assignment": assignment_data(instance)}
