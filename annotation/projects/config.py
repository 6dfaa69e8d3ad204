"""Project configuration: Potato's YAML, validated, plus Branchpoint's own keys.

Every config Potato documents loads unchanged. Potato keys that only concern
how Potato runs (its port, its output directory, ...) are accepted and
reported as ignored; Potato's assignment keys are read as ours; anything else
unknown is an error that suggests the nearest known key. Errors name the key
path: ``annotation_schemes[0].node_scheme.size: must be an integer ≥ 2``.

What Potato requires is required: every scheme of ``annotation_schemes`` has a
``description`` (Potato refuses a config without one; the annotate page heads
the scheme's widgets with it). Every door that takes a config in (the
``create_project`` command, the admin's form, the API, ``project_config_update``)
parses it with ``parse_config``; only a project's own saved text, read back by
``project_config``, is read with ``saved=True``, which lets a project saved
before the rule keep working (its page falls back to the scheme's name) until its
config is next edited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from annotation.bounded_yaml import load_yaml
from annotation.models import Project
from annotation.problems import Problem, Problems, ProblemsError, describe, join
from annotation.projects.quality_config import QualityConfig, parse_quality
from annotation.projects.suggestion_config import SuggestionConfig, judge_account_check, parse_suggestions
from annotation.projects.workflow_config import WorkflowConfig, parse_workflow
from annotation.schemes import SCHEMES, Scheme

ORDERS = ("sequential", "random", "fewest_annotations_first")
# Potato's assignment strategies that mean one of our orders.
POTATO_STRATEGIES = {
    "fixed_order": "sequential",
    "ordered": "sequential",
    "sequential": "sequential",
    "random": "random",
    "least_annotated": "fewest_annotations_first",
    "fewest_annotations_first": "fewest_annotations_first",
}
# Top-level Potato keys about running Potato itself.
POTATO_IGNORED = frozenset(
    {
        "port",
        "server",
        "server_name",
        "task_dir",
        "data_files",
        "output_annotation_dir",
        "output_annotation_format",
        "annotation_codebook_url",
        "user_config",
        "login",
        "jumping_to_id_disabled",
        "hide_navbar",
        "database",
        "automatic_assignment",
        "html_layout",
        "surveyflow_html_layout",
        "base_html_template",
        "header_file",
        "task_layout",
        "use_dedicated_layout",
        "site_dir",
        "site_file",
        "customjs",
        "customjs_hostname",
        "alert_time_each_instance",
        "ui",
        "horizontal_key_bindings",
        "sequential_key_binding",
        "surveyflow",
        "prestudy",
        "active_learning",
        "list_as_text",
        "keyword_highlights_file",
        "persist_sessions",
        "require_password",
        "secret_key",
        "debug",
        "annotation_codebook",
        "instance_display",
    }
)
OWN_KEYS = frozenset(
    {
        "annotation_schemes",
        "item_properties",
        "assignment",
        "instructions",
        "annotation_task_name",
        "workflow",
        "quality",
        "suggestions",
    }
)
POTATO_MAPPED = frozenset(
    {
        "assignment_strategy",
        "max_annotations_per_item",
        "max_annotations_per_user",
        # Potato's quality control, read into quality: (annotation.projects.quality_config).
        "gold_standards",
        "training",
    }
)
ITEM_PROPERTY_KEYS = frozenset({"id_key", "tree_key"})
ITEM_PROPERTY_IGNORED = frozenset({"text_key", "context_key", "kwargs"})
ASSIGNMENT_KEYS = frozenset({"annotations_per_item", "max_items_per_user", "order", "lease_minutes"})
ASSIGNMENT_POTATO = frozenset({"strategy", "max_annotations_per_item", "random_seed"})
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")


@dataclass(frozen=True)
class AssignmentConfig:
    annotations_per_item: int = 1
    max_items_per_user: int | None = None
    order: str = "sequential"
    lease_minutes: int = 60
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "annotations_per_item": self.annotations_per_item,
            "max_items_per_user": self.max_items_per_user,
            "order": self.order,
            "lease_minutes": self.lease_minutes,
            "seed": self.seed,
        }


@dataclass
class ProjectConfig:
    schemes: list[Scheme]
    id_key: str = "id"
    tree_key: str = "tree"
    assignment: AssignmentConfig = field(default_factory=AssignmentConfig)
    title: str = ""
    instructions: str = ""
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Open-Assistant's settings for projects in collect mode (``workflow:``; defaults when absent).
    workflow: WorkflowConfig = field(default_factory=WorkflowConfig)
    # Gold checks, flagging and the training phase (``quality:``; none when absent).
    quality: QualityConfig = field(default_factory=QualityConfig)
    # A judge's answers shown to annotators (``suggestions:``; none when absent).
    suggestions: SuggestionConfig = field(default_factory=SuggestionConfig)

    def scheme(self, name: str) -> Scheme:
        for scheme in self.schemes:
            if scheme.name == name:
                return scheme
        raise KeyError(name)

    def as_json(self) -> dict[str, Any]:
        """The normalised config stored on the project (and sent to pages)."""
        return {
            "annotation_schemes": [scheme.as_config() for scheme in self.schemes],
            "item_properties": {"id_key": self.id_key, "tree_key": self.tree_key},
            "assignment": self.assignment.as_dict(),
            "title": self.title,
            "instructions": self.instructions,
            "ignored": self.ignored,
            "notes": self.notes,
            "workflow": self.workflow.as_dict(),
            "quality": self.quality.as_dict(),
        } | ({"suggestions": self.suggestions.as_dict()} if self.suggestions.enabled else {})


# Why a scheme without a description is refused, in its problem.
DESCRIPTION_REQUIRED = "is required (Potato requires every scheme to have a description)"


def parse_config(text: str, *, saved: bool = False) -> ProjectConfig:
    """Validate a project's YAML; raises ProblemsError listing every problem.

    ``saved``: the text is a project's own, saved before, read back — rules added since
    (each scheme's ``description``) are not held against it.
    """
    return config_from_data(load_yaml(text), saved=saved)


def config_from_data(raw: Any, *, saved: bool = False) -> ProjectConfig:
    problems = Problems()
    if not isinstance(raw, Mapping):
        raise ProblemsError(
            [Problem("", f"the configuration must be a mapping of keys, got {describe(raw)}")]
        )
    problems.check_keys(raw, "", OWN_KEYS | POTATO_MAPPED, POTATO_IGNORED)
    # A collection project (a workflow: section) asks for no schemes: its tasks are its own.
    schemes = _schemes(
        raw.get("annotation_schemes"), problems, required="workflow" not in raw, described=not saved
    )
    workflow = parse_workflow(raw.get("workflow"), problems)
    id_key, tree_key = _item_properties(raw.get("item_properties"), problems)
    notes: list[str] = []
    assignment = _assignment(raw, problems, notes)
    quality = parse_quality(raw, [scheme.name for scheme in schemes], problems, notes)
    suggestions = parse_suggestions(raw, problems)
    if not saved:
        judge_account_check(suggestions, problems)
    title = raw.get("annotation_task_name", "")
    if not isinstance(title, str):
        problems.add("annotation_task_name", f"must be a string, got {describe(title)}")
        title = ""
    instructions = raw.get("instructions", "")
    if not isinstance(instructions, str):
        problems.add("instructions", f"must be a string, got {describe(instructions)}")
        instructions = ""
    problems.raise_if_any()
    return ProjectConfig(
        schemes=schemes,
        id_key=id_key,
        tree_key=tree_key,
        assignment=assignment,
        title=title,
        instructions=instructions,
        ignored=sorted(problems.ignored),
        notes=notes,
        workflow=workflow,
        quality=quality,
        suggestions=suggestions,
    )


def _schemes(raw: Any, problems: Problems, *, required: bool = True, described: bool = True) -> list[Scheme]:
    """The schemes, each checked by its type; ``described``: each must have a description."""
    if raw is None:
        if required:
            problems.add("annotation_schemes", "is required (a list of schemes)")
        return []
    if not isinstance(raw, list) or not raw:
        problems.add("annotation_schemes", f"must be a non-empty list of schemes, got {describe(raw)}")
        return []
    schemes: list[Scheme] = []
    names: dict[str, str] = {}
    for index, entry in enumerate(raw):
        path = join("annotation_schemes", index)
        if not isinstance(entry, Mapping):
            problems.add(path, f"must be a mapping with an annotation_type and a name, got {describe(entry)}")
            continue
        if described and "description" not in entry:
            problems.add(join(path, "description"), DESCRIPTION_REQUIRED)
        kind = entry.get("annotation_type")
        if kind is None:
            problems.add(join(path, "annotation_type"), f"is required (one of {', '.join(sorted(SCHEMES))})")
            continue
        if not isinstance(kind, str):
            problems.add(
                join(path, "annotation_type"),
                f"must be the name of a type (one of {', '.join(sorted(SCHEMES))}), got {describe(kind)}",
            )
            continue
        cls = SCHEMES.get(kind)
        if cls is None:
            from annotation.problems import nearest

            suggestion = nearest(str(kind), SCHEMES)
            hint = f'; did you mean "{suggestion}"?' if suggestion else ""
            problems.add(
                join(path, "annotation_type"),
                f'unknown type "{kind}" (expected one of {", ".join(sorted(SCHEMES))}{hint})',
            )
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            problems.add(join(path, "name"), "is required: letters, digits, _ and - (it names the answers)")
            continue
        if name in names:
            problems.add(join(path, "name"), f'"{name}" is already the name of {names[name]}')
            continue
        names[name] = path
        schemes.append(cls.from_config(entry, path, problems, name=name))
    return schemes


def _item_properties(raw: Any, problems: Problems) -> tuple[str, str]:
    if raw is None:
        return "id", "tree"
    if not isinstance(raw, Mapping):
        problems.add("item_properties", f"must be a mapping, got {describe(raw)}")
        return "id", "tree"
    problems.check_keys(raw, "item_properties", ITEM_PROPERTY_KEYS, ITEM_PROPERTY_IGNORED)
    keys = []
    for key, default in (("id_key", "id"), ("tree_key", "tree")):
        value = raw.get(key, default)
        if not isinstance(value, str) or not value:
            problems.add(join("item_properties", key), "must be a non-empty string")
            value = default
        keys.append(value)
    return keys[0], keys[1]


def _positive(value: Any, path: str, problems: Problems, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        problems.add(path, "must be an integer ≥ 1" + (" (or null for no limit)" if allow_none else ""))
        return None
    return value


def _order(value: Any, path: str, problems: Problems) -> str | None:
    if value in ORDERS:
        return value
    mapped = POTATO_STRATEGIES.get(value) if isinstance(value, str) else None
    if mapped is None:
        shown = f'"{value}"' if isinstance(value, str) else describe(value)
        problems.add(
            path,
            f"{shown} is not supported "
            f"(expected {', '.join(ORDERS)}, or Potato's fixed_order, random, least_annotated)",
        )
    return mapped


def _assignment(raw: Mapping[str, Any], problems: Problems, notes: list[str]) -> AssignmentConfig:
    values: dict[str, Any] = {}
    # Potato's top-level assignment keys first; ours (under assignment:) win.
    if "assignment_strategy" in raw:
        order = _order(raw["assignment_strategy"], "assignment_strategy", problems)
        if order:
            values["order"] = order
            notes.append(f'assignment_strategy: read as assignment.order "{order}"')
    if "max_annotations_per_item" in raw:
        value = _positive(raw["max_annotations_per_item"], "max_annotations_per_item", problems)
        if value:
            values["annotations_per_item"] = value
            notes.append(f"max_annotations_per_item: read as assignment.annotations_per_item {value}")
    if "max_annotations_per_user" in raw:
        value = _positive(raw["max_annotations_per_user"], "max_annotations_per_user", problems)
        if value:
            values["max_items_per_user"] = value
            notes.append(f"max_annotations_per_user: read as assignment.max_items_per_user {value}")
    section = raw.get("assignment")
    if section is not None:
        if not isinstance(section, Mapping):
            problems.add("assignment", f"must be a mapping, got {describe(section)}")
        else:
            problems.check_keys(section, "assignment", ASSIGNMENT_KEYS | ASSIGNMENT_POTATO)
            if "strategy" in section and "order" in section:
                problems.add("assignment.strategy", "give either order or Potato's strategy, not both")
            for key in ("order", "strategy"):
                if key in section:
                    order = _order(section[key], join("assignment", key), problems)
                    if order:
                        values["order"] = order
            for key, target in (
                ("annotations_per_item", "annotations_per_item"),
                ("max_annotations_per_item", "annotations_per_item"),
            ):
                if key in section:
                    value = _positive(section[key], join("assignment", key), problems)
                    if value:
                        values[target] = value
            if "max_items_per_user" in section:
                values["max_items_per_user"] = _positive(
                    section["max_items_per_user"], "assignment.max_items_per_user", problems, allow_none=True
                )
            if "lease_minutes" in section:
                value = _positive(section["lease_minutes"], "assignment.lease_minutes", problems)
                if value:
                    values["lease_minutes"] = value
            if "random_seed" in section:
                seed = section["random_seed"]
                if isinstance(seed, bool) or not isinstance(seed, int):
                    problems.add("assignment.random_seed", "must be an integer")
                else:
                    values["seed"] = seed
    return AssignmentConfig(**values)


def project_config(project: Project) -> ProjectConfig:
    """The project's parsed configuration."""
    return _parsed(project.config_yaml)


@lru_cache(maxsize=128)
def _parsed(config_yaml: str) -> ProjectConfig:
    # Keyed by the text itself, so an edited config is simply another entry. The text was
    # accepted when it was saved: rules added since do not break the project's pages.
    return parse_config(config_yaml, saved=True)
