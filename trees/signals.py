"""Signals for the apps built on trees (which trees itself must not import)."""

from django.dispatch import Signal

# Sent inside the import's transaction once its trees are stored, with
# ``dataset`` and ``replaced`` (the ids of trees that got new messages): apps
# that track a dataset's trees, or derive data from their messages, catch up.
trees_imported = Signal()
