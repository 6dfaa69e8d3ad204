"""The undo offered after a manager changes an item's gold from its review page.

Kept in the manager's session, item by item, so that it survives a reload
or a visit elsewhere: the gold before the change (what the undo puts back),
the gold after it (the undo is refused once anyone changes the item's gold
again: ``annotation.quality.gold.gold_restore``), and what the page says
about the change. Only the last change of each of a few items is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.quality.gold import GoldState

SESSION_KEY = "review_gold_undo"
ITEMS_KEPT = 10


@dataclass(frozen=True)
class GoldUndo:
    before: GoldState
    after: GoldState
    said: str  # what was done, in a sentence

    @property
    def replaced(self) -> dict[str, Any]:
        """The expected answers the change replaced (none when the item had none, or the same)."""
        if self.before.answers == self.after.answers:
            return {}
        return self.before.answers


def _key(project_id: int, tree_id: int) -> str:
    return f"{project_id}:{tree_id}"


def undo_offer_keep(session: Any, *, project_id: int, tree_id: int, undo: GoldUndo) -> None:
    """Offer ``undo`` for the item, in place of any earlier one; the oldest item's offer goes past
    ``ITEMS_KEPT``."""
    offers = dict(session.get(SESSION_KEY) or {})
    key = _key(project_id, tree_id)
    offers.pop(key, None)
    offers[key] = {"before": undo.before.as_json(), "after": undo.after.as_json(), "said": undo.said}
    while len(offers) > ITEMS_KEPT:
        offers.pop(next(iter(offers)))
    session[SESSION_KEY] = offers


def undo_offer_get(session: Any, *, project_id: int, tree_id: int) -> GoldUndo | None:
    offer = (session.get(SESSION_KEY) or {}).get(_key(project_id, tree_id))
    if offer is None:
        return None
    return GoldUndo(GoldState.from_json(offer["before"]), GoldState.from_json(offer["after"]), offer["said"])


def undo_offer_drop(session: Any, *, project_id: int, tree_id: int) -> None:
    offers = dict(session.get(SESSION_KEY) or {})
    if offers.pop(_key(project_id, tree_id), None) is not None:
        session[SESSION_KEY] = offers
