"""Signals the review group sends, for the groups above it (webhooks) to hear."""

from django.dispatch import Signal

# Sent after an item's final answer is saved (by a person or by the automatic rule),
# once its transaction commits. Sender: the Project; kwargs: tree_id (str), version (int),
# by (the User, or None for the automatic rule).
item_finalised = Signal()
