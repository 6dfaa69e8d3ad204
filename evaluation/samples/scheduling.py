"""Python checks of the scheduling sample (platform/samples/scheduling/).

A Python check is a function ``(subject) -> bool`` over an
``evaluation.subjects.Subject``; it is registered by name in
``settings.BRANCHPOINT_RUBRIC_CHECKS`` and a rubric names it with
``check: {python: booking_confirmed}``.
"""

from __future__ import annotations

from evaluation.subjects import Subject


def booking_confirmed(subject: Subject) -> bool:
    """The final state holds a booking whose status is "confirmed" and which has a start time."""
    final_state = subject.metadata.get("final_state")
    booking = final_state.get("booking") if isinstance(final_state, dict) else None
    return isinstance(booking, dict) and booking.get("status") == "confirmed" and bool(booking.get("start"))
