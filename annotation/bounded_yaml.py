"""YAML read within bounds, into plain JSON data: the one loader for every YAML the platform
reads (project configs with their ``quality:`` and ``workflow:`` sections, Potato's configs,
rubrics, the demo's).

``yaml.safe_load`` is safe from code but not from size: aliases (``*a``) stand for what
their anchor holds, so a few kilobytes of nested aliases ("billion laughs") stand for
billions of values, which every walk over the result then visits; and composing nests
one Python call per level, so a few thousand levels are a RecursionError. Here, while the
document is composed:

- each alias counts as the values it stands for, and the document may hold at most
  ``BRANCHPOINT_YAML_MAX_NODES`` values so counted, and ``BRANCHPOINT_YAML_MAX_ALIASES``
  aliases; an alias to the collection it is inside (a cycle) is refused;
- collections nest at most ``BRANCHPOINT_YAML_MAX_DEPTH`` levels;
- text that cannot be stored (a NUL, a lone UTF-16 surrogate, which YAML's escapes can
  spell: ``trees.storable``) is refused;

and what is built is what JSON holds: strings, numbers (finite), booleans, null, lists
and mappings. Dates stay the strings they are written as (``2025-03-11``: what metadata
holds); ``!!binary``, ``!!set``, ``!!omap``, ``!!pairs`` and ``!!timestamp`` are refused.

Every refusal is a ``ProblemsError`` whose problem names the line and column.
"""

from __future__ import annotations

import math
from typing import Any

import yaml
from django.conf import settings
from yaml.nodes import Node, ScalarNode

from annotation.problems import Problem, ProblemsError
from trees.storable import unstorable


class _Refused(yaml.YAMLError):
    def __init__(self, mark: yaml.Mark | None, reason: str, code: str):
        super().__init__(reason)
        self.problem_mark = mark
        self.problem = reason
        self.code = code


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts as it composes (see the module's docstring)."""

    def __init__(self, stream: str, *, max_nodes: int, max_aliases: int, max_depth: int):
        super().__init__(stream)
        self._max_nodes, self._max_aliases, self._max_depth = max_nodes, max_aliases, max_depth
        self._nodes = 0  # values so far, each alias counted as the values it stands for
        self._aliases = 0
        self._depth = 0
        self._sizes: dict[int, int] = {}  # id(anchored node) -> the values it holds, once composed

    def _count(self, values: int, mark: yaml.Mark) -> None:
        self._nodes += values
        if self._nodes > self._max_nodes:
            raise _Refused(
                mark,
                f"the document holds more than {self._max_nodes:,} values, aliases counted as "
                "the values they stand for (BRANCHPOINT_YAML_MAX_NODES)",
                "yaml_too_large",
            )

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = self.anchors.get(event.anchor)
            if node is not None:
                self._aliases += 1
                if self._aliases > self._max_aliases:
                    raise _Refused(
                        event.start_mark,
                        f"more than {self._max_aliases:,} aliases (BRANCHPOINT_YAML_MAX_ALIASES)",
                        "yaml_too_large",
                    )
                size = self._sizes.get(id(node))
                if size is None:
                    raise _Refused(
                        event.start_mark,
                        f"the alias *{event.anchor} is inside what it stands for (a cycle)",
                        "yaml_cycle",
                    )
                self._count(size, event.start_mark)
            return super().compose_node(parent, index)
        event = self.peek_event()
        mark = event.start_mark
        self._depth += 1
        if self._depth > self._max_depth:
            raise _Refused(
                mark,
                f"nests more than {self._max_depth:,} levels deep (BRANCHPOINT_YAML_MAX_DEPTH)",
                "yaml_too_deep",
            )
        before = self._nodes
        self._count(1, mark)
        node = super().compose_node(parent, index)
        self._depth -= 1
        if event.anchor is not None:
            self._sizes[id(node)] = self._nodes - before
        if isinstance(node, ScalarNode) and (found := unstorable(node.value)):
            raise _Refused(node.start_mark, found.message, found.code)
        return node

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            raise _Refused(
                node.start_mark, f"{node.value} is not a finite number, which JSON cannot hold", "yaml_type"
            )
        return value

    def construct_yaml_int(self, node: ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError as error:  # more digits than Python converts
            raise _Refused(node.start_mark, f"not a number Branchpoint reads: {error}", "yaml_type") from None


def _not_json(tag: str) -> Any:
    def refuse(loader: _BoundedLoader, node: Node) -> Any:
        raise _Refused(node.start_mark, f"{tag} values are not read (only what JSON holds)", "yaml_type")

    return refuse


_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
for _tag in ("binary", "set", "omap", "pairs", "timestamp"):
    _BoundedLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _not_json(f"!!{_tag}"))
# Dates stay strings: no implicit timestamps.
_BoundedLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """One YAML document as plain data, within the bounds; raises ProblemsError with the
    line and column of what is wrong."""
    loader = None
    try:
        # The reader refuses characters YAML does not allow (C1 controls, ...) as it is made.
        loader = _BoundedLoader(
            text,
            max_nodes=settings.BRANCHPOINT_YAML_MAX_NODES,
            max_aliases=settings.BRANCHPOINT_YAML_MAX_ALIASES,
            max_depth=settings.BRANCHPOINT_YAML_MAX_DEPTH,
        )
        return loader.get_single_data()
    except yaml.reader.ReaderError as error:
        where = f"character {error.position + 1}"
        raise ProblemsError(
            [Problem(where, f"not valid YAML: {error.reason} (#x{error.character:04x})", "yaml")]
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        if isinstance(error, _Refused):
            raise ProblemsError([Problem(where, error.problem, error.code)]) from None
        reason = getattr(error, "problem", None) or str(error)
        raise ProblemsError([Problem(where, f"not valid YAML: {reason}", "yaml")]) from None
    finally:
        if loader is not None:
            loader.dispose()
