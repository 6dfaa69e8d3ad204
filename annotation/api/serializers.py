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


class SkipInputSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)


class AssignmentOutputSerializer(serializers.Serializer):
    status = serializers.CharField()
    version = serializers.IntegerField()
    lease_expires_at = serializers.DateTimeField(allow_null=True)


class ProgressOutputSerializer(serializers.Serializer):
    submitted = serializers.IntegerField(help_text="Items this annotator submitted.")
    quota = serializers.IntegerField(help_text="Items this annotator may do in all.")
    items = serializers.IntegerField()
    complete = serializers.IntegerField(help_text="Items with every annotation they need.")


class MessageListSerializer(serializers.ListSerializer):
    """A tree's messages, written straight to dicts.

    The fields are declared on ``MessageOutputSerializer`` (for readers and
    schemas); DRF's field-by-field machinery would spend ~20 ms on a
    1,000-message tree for the same result.
    """

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        return [
            {
                "id": row.external_id,
                "parent": row.parent_external_id,
                "role": row.role,
                "text": row.text,
                "depth": row.depth,
                "lang": row.lang,
            }
            for row in data
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
        if instance.outline is None:
            return {
                "id": instance.tree.pk,
                "external_id": instance.tree.external_id,
                "metadata": instance.tree.metadata,
            }
        return super().to_representation(instance)


class ItemOutputSerializer(serializers.Serializer):
    """An annotator's item, as GET item and next-item return it (and the page script reads it)."""

    tree = TreeOutputSerializer(source="*")
    assignment = AssignmentOutputSerializer()
    annotations = serializers.DictField(help_text="The annotator's own answers, by scheme name.")
    progress = ProgressOutputSerializer()


class WriteOutputSerializer(serializers.Serializer):
    """What a draft save, a submission or a skip returns, from the assignment: its new version and state."""

    version = serializers.IntegerField()
    assignment = AssignmentOutputSerializer(source="*")
