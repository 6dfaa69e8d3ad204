"""Keeping projects in step with their datasets, what processes remember of projects,
members and tokens in step with their rows, and each account's username key
(``annotation.projects.usernames``) in step with its username; items made final by the
automatic rule as their submissions complete; and collection's finished trees told to the
webhooks (``annotation.webhooks``, which sits below collection)."""

from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from annotation import permissions
from annotation.api import tokens
from annotation.collection.states import tree_finished
from annotation.models import ApiToken, Membership, Project
from annotation.projects.config import project_config
from annotation.projects.references import imported_spans_sync
from annotation.projects.services import project_items_sync
from annotation.projects.usernames import username_check, username_key_keep
from annotation.review.finals import finals_auto
from annotation.webhooks.events import on_tree_finished
from annotation.work.signals import item_submitted
from trees.models import Dataset
from trees.signals import trees_imported
from trees.vocabulary import READY_FOR_EXPORT


@receiver(trees_imported)
def sync_project_items(sender: type, dataset: Dataset, replaced: list[int] = (), **kwargs: Any) -> None:
    """Trees imported into a dataset become items of every project over it, with
    the spans they were imported with for projects that take them (replaced
    trees get theirs anew: their messages, and so their spans, changed)."""
    for project in Project.objects.filter(dataset=dataset):
        project_items_sync(project)
        imported_spans_sync(project=project, config=project_config(project), refresh=replaced)


@receiver([post_save, post_delete], sender=Project)
@receiver([post_save, post_delete], sender=Membership)
def forget_projects(sender: type, **kwargs: Any) -> None:
    """A project or a membership changed: this process reads projects and roles anew at once
    (the others within ``API_AUTH_CACHE_SECONDS``, annotation.recent)."""
    permissions.projects_forget()


@receiver([post_save, post_delete], sender=ApiToken)
@receiver([post_save, post_delete], sender=settings.AUTH_USER_MODEL)
def forget_tokens(sender: type, **kwargs: Any) -> None:
    """A token or a user changed (revoked, deactivated, deleted): read anew at once here."""
    tokens.tokens_forget()


def _username_saved(update_fields: Any) -> bool:
    """Whether a save writes the username (a login's save of ``last_login`` alone does not)."""
    return update_fields is None or "username" in update_fields


@receiver(pre_save, sender=settings.AUTH_USER_MODEL)
def username_unlike_others(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """No account may take a username that looks like another's (``annotation.projects.usernames``):
    refused with its reason (ValidationError) before anything is written."""
    if not kwargs.get("raw") and _username_saved(update_fields):
        username_check(instance.get_username(), exclude=instance.pk)


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def username_key_kept(sender: type, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """Store the username's key, under its unique index: the database's own guarantee."""
    if not kwargs.get("raw") and _username_saved(update_fields):
        username_key_keep(instance)


@receiver(item_submitted)
def adjudicate_when_complete(sender: Project, tree_id: int, **kwargs: Any) -> None:
    """An item's submissions may be complete now: the automatic rule, when the project has one,
    makes it final if its annotators agree enough (``annotation.review.finals.finals_auto``)."""
    if project_config(sender).quality.adjudication.enabled:
        finals_auto(project=sender, tree_ids=[tree_id])


@receiver(tree_finished)
def collected_tree_ready(
    sender: type, project_id: int, state: str = "", tree_id: int = 0, external_id: str = "", **kwargs: Any
) -> None:
    """A collected tree reached ``ready_for_export``: the project's webhooks are told."""
    if state == READY_FOR_EXPORT:
        on_tree_finished(project_id, tree_id, external_id, state)
