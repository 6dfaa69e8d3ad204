"""Checks every import makes whatever the format: sizes, depth, node counts,
and item ids repeated within one file."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from trees.formats.records import TreeRecord


@dataclass(frozen=True)
class ImportLimits:
    max_text_chars: int = 100_000
    max_depth: int = 10_000  # levels, the root being level 1
    max_nodes: int = 100_000

    @classmethod
    def from_settings(cls, **overrides: int | None) -> ImportLimits:
        values = dict(settings.BRANCHPOINT_IMPORT_LIMITS)
        values.update({key: value for key, value in overrides.items() if value is not None})
        return cls(**values)


def check_limits(tree: TreeRecord, limits: ImportLimits) -> None:
    """Record on ``tree`` every way it exceeds ``limits``."""
    messages = tree.messages
    if len(messages) > limits.max_nodes:
        tree.add_issue(
            tree.root_path, f"{len(messages):,} nodes, over the limit of {limits.max_nodes:,} per tree"
        )
    deepest = -1
    for index, message in enumerate(messages):
        if message.depth >= limits.max_depth and (deepest < 0 or message.depth > messages[deepest].depth):
            deepest = index
        text = message.text
        if len(text) > limits.max_text_chars:
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
    if deepest >= 0:
        levels = messages[deepest].depth + 1
        tree.add_issue(
            tree.root_path,
            f'{levels:,} levels deep (node "{messages[deepest].external_id}"), '
            f"over the limit of {limits.max_depth:,}",
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
