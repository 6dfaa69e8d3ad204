"""Python checks of the scheduling sample (platform/samples/scheduling/).

A Python check is a function ``(subject) -> bool`` over an
``evaluation.subjects.Subject``; it is registered by name in
``settings.BRANCHPOINT_RUBRIC_CHECKS`` and a rubric names it with
``check: {python: booking_confirmed}``.
"""

from __future__ import annotations

from evaluation.subjects import Subject


def booking_confirmed(subject: Subject) -> bool:
    """The method's ``booking_confirmed``: the final state's scheduling context says the
    booking is confirmed (``true`` itself, not merely a truthy value)."""
    final_state = subject.metadata.get("final_state")
    context = final_state.get("scheduling_context") if isinstance(final_state, dict) else None
    return isinstance(context, dict) and context.get("booking_confirmed") is True
