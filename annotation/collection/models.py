"""What the collection workflow keeps beside the trees it grows.

* ``CollectedTree`` — a tree a collect project grows, with the limits it was
  created under (Open-Assistant's ``message_tree_state`` row). The tree's
  state itself is ``ConversationTree.state``: one place, which exports and
  the trees admin read too.
* ``Task`` — one piece of work handed to one person: a row with a lease.
  While ``leased`` and not expired it holds its place (a reply slot under a
  parent, a review of a message, a ranking of a parent's replies), so the
  limits count people working as well as work done. ``result`` keeps what
  was submitted (the labels, the ranking); reviews and rankings are also
  mirrored into ``annotation.Annotation`` rows so agreement and exports see
  them (see ``annotations.py``).
* ``Report`` — a red flag on a message, feeding auto-moderation.
* ``Deletion`` — a moderator's soft deletion of a message and its subtree,
  remembering exactly which messages it marked so that undo restores those.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from annotation.models import Project
from trees.fields import JSONField
from trees.models import ConversationTree, Message


class CollectedTree(models.Model):
    tree = models.OneToOneField(
        ConversationTree, primary_key=True, on_delete=models.CASCADE, related_name="collected"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="collected_trees")
    lang = models.CharField(max_length=32)
    # Kept from the config the tree was created under: changing the config later
    # changes new trees only, never the goal of a tree people are growing.
    goal_tree_size = models.PositiveIntegerField()
    max_depth = models.PositiveIntegerField()
    max_children_count = models.PositiveIntegerField()
    won_prompt_lottery_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["project_id", "tree_id"]
        verbose_name = "collected tree"

    def __str__(self) -> str:
        return self.tree.external_id


class Task(models.Model):
    class Type(models.TextChoices):
        INITIAL_PROMPT = "initial_prompt"
        LABEL_INITIAL_PROMPT = "label_initial_prompt"
        ASSISTANT_REPLY = "assistant_reply"
        LABEL_ASSISTANT_REPLY = "label_assistant_reply"
        PROMPTER_REPLY = "prompter_reply"
        LABEL_PROMPTER_REPLY = "label_prompter_reply"
        RANK_ASSISTANT_REPLIES = "rank_assistant_replies"
        RANK_PROMPTER_REPLIES = "rank_prompter_replies"

    class Status(models.TextChoices):
        LEASED = "leased"  # handed out; holds its place until expires_at
        DONE = "done"
        SKIPPED = "skipped"  # given back (nack)
        EXPIRED = "expired"  # its lease ran out and its holder moved on to another task

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="collect_tasks")
    type = models.CharField(max_length=32, choices=Type.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    tree = models.ForeignKey(
        ConversationTree, null=True, blank=True, on_delete=models.CASCADE, related_name="collect_tasks"
    )
    # What the task is about: the parent to reply to or whose replies to rank, the message to label.
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="collect_tasks"
    )
    # The message a prompt or reply task wrote. Indexed (partially) for deletes: the database
    # finds the tasks naming each deleted message through it (trees.deletion).
    created_message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    # What the task showed, fixed when handed out: label mode and labels, the shuffled replies.
    payload = JSONField(default=dict, blank=True)
    # What was submitted: {"labels": {...}} or {"ranking": [...], "not_rankable": bool}.
    result = JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    acked_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # A skip with "don't show me this again": the target is never offered to this person again.
    dont_show_again = models.BooleanField(default=False)
    reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["message", "status", "type"], name="task_by_target"),
            # "Has this person done, held or skipped this message?": found without reading their history.
            models.Index(fields=["message", "user"], name="task_by_target_and_user"),
            models.Index(fields=["project", "user", "status"], name="task_by_user"),
            models.Index(fields=["tree", "status", "type"], name="task_by_tree"),
            models.Index(fields=["project", "status", "type"], name="task_by_project"),
            models.Index(
                fields=["created_message"],
                name="task_by_created_message",
                condition=models.Q(created_message__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} #{self.pk} for {self.user}"

    def lease_expired(self, now: datetime | None = None) -> bool:
        return self.status == self.Status.LEASED and self.expires_at <= (now or timezone.now())

    @property
    def shown_status(self) -> str:
        """The status as people see it: a leased task whose lease ran out is expired."""
        return self.Status.EXPIRED if self.lease_expired() else self.status


class Report(models.Model):
    """A red flag: someone reports a message (Open-Assistant's ``red_flag`` emoji)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="reports")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="reports")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["message", "user"], name="report_once_per_person"),
        ]

    def __str__(self) -> str:
        return f"report on {self.message_id} by {self.user}"


class Deletion(models.Model):
    """A soft deletion of a message and its subtree, undoable."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="deletions")
    tree = models.ForeignKey(ConversationTree, on_delete=models.CASCADE, related_name="+")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    # The primary keys of the messages this deletion marked (not those deleted before it).
    message_ids = JSONField(default=list)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"deletion of {self.message_id} ({len(self.message_ids)} messages)"


class ModeratedMessage(Message):
    """Messages of collected trees, as moderators see them in the admin (no table of its own)."""

    class Meta:
        proxy = True
        verbose_name = "collected message"
