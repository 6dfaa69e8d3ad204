"""The ``rubric`` annotation type: people answer a rubric's criteria, yes or no.

In a project's YAML::

    annotation_schemes:
      - annotation_type: rubric
        name: review
        description: Did the assistant book the meeting well?
        rubric: scheduling          # an evaluation rubric, by name

Judges answer every criterion and gate of the rubric's current version
(keys y / n on the annotate page, see static/evaluation/rubric_widget.js),
with an optional note, for the conversation, a path they choose or the
nodes they judge, as the rubric's ``target`` says. The payload shapes are in
``evaluation.judgments``. With ``label_requirement: {required: true}`` a
submission needs every question answered (for a node target: at least one
node judged completely).

Registered into annotation's scheme registry by ``EvaluationConfig.ready``:
the annotation app never imports evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotation.problems import Problems, describe, join
from annotation.schemes.base import Scheme, expect_mapping, read_str
from annotation.schemes.registry import register
from evaluation.judge_metadata import judge_metadata
from evaluation.rubrics import RubricSpec
from trees.shapes import TreeShape

MAX_NOTE_CHARS = 5000


@register
class RubricScheme(Scheme):
    annotation_type = "rubric"
    keys = frozenset({"rubric"})
    # Each criterion is a yes/no (nominal) question; the payload holds one per criterion.
    agreement = "compound"
    node_level = False
    widget_script = "evaluation/rubric_widget.js"
    widget_stylesheet = "evaluation/rubric.css"

    rubric_name: str = ""

    def read(self, raw: Mapping[str, Any], path: str, problems: Problems) -> None:
        from evaluation.models import Rubric

        where = join(path, "rubric")
        name = read_str(raw, "rubric", path, problems)
        self.rubric_name = name or ""
        if not name:
            if "rubric" not in raw:
                problems.add(where, "is required: the name of a rubric (see the admin or create_rubric)")
            return
        if not Rubric.objects.filter(name=name).exists():
            known = ", ".join(Rubric.objects.order_by("name").values_list("name", flat=True)) or "none yet"
            problems.add(where, f'no rubric named "{name}" (rubrics are: {known})')

    def spec(self) -> RubricSpec | None:
        """The current version of the linked rubric (one query), or None if it is gone."""
        from evaluation.models import RubricVersion
        from evaluation.services import rubric_spec

        version = RubricVersion.objects.filter(rubric__name=self.rubric_name).order_by("-number").first()
        return rubric_spec(version) if version is not None else None

    def as_config(self) -> dict[str, Any]:
        config = super().as_config() | {"rubric": self.rubric_name}
        spec = self.spec()
        if spec is None:
            return config | {"missing": True}
        return config | {
            "title": spec.title,
            "target": spec.target,
            "criteria": [{"key": c.key, "question": c.question, "weight": c.weight} for c in spec.criteria],
            "gates": [{"key": g.key, "question": g.question} for g in spec.gates],
        }

    def metadata_shown(self, metadata: Mapping[str, Any]) -> list[tuple[str, str | None]]:
        """The metadata the rubric names (``show_metadata``, paths in its questions), one query."""
        spec = self.spec()
        return [] if spec is None else judge_metadata(spec, metadata)

    # -- payloads --------------------------------------------------------------

    def validate(
        self, payload: Any, path: str, problems: Problems, tree: TreeShape | None, previous: Any = None
    ) -> Any:
        spec = self.spec()
        if spec is None:
            problems.add(path, f'the rubric "{self.rubric_name}" no longer exists', "unknown_rubric")
            return None
        before = len(problems.items)
        if spec.target == "node":
            value = expect_mapping(payload, path, problems, {"nodes"})
            if value is None:
                return None
            result = {"nodes": self._nodes(value.get("nodes", {}), join(path, "nodes"), problems, spec, tree)}
        else:
            keys = {"criteria", "note"} | ({"path"} if spec.target == "path" else set())
            value = expect_mapping(payload, path, problems, keys)
            if value is None:
                return None
            result = self._answer(value, path, problems, spec)
            if spec.target == "path":
                raw_path = value.get("path", [])
                chain = self._path(raw_path, join(path, "path"), problems, tree)
                if result.get("criteria") and raw_path == []:
                    problems.add(join(path, "path"), "choose the path you judge (from the first message on)")
                result = {"path": chain, **result}
        return None if len(problems.items) > before else result

    def _answer(
        self, value: Mapping[str, Any], path: str, problems: Problems, spec: RubricSpec
    ) -> dict[str, Any]:
        criteria = value.get("criteria", {})
        answers: dict[str, bool] = {}
        where = join(path, "criteria")
        if not isinstance(criteria, Mapping):
            problems.add(where, f"must be an object of criterion: true or false, got {describe(criteria)}")
        else:
            keys = spec.keys
            for key, answer in criteria.items():
                if key not in keys:
                    problems.add(
                        join(where, str(key)),
                        f"not a criterion or gate of rubric {spec.name} ({', '.join(keys)})",
                        "unknown_key",
                    )
                elif answer is not None and not isinstance(answer, bool):
                    problems.add(join(where, str(key)), f"must be true or false, got {describe(answer)}")
            answers = {key: criteria[key] for key in keys if isinstance(criteria.get(key), bool)}
        result: dict[str, Any] = {"criteria": answers}
        note = value.get("note", "")
        if note is None:
            note = ""
        if not isinstance(note, str):
            problems.add(join(path, "note"), f"must be a string, got {describe(note)}")
        elif len(note) > MAX_NOTE_CHARS:
            problems.add(join(path, "note"), f"is {len(note):,} characters long; at most {MAX_NOTE_CHARS:,}")
        elif note.strip():
            result["note"] = note
        return result

    def _path(self, value: Any, path: str, problems: Problems, tree: TreeShape | None) -> list[str]:
        if not isinstance(value, list) or not all(isinstance(node, str) for node in value):
            problems.add(path, f"must be a list of node ids, got {describe(value)}")
            return []
        if not value or tree is None:
            return list(value)
        if value[0] != tree.root:
            problems.add(join(path, 0), f'a path starts at the first message, "{tree.root}"')
            return []
        for index, node in enumerate(value[1:], start=1):
            if node not in tree:
                problems.add(join(path, index), f'no node "{node}" in this tree', "unknown_node")
                return []
            if tree.parent[node] != value[index - 1]:
                problems.add(join(path, index), f'"{node}" is not a reply to "{value[index - 1]}"')
                return []
        return list(value)

    def _nodes(
        self, value: Any, path: str, problems: Problems, spec: RubricSpec, tree: TreeShape | None
    ) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            problems.add(path, f"must be an object of node id: answers, got {describe(value)}")
            return {}
        nodes: dict[str, Any] = {}
        for node, answer in value.items():
            where = join(path, str(node))
            if tree is not None and node not in tree:
                problems.add(where, f'no node "{node}" in this tree', "unknown_node")
                continue
            if answer in (None, {}):
                continue  # cleared
            checked = expect_mapping(answer, where, problems, {"criteria", "note"})
            if checked is None:
                continue
            normalized = self._answer(checked, where, problems, spec)
            if normalized["criteria"] or normalized.get("note"):
                nodes[str(node)] = normalized
        if tree is not None:
            order = {node: index for index, node in enumerate(tree.preorder())}
            nodes = dict(sorted(nodes.items(), key=lambda item: order.get(item[0], 0)))
        return nodes

    def is_empty(self, payload: Any) -> bool:
        """Not answered until every question is (for nodes: every question of some node)."""
        spec = self.spec()
        if not payload or spec is None:
            return True
        keys = set(spec.keys)
        if spec.target == "node":
            nodes = payload.get("nodes") or {}
            return not any(keys <= set(answer.get("criteria", {})) for answer in nodes.values())
        return not keys <= set(payload.get("criteria", {}))
