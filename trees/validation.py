"""Checks every import makes whatever the format: sizes, depth, node counts,
values the database columns cannot hold, and item ids repeated within one file."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from trees.formats.bounds import ReadBounds
from trees.formats.records import TreeRecord
from trees.storable import nesting_depth


@dataclass(frozen=True)
class ImportLimits:
    max_text_chars: int = 100_000
    max_depth: int = 10_000  # levels, the root being level 1
    max_nodes: int = 100_000
    # Levels of arrays and objects in a tree's or a node's metadata (the tree level included).
    max_json_depth: int = 100

    @classmethod
    def from_settings(cls, **overrides: int | None) -> ImportLimits:
        values = {"max_json_depth": settings.BRANCHPOINT_MAX_JSON_DEPTH, **settings.BRANCHPOINT_IMPORT_LIMITS}
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)


def read_bounds() -> ReadBounds:
    """What reading one file may take in, from the settings (``trees.formats.bounds``)."""
    return ReadBounds(
        max_line_bytes=settings.BRANCHPOINT_MAX_LINE_BYTES,
        max_json_depth=settings.BRANCHPOINT_MAX_JSON_DEPTH,
        max_decompressed_bytes=settings.BRANCHPOINT_MAX_DECOMPRESSED_BYTES,
    )


# What the database columns hold (trees/models.py): a value beyond these
# would fail the insert, on PostgreSQL more often than on SQLite.
MAX_ID_CHARS = 255  # external_id, model_name
MAX_LANG_CHARS = 32
MAX_INT = 2**31 - 1  # review_count (at least 0) and rank


def check_limits(tree: TreeRecord, limits: ImportLimits) -> None:
    """Record on ``tree`` every way it exceeds ``limits`` or what the database can store."""
    messages = tree.messages
    if tree.external_id is not None and len(tree.external_id) > MAX_ID_CHARS:
        tree.add_issue(
            "", f"item id is {len(tree.external_id):,} characters, over the limit of {MAX_ID_CHARS}"
        )
    if len(messages) > limits.max_nodes:
        tree.add_issue(
            tree.root_path, f"{len(messages):,} nodes, over the limit of {limits.max_nodes:,} per tree"
        )
    _check_metadata(tree, tree.metadata, "", None, limits.max_json_depth)
    deepest = -1
    max_depth, max_text_chars = limits.max_depth, limits.max_text_chars
    max_id, max_lang, max_int, min_int = MAX_ID_CHARS, MAX_LANG_CHARS, MAX_INT, -MAX_INT - 1
    for index, message in enumerate(messages):
        if message.depth >= max_depth and (deepest < 0 or message.depth > messages[deepest].depth):
            deepest = index
        lang = message.lang
        model_name = message.model_name
        review_count = message.review_count
        rank = message.rank
        if (
            len(message.external_id) > max_id
            or (lang is not None and len(lang) > max_lang)
            or (model_name is not None and len(model_name) > max_id)
            or (review_count is not None and not 0 <= review_count <= max_int)
            or (rank is not None and not min_int <= rank <= max_int)
        ):
            _check_columns(tree, index)
        text = message.text
        if len(text) > max_text_chars:
            tree.add_issue(
                tree.location(index),
                f'text of node "{message.external_id}" is {len(text):,} characters, '
                f"over the limit of {limits.max_text_chars:,}",
                tree.line_of(index),
            )
        if "\x00" in text:
            tree.add_issue(
                tree.location(index),
                f'text of node "{message.external_id}" contains a NUL character (\\u0000), '
                "which cannot be stored",
                tree.line_of(index),
            )
        if message.metadata:
            _check_metadata(tree, message.metadata, tree.location(index), index, limits.max_json_depth)
    if deepest >= 0:
        levels = messages[deepest].depth + 1
        tree.add_issue(
            tree.root_path,
            f'{levels:,} levels deep (node "{messages[deepest].external_id}"), '
            f"over the limit of {limits.max_depth:,}",
        )


def _check_metadata(
    tree: TreeRecord, metadata: dict, path: str, index: int | None, max_json_depth: int
) -> None:
    """Record metadata (the tree's, or message ``index``'s) that nests deeper than
    ``max_json_depth``: stored, it would be more than readers and databases can take."""
    if nesting_depth(metadata, stop_above=max_json_depth) > max_json_depth:
        whose = "the item's" if index is None else f'node "{tree.messages[index].external_id}"\'s'
        tree.add_issue(
            path,
            f"{whose} metadata nests arrays and objects more than {max_json_depth:,} levels deep "
            "(BRANCHPOINT_MAX_JSON_DEPTH)",
            None if index is None else tree.line_of(index),
        )


def _check_columns(tree: TreeRecord, index: int) -> None:
    """Record each field of message ``index`` that its database column cannot hold."""
    message = tree.messages[index]
    path, line = tree.location(index), tree.line_of(index)
    if len(message.external_id) > MAX_ID_CHARS:
        tree.add_issue(
            path,
            f"node id is {len(message.external_id):,} characters, over the limit of {MAX_ID_CHARS}",
            line,
        )
    for key, value, limit in (
        ("lang", message.lang, MAX_LANG_CHARS),
        ("model_name", message.model_name, MAX_ID_CHARS),
    ):
        if value is not None and len(value) > limit:
            tree.add_issue(
                path,
                f'{key} of node "{message.external_id}" is {len(value):,} characters, '
                f"over the limit of {limit}",
                line,
            )
    for key, value, lowest in (
        ("review_count", message.review_count, 0),
        ("rank", message.rank, -MAX_INT - 1),
    ):
        if value is not None and not lowest <= value <= MAX_INT:
            tree.add_issue(
                path,
                f'{key} of node "{message.external_id}" is {value:,}, outside {lowest:,} to {MAX_INT:,}',
                line,
            )


class ItemIds:
    """Remembers the item ids of one file to report the repeated ones."""

    def __init__(self) -> None:
        self._first_line: dict[str, int | None] = {}

    def check(self, tree: TreeRecord) -> None:
        if tree.external_id is None:
            return
        if tree.external_id in self._first_line:
            first = self._first_line[tree.external_id]
            where = f" (first at line {first})" if first is not None else ""
            tree.add_issue("", f'duplicate item id "{tree.external_id}"{where}')
        else:
            self._first_line[tree.external_id] = tree.line
