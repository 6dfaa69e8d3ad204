"""Signals for the apps built on trees (which trees itself must not import)."""

from django.dispatch import Signal

# Sent inside the import's transaction once its trees are stored, with
# ``dataset``: apps that track a dataset's trees (projects, say) catch up.
trees_imported = Signal()
