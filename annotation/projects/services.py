"""Creating projects, changing their configuration and their members."""

from __future__ import annotations

import random
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.models import Membership, Project, ProjectItem
from annotation.projects.config import parse_config, project_config
from annotation.projects.counts import project_counts_forget
from annotation.projects.references import imported_spans_sync
from annotation.projects.usernames import username_check
from trees.audit import audit_record
from trees.models import ConversationTree, Dataset


@transaction.atomic
def project_create(
    *,
    name: str,
    dataset: Dataset,
    config_yaml: str,
    title: str = "",
    instructions: str = "",
    mode: str = Project.Mode.ANNOTATE,
) -> Project:
    """Create a project over ``dataset``; raises ProblemsError when the config is bad
    and ValidationError when the name cannot be used in URLs."""
    Project._meta.get_field("name").run_validators(name)
    config = parse_config(config_yaml)
    project = Project.objects.create(
        name=name,
        dataset=dataset,
        config_yaml=config_yaml,
        config=config.as_json(),
        title=title or config.title,
        instructions=instructions or config.instructions,
        mode=mode,
    )
    project_items_sync(project)
    imported_spans_sync(project=project, config=config)
    audit_record(
        "project.create",
        target=project,
        scope=project.name,
        details={"dataset": dataset.name, "mode": mode, "schemes": [s.name for s in config.schemes]},
    )
    return project


@transaction.atomic
def project_update(*, project: Project, fields: list[str]) -> Project:
    """Save the ``fields`` of ``project`` its form changed (not the config: ``project_config_update``)."""
    if fields:
        project.save(update_fields=[*fields, "updated_at"])
        audit_record("project.update", target=project, scope=project.name, details={"fields": fields})
    return project


@transaction.atomic
def project_config_update(*, project: Project, config_yaml: str) -> Project:
    """Check and save a new configuration; logged with what it changed, when it changed anything."""
    config = parse_config(config_yaml)
    before_yaml, before = project.config_yaml, project.config
    project.config_yaml = config_yaml
    project.config = config.as_json()
    project.save(update_fields=["config_yaml", "config", "updated_at"])
    overlap = config.assignment.annotations_per_item
    if overlap != before.get("assignment", {}).get("annotations_per_item"):
        ProjectItem.objects.filter(project=project).fullness_sync(overlap)
        project_counts_forget(project.pk)
    # A scheme that now imports a corpus's spans gets them.
    imported_spans_sync(project=project, config=config)
    changes = _config_changes(before, project.config)
    if changes or before_yaml != config_yaml:
        audit_record("project.config_update", target=project, scope=project.name, details=changes)
    return project


def _config_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[str]]:
    """What a new configuration changed, by name: the schemes added, removed and changed,
    and the other top-level keys whose value changed (only the non-empty lists)."""
    old = {scheme.get("name"): scheme for scheme in before.get("annotation_schemes", [])}
    new = {scheme.get("name"): scheme for scheme in after.get("annotation_schemes", [])}
    changes = {
        "schemes_added": [str(name) for name in new if name not in old],
        "schemes_removed": [str(name) for name in old if name not in new],
        "schemes_changed": [str(name) for name in new if name in old and new[name] != old[name]],
        "keys_changed": sorted(
            key
            for key in set(before) | set(after)
            if key != "annotation_schemes" and before.get(key) != after.get(key)
        ),
    }
    return {key: names for key, names in changes.items() if names}


def project_items_sync(project: Project) -> int:
    """Make every tree of the project's dataset an item of the project; returns how many were added."""
    have = set(ProjectItem.objects.filter(project=project).values_list("tree_id", flat=True))
    missing = [
        tree_id
        for tree_id in ConversationTree.objects.filter(dataset_id=project.dataset_id)
        .order_by("pk")
        .values_list("pk", flat=True)
        if tree_id not in have
    ]
    seed = project_config(project).assignment.seed
    rng = random.Random(f"{project.pk}:{seed}" if seed is not None else None)
    ProjectItem.objects.bulk_create(
        [ProjectItem(project=project, tree_id=tree_id, shuffle_key=rng.random()) for tree_id in missing],
        batch_size=2000,
        ignore_conflicts=True,
    )
    project_counts_forget(project.pk)
    return len(missing)


@transaction.atomic
def membership_add(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    """Give ``user`` ``role`` in ``project`` (logged when they did not have it)."""
    if role not in Membership.Role.values:
        raise ValueError(f'unknown role "{role}" (expected {", ".join(Membership.Role.values)})')
    membership, created = Membership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        audit_record("membership.add", target=user, scope=project.name, details={"role": role})
    return membership


@transaction.atomic
def membership_remove(*, project: Project, user: AbstractBaseUser, role: str) -> int:
    """Take ``role`` in ``project`` from ``user`` (logged when they had it); returns rows deleted."""
    deleted, _ = Membership.objects.filter(project=project, user=user, role=role).delete()
    if deleted:
        audit_record("membership.remove", target=user, scope=project.name, details={"role": role})
    return deleted


def user_get_or_create_unusable(username: str) -> tuple[AbstractBaseUser, bool]:
    """An account for someone known only by name (imported judgements): it cannot log in.

    Only the exact name finds an account. A name too like another account's (``Root`` when
    ``root`` exists) is refused with ValidationError rather than mapped to it: the look-alike
    may be someone else, or someone posing as them (``annotation.projects.usernames``).
    """
    User = get_user_model()
    try:
        return User.objects.get(username=username), False
    except User.DoesNotExist:
        username_check(username)
        user = User(username=username)
        user.set_unusable_password()
        user.save()
        return user, True
