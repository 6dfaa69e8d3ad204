"""Creating projects, changing their configuration and their members."""

from __future__ import annotations

import random
from functools import lru_cache

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.config import ProjectConfig, parse_config
from annotation.corpora import imported_spans_sync
from annotation.models import Membership, Project, ProjectItem
from trees.models import ConversationTree, Dataset


def project_config(project: Project) -> ProjectConfig:
    """The project's parsed configuration."""
    return _parsed(project.config_yaml)


@lru_cache(maxsize=128)
def _parsed(config_yaml: str) -> ProjectConfig:
    # Keyed by the text itself, so an edited config is simply another entry.
    return parse_config(config_yaml)


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
    return project


@transaction.atomic
def project_config_update(*, project: Project, config_yaml: str) -> Project:
    config = parse_config(config_yaml)
    project.config_yaml = config_yaml
    project.config = config.as_json()
    project.save(update_fields=["config_yaml", "config", "updated_at"])
    # A scheme that now imports a corpus's spans gets them.
    imported_spans_sync(project=project, config=config)
    return project


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
    return len(missing)


def membership_add(*, project: Project, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise ValueError(f'unknown role "{role}" (expected {", ".join(Membership.Role.values)})')
    membership, _ = Membership.objects.get_or_create(project=project, user=user, role=role)
    return membership


def membership_remove(*, project: Project, user: AbstractBaseUser, role: str) -> int:
    deleted, _ = Membership.objects.filter(project=project, user=user, role=role).delete()
    return deleted


def user_get_or_create_unusable(username: str) -> tuple[AbstractBaseUser, bool]:
    """An account for someone known only by name (imported judgements): it cannot log in."""
    User = get_user_model()
    try:
        return User.objects.get(username=username), False
    except User.DoesNotExist:
        user = User(username=username)
        user.set_unusable_password()
        user.save()
        return user, True
