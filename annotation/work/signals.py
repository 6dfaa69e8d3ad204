"""Signals the work group sends, for the groups above it to hear."""

from django.dispatch import Signal

# Sent after an annotator's submission of regular work commits. Sender: the Project class;
# kwargs: project (the Project), tree_id (int). Adjudication's automatic rule hears it
# (annotation.receivers).
item_submitted = Signal()
