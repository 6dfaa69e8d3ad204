"""Datasets of conversation trees and their messages.

A tree's nodes keep the ids they came with (``external_id``): exports and every
annotation refer to those, never to database ids or positions.
"""

from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.utils import timezone

from trees import vocabulary
from trees.fields import JSONField
from trees.markdown import RENDERER_VERSION, stored_html


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
    metadata = JSONField(default=dict, blank=True)
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
    # Messages go with their whole tree (through ``tree``) and are otherwise only ever
    # soft-deleted: no cascade. Indexed (partially: roots have none) because the database checks
    # this key for every deleted message, which without an index read the whole table each
    # time (replacing 100 trees of 10,000 took 28 s; bench/scale.py --sections deletes).
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.DO_NOTHING, related_name="children", db_index=False
    )
    external_id = models.CharField(max_length=255, help_text="The node id from the imported file.")
    role = models.CharField(max_length=16, choices=[(role, role) for role in vocabulary.ROLES])
    text = models.TextField(blank=True)
    # The text as safe HTML (trees.markdown), rendered when the text is written and kept:
    # messages do not change, and a page of 1,000 messages must not render them each time.
    # Null for prose with no Markdown in it, whose HTML (its paragraphs) costs less to make
    # again than to store twice. ``html_version`` is the renderer's version that wrote it
    # (0: never rendered); pages render rows of another version afresh until
    # ``manage.py messages_render`` keeps them. Read it through ``trees.markdown.kept_html``.
    html = models.TextField(null=True, blank=True, editable=False)  # noqa: DJ001
    html_version = models.PositiveSmallIntegerField(default=0, editable=False)
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
    metadata = JSONField(default=dict, blank=True)
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
            models.Index(fields=["parent"], name="message_parent", condition=models.Q(parent__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Saves the text's HTML with it, so the two never disagree (bulk writes render it
        themselves: ``trees.store``)."""
        update_fields = kwargs.get("update_fields")
        if update_fields is None or "text" in update_fields:
            self.html, self.html_version = stored_html(self.text), RENDERER_VERSION
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "html", "html_version"}
        super().save(*args, **kwargs)


def audit_actions() -> list[tuple[str, str]]:
    """The actions the apps log, as field choices (read when asked: the apps register
    theirs as they load, see ``trees.audit``)."""
    from trees.audit import action_choices

    return action_choices()


class AuditEntry(models.Model):
    """Who did what, to what, and when: one row per change, written by the service that
    made it, in the change's own transaction (a change rolled back leaves no entry).

    Here in ``trees`` so that every app can write it. The target is named by its
    model label and id rather than a content type: writing an entry is one INSERT
    with no lookup, and its ``target_repr`` keeps the name of a target since deleted.
    """

    class Via(models.TextChoices):
        WEB = "web", "pages"
        API = "api", "API"
        ADMIN = "admin", "admin"
        COMMAND = "command", "command line"
        SYSTEM = "system", "system"

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept when the account is deleted; for a command without a user, the command.
    actor_name = models.CharField(max_length=150, blank=True)
    via = models.CharField(max_length=16, choices=Via.choices)
    action = models.CharField(max_length=64, choices=audit_actions)
    target_type = models.CharField(max_length=100, blank=True, help_text="The model's label: trees.dataset.")
    target_id = models.CharField(max_length=64, blank=True)
    target_repr = models.CharField("target", max_length=200, blank=True)
    scope = models.CharField(
        max_length=200, blank=True, help_text="The project, dataset or person it happened in."
    )
    # What changed: counts, formats, filters, the fields or keys touched. Never a secret.
    details = JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)

    class Meta:
        ordering = ["-created_at", "-id"]
        # Named indexes, not ``db_index=True``: on PostgreSQL that adds a ``varchar_pattern_ops``
        # twin to each (for LIKE), which no query here uses (the admin's search ORs them with
        # columns without an index, so it reads the log in order anyway), and every entry,
        # two a page cycle, wrote both (migration 0006).
        indexes = [
            models.Index(fields=["target_type", "target_id"], name="audit_entry_target"),
            models.Index(fields=["action"], name="audit_entry_action"),
            models.Index(fields=["scope"], name="audit_entry_scope"),
        ]
        verbose_name = "audit entry"
        verbose_name_plural = "audit log"

    def __str__(self) -> str:
        who = self.actor_name or "system"
        what = f" {self.target_repr}" if self.target_repr else ""
        return f"{who}: {self.action}{what}"
