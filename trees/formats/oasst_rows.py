"""One Open-Assistant message row, read into a ``MessageRecord`` and written back the same.

A row is Open-Assistant's ``ExportMessageNode`` without its replies, with the tree's id
and state beside it: the 18 fields the Hugging Face hub publishes (``HUB_FIELDS``, in the
hub's order). Branchpoint models the id, parent, text, role and the review fields; the
tree's id and state go to the tree; ``user_id``, ``created_date``, ``detoxify``,
``emojis``, ``labels`` and any other key go to the message's metadata as they are.

Rows come in two layouts, and a row written back keeps its own. Open-Assistant's writer
leaves out a key whose value is none (``exclude_none``): Branchpoint's default, and the
oasst tree export's. Tables (the hub's Parquet, or JSON made from it) give every key,
null when none: a tree whose rows mostly do has ``WITH_NULLS`` in its metadata. A row
that differs from its tree's layout is remembered key by key: ``_omitted`` lists the
modelled keys it left out that would be written (``deleted`` in an older export), ``_null``
those it gave as null that would be left out or written otherwise (a null ``deleted``).
Metadata holds the keys a row gave, nulls too, so they need neither. Rows of one layout,
the usual case, cost no metadata at all.

Pure functions over plain data: no ORM, no pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from trees import vocabulary
from trees.formats.nested import MISSING
from trees.formats.records import (
    BOOKKEEPING,
    NULLED,
    OMITTED,
    WITH_NULLS,
    ImportIssue,
    MessageRecord,
    TreeRecord,
    type_name,
)

HUB_FIELDS = (
    "message_id",
    "parent_id",
    "user_id",
    "created_date",
    "text",
    "role",
    "lang",
    "review_count",
    "review_result",
    "deleted",
    "rank",
    "synthetic",
    "model_name",
    "detoxify",
    "message_tree_id",
    "tree_state",
    "emojis",
    "labels",
)
# Open-Assistant's words for the roles (``prompter`` is the user).
ROLE_OUT = {vocabulary.USER: "prompter", vocabulary.ASSISTANT: "assistant", vocabulary.SYSTEM: "system"}
# Modelled fields whose none is None on the record: left out by default, null in a table.
_NULLABLE: dict[str, tuple[tuple[type, ...], str]] = {
    "parent_id": ((str,), "a string"),
    "lang": ((str,), "a string"),
    "review_count": ((int,), "an integer"),
    "review_result": ((bool,), "true or false"),
    "rank": ((int,), "an integer"),
    "model_name": ((str,), "a string"),
}
# Modelled fields with a value whatever the row says: a null or missing one is remembered.
_VALUED = ("deleted", "synthetic", "message_tree_id", "tree_state")
_MODELLED = frozenset({"message_id", "text", "role", *_NULLABLE, *_VALUED})
# The backend's seed data (backend/test_data) names the ids otherwise.
SEED_ID, SEED_PARENT = "user_message_id", "parent_message_id"


@dataclass(slots=True)
class Row:
    """A row read: its message, the tree it names, and how its keys were given."""

    message: MessageRecord
    tree_id: str | None  # as the row names it (None: not named)
    tree_state: str | None
    absent: list[str] = field(default_factory=list)  # nullable modelled keys left out
    nulls: list[str] = field(default_factory=list)  # modelled keys given as null
    issues: list[ImportIssue] = field(default_factory=list)

    def add_issue(self, path: str, message: str) -> None:
        self.issues.append(ImportIssue(self.message.line, path, message))


def _text(value: Any, key: str, row: Row, *, empty_ok: bool = True) -> str | None:
    if isinstance(value, str) and (empty_ok or value.strip()):
        return value
    if isinstance(value, str):
        row.add_issue(key, f"empty {key.replace('_', ' ')}")
    else:
        row.add_issue(key, f"must be a string, got {type_name(value)}")
    return None


def read_row(value: dict[str, Any], line: int) -> Row:
    """The row ``value`` (from ``line``) as a message; its problems are on ``Row.issues``."""
    seed = "message_id" not in value and SEED_ID in value
    id_key, parent_key = (SEED_ID, SEED_PARENT) if seed else ("message_id", "parent_id")
    message = MessageRecord("", None, "", "", line=line)
    row = Row(message, None, None)
    raw_id = value.get(id_key, MISSING)
    if raw_id is MISSING or raw_id is None:
        row.add_issue("", "missing message id (message_id)")
    else:
        message.external_id = _text(raw_id, id_key, row, empty_ok=False) or ""
    raw_role = value.get("role", MISSING)
    if raw_role is MISSING:
        row.add_issue("", "missing role")
    elif (role := _text(raw_role, "role", row)) is not None:
        message.role = vocabulary.normalize_role(role) or ""
        if not message.role:
            row.add_issue("role", f'unknown role "{role}" (expected {vocabulary.describe_roles()})')
    raw_text = value.get("text", MISSING)
    if raw_text is MISSING:
        row.add_issue("", 'missing text ("text")')
    else:
        message.text = _text(raw_text, "text", row) or ""
    metadata: dict[str, Any] = {}
    for key, item in value.items():
        if key in (id_key, parent_key) or key in _MODELLED or key in BOOKKEEPING:
            continue
        metadata[key] = item  # a null too: metadata holds the keys the row gave, as it gave them
    message.metadata = metadata
    for key, (types, expected) in _NULLABLE.items():
        item = value.get(parent_key if key == "parent_id" else key, MISSING)
        if item is MISSING:
            row.absent.append(key)
        elif item is None:
            row.nulls.append(key)
        elif type(item) not in types:
            row.add_issue(key, f"must be {expected} or null, got {type_name(item)}")
        elif key == "parent_id":
            message.parent_id = _text(item, key, row, empty_ok=False)
        else:
            setattr(message, key, item)
    for key in _VALUED:
        item = value.get(key, MISSING)
        if item is MISSING or item is None:
            (row.absent if item is MISSING else row.nulls).append(key)
        elif key in ("deleted", "synthetic"):
            if type(item) is bool:
                setattr(message, key, item)
            else:
                row.add_issue(key, f"must be true or false, got {type_name(item)}")
        elif key == "message_tree_id":
            row.tree_id = _text(item, key, row, empty_ok=False)
        elif not isinstance(item, str):
            row.add_issue(key, f"must be a string, got {type_name(item)}")
        elif item not in vocabulary.TREE_STATES:
            row.add_issue(
                key, f'unknown tree state "{item}" (expected one of {", ".join(vocabulary.TREE_STATES)})'
            )
        else:
            row.tree_state = item
    return row


def settle_layout(tree: TreeRecord, rows: Iterable[Row]) -> None:
    """Give ``tree`` the layout most of its rows have, and each row's message what it must
    remember to be written back as it came (see the module's docstring)."""
    rows = list(rows)
    # What each layout would have to remember: keys left out of a table, nulls in the other.
    absent = sum(1 for row in rows for key in row.absent if key in _NULLABLE)
    nulls = sum(1 for row in rows for key in row.nulls if key in _NULLABLE)
    with_nulls = nulls > absent
    if with_nulls:
        tree.metadata[WITH_NULLS] = True
    for row in rows:
        message = row.message
        omitted = [key for key in row.absent if key in _VALUED or with_nulls]
        if message.parent_id is not None and "parent_id" in omitted:
            omitted.remove("parent_id")  # a reply always names its parent
        nulled = [key for key in row.nulls if key in _VALUED or not with_nulls]
        if row.tree_state is not None and row.tree_state != tree.state:
            message.metadata["tree_state"] = row.tree_state
        if omitted:
            message.metadata[OMITTED] = omitted
        if nulled:
            message.metadata[NULLED] = nulled


def row_of(tree: TreeRecord, message: MessageRecord) -> dict[str, Any]:
    """The row of ``message`` in ``tree``: the hub's fields in the hub's order, then the
    message's other metadata keys."""
    metadata = message.metadata or {}
    omitted = metadata.get(OMITTED, ()) if metadata else ()
    nulled = metadata.get(NULLED, ()) if metadata else ()
    with_nulls = bool(tree.metadata.get(WITH_NULLS))
    modelled = {
        "message_id": message.external_id,
        "parent_id": message.parent_id,
        "text": message.text,
        "role": ROLE_OUT.get(message.role, message.role),
        "lang": message.lang,
        "review_count": message.review_count,
        "review_result": message.review_result,
        "deleted": message.deleted,
        "rank": message.rank,
        "synthetic": message.synthetic,
        "model_name": message.model_name,
        "message_tree_id": tree.external_id,
        "tree_state": metadata.get("tree_state", tree.state or vocabulary.IMPORTED_TREE_STATE),
    }
    row: dict[str, Any] = {}
    for key in HUB_FIELDS:
        if key in nulled:
            row[key] = None
            continue
        if key in omitted and not (key == "parent_id" and message.parent_id is not None):
            continue
        if key in modelled:
            item = modelled[key]
            if item is not None or with_nulls:
                row[key] = item
        elif (item := metadata.get(key, MISSING)) is not MISSING:
            row[key] = item
    for key, item in metadata.items():
        if key not in row and key not in _MODELLED and key not in BOOKKEEPING and key not in HUB_FIELDS:
            row[key] = item
    return row


# -- the hub's structs of lists and Open-Assistant's mappings ----------------------------------


def as_mappings(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with the hub's emojis and labels structs given as Open-Assistant's mappings (as its
    ``convert_hf_message`` does), where nothing is lost."""
    if isinstance(row.get("emojis"), dict):
        row["emojis"] = emojis_from_struct(row["emojis"])
    if isinstance(row.get("labels"), dict):
        row["labels"] = labels_from_struct(row["labels"])
    return row


def emojis_from_struct(value: Any) -> Any:
    """``{name: [...], count: [...]}`` as ``{name: count}``, when nothing is lost."""
    if not isinstance(value, dict) or set(value) != {"name", "count"}:
        return value
    names, counts = value["name"], value["count"]
    if (
        not isinstance(names, list)
        or not isinstance(counts, list)
        or len(names) != len(counts)
        or len(set(names)) != len(names)
        or not all(isinstance(name, str) for name in names)
        or not all(type(count) is int for count in counts)
    ):
        return value
    return dict(zip(names, counts, strict=True))


def labels_from_struct(value: Any) -> Any:
    """``{name: [...], value: [...], count: [...]}`` as ``{name: {value, count}}``, when nothing
    is lost."""
    if not isinstance(value, dict) or set(value) != {"name", "value", "count"}:
        return value
    names, values, counts = value["name"], value["value"], value["count"]
    if (
        not all(isinstance(column, list) for column in (names, values, counts))
        or not len(names) == len(values) == len(counts)
        or len(set(names)) != len(names)
        or not all(isinstance(name, str) for name in names)
    ):
        return value
    return {
        name: {"value": item, "count": count} for name, item, count in zip(names, values, counts, strict=True)
    }


def _is_struct(value: Any, keys: Iterable[str]) -> bool:
    if not isinstance(value, dict) or set(value) != set(keys):
        return False
    return all(isinstance(column, list) for column in value.values())


def emojis_to_struct(value: Any) -> Any:
    if value is None or _is_struct(value, ("name", "count")) or not isinstance(value, dict):
        return value
    return {"name": list(value), "count": list(value.values())}


def labels_to_struct(value: Any) -> Any:
    if value is None or _is_struct(value, ("name", "value", "count")) or not isinstance(value, dict):
        return value
    entries = [(name, entry if isinstance(entry, dict) else {}) for name, entry in value.items()]
    return {
        "name": [name for name, _ in entries],
        "value": [entry.get("value") for _, entry in entries],
        "count": [entry.get("count") for _, entry in entries],
    }
