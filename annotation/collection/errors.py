"""Refusals the collection workflow gives, each with a code and a sentence a person can act on.

The API turns them into ``{"code", "message"}`` with ``status``; the pages
show the message; the commands print it.
"""

from __future__ import annotations


class WorkflowError(Exception):
    """Base of the workflow's refusals; ``status`` is the HTTP status it means."""

    status = 409

    def __init__(self, code: str, message: str, status: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        if status is not None:
            self.status = status


class NoTaskAvailable(WorkflowError):
    """Nothing of the asked type is waiting for this person right now."""

    status = 404


class TooManyPending(WorkflowError):
    """The person holds as many open tasks as ``max_pending_tasks_per_user`` allows."""

    status = 429


class TaskRefused(WorkflowError):
    """A task cannot be acknowledged, skipped or submitted (see ``code``)."""


class NotCollectProject(WorkflowError):
    status = 404


class ModerationRefused(WorkflowError):
    """A moderation step that does not apply (resuming a tree that is not halted, ...)."""
