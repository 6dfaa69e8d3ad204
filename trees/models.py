"""Datasets of conversation trees and their messages.

A tree's nodes keep the ids they came with (``external_id``): exports and every
annotation refer to those, never to database ids or positions.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from trees import vocabulary


class Dataset(models.Model):
    name = models.SlugField(max_length=100, unique=True, help_text="Used on the command line and in URLs.")
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ConversationTree(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="trees")
    # Indexed alone too: people look trees up by id across datasets.
    external_id = models.CharField(
        max_length=255, db_index=True, help_text="The item id from the imported file."
    )
    state = models.CharField(
        max_length=32,
        choices=[(state, state.replace("_", " ")) for state in vocabulary.TREE_STATES],
        default=vocabulary.IMPORTED_TREE_STATE,
        db_index=True,
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="tree_external_id_unique_in_dataset"
            ),
        ]
        verbose_name = "conversation tree"

    def __str__(self) -> str:
        return self.external_id


class Message(models.Model):
    # Lookups by tree use the (tree, external_id) unique index; a second index
    # on tree alone would only slow imports down.
    tree = models.ForeignKey(
        ConversationTree, on_delete=models.CASCADE, related_name="messages", db_index=False
    )
    # Messages go with their whole tree (through ``tree``) and are otherwise
    # only ever soft-deleted, so nothing needs to find a message by its parent
    # alone: no index and no cascade, which keeps bulk imports fast.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, related_name="children", db_index=False
    )
    external_id = models.CharField(max_length=255, help_text="The node id from the imported file.")
    role = models.CharField(max_length=16, choices=[(role, role) for role in vocabulary.ROLES])
    text = models.TextField(blank=True)
    # Null (not "") when the source did not say: formats such as Open-Assistant's
    # leave unknown values out, and an export must leave them out again.
    lang = models.CharField(max_length=32, null=True, blank=True)  # noqa: DJ001
    depth = models.PositiveIntegerField(default=0)
    position = models.PositiveIntegerField(default=0, help_text="Order among siblings.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,  # see the partial index in Meta
    )
    synthetic = models.BooleanField(default=False)
    model_name = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    metadata = models.JSONField(default=dict, blank=True)
    # Review and ranking results, as Open-Assistant's collection records them.
    review_count = models.PositiveIntegerField(null=True, blank=True)
    review_result = models.BooleanField(null=True, blank=True)
    rank = models.IntegerField(null=True, blank=True, help_text="0 is the best among its siblings.")
    deleted = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["tree_id", "depth", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["tree", "external_id"], name="message_external_id_unique_in_tree"
            ),
        ]
        indexes = [
            # Imported messages have no author: a partial index costs them nothing.
            models.Index(fields=["author"], name="message_author", condition=models.Q(author__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"
