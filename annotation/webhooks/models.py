"""A project's webhooks, and every delivery of an event to one of them."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from annotation.models import Project
from trees.fields import JSONField


class Webhook(models.Model):
    """An integration's subscription: events of ``project`` are sent to ``url``, signed with ``secret``."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000, help_text="http or https; where each event is POSTed.")
    # Kept as written: the signature needs it. Never shown by the API once set.
    secret = models.CharField(max_length=200, help_text="Signs every delivery (HMAC-SHA256).")
    events = JSONField(default=list, blank=True, help_text="The events sent (see docs/webhooks.md).")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project", "pk"]

    def __str__(self) -> str:
        return f"{self.project.name} → {self.url}"


class Delivery(models.Model):
    """One event for one webhook: sent until it is delivered or runs out of attempts."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50)
    payload = JSONField(help_text="The body sent, but for its id: event, project, occurred_at, data.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    last_error = models.TextField(blank=True)
    response_code = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk} ({self.status})"
