"""Signals the work group sends, for the groups above it (adjudication's automatic rule,
webhooks) to hear."""

from django.dispatch import Signal

# Sent once an annotator's regular item (not gold, not training) is submitted for the first
# time since it was handed out or sent back, after its transaction commits. Sender: the
# Project; kwargs: tree_id (int), external_id (str), user (the annotator), version (int).
item_submitted = Signal()
