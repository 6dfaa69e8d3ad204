"""Who may do what in a project: every permission check goes through here.

Roles come from ``Membership``; superusers may manage every project but only
annotate where they are annotators, like everyone else.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet

from annotation.models import Annotation, Membership, Project
from annotation.recent import Recent
from trees import sql
from trees.formats.records import TreeRecord
from trees.markdown import message_html
from trees.models import ConversationTree, Dataset
from trees.selectors import OutlineRow

MANAGER = Membership.Role.MANAGER
ANNOTATOR = Membership.Role.ANNOTATOR
REVIEWER = Membership.Role.REVIEWER

User = AbstractBaseUser | AnonymousUser


def roles_in(user: User, project: Project) -> frozenset[str]:
    """The user's roles in ``project`` (one query, remembered on the user object)."""
    return _roles_in_project(user, project.pk)


def _roles_in_project(user: User, project_id: int) -> frozenset[str]:
    if not user.is_authenticated:
        return frozenset()
    cache: dict[int, frozenset[str]] = user.__dict__.setdefault("_branchpoint_roles", {})
    if project_id not in cache:
        cache[project_id] = frozenset(
            Membership.objects.filter(project_id=project_id, user=user).values_list("role", flat=True)
        )
    return cache[project_id]


# Projects lately read with a user's roles in them, by (user, name) (``annotation.recent``).
_recent: Recent[tuple[int, str], tuple[Project, frozenset[str]]] = Recent()


def project_with_roles(user: User, name: str) -> Project | None:
    """The project called ``name`` with ``user``'s roles in it remembered: as read a moment
    ago (``annotation.recent``), or now in one statement written out (``trees.sql``), a row
    per role joined to the project. Every project-scoped API call starts with it."""
    if not user.is_authenticated:
        return Project.objects.filter(name=name).first()
    kept = _recent.get((user.pk, name))
    if kept is None:
        project, roles = _project_with_roles_read(user, name)
        if project is None:
            return None
        _recent.keep((user.pk, name), (copy.copy(project), roles))
    else:
        project, roles = copy.copy(kept[0]), kept[1]
    user.__dict__.setdefault("_branchpoint_roles", {})[project.pk] = roles
    return project


def projects_forget() -> None:
    """Forget the projects and roles this process read lately: they changed."""
    _recent.forget_all()


def _project_with_roles_read(user: User, name: str) -> tuple[Project | None, frozenset[str]]:
    project_columns = sql.columns(Project, "project")
    rows = sql.fetch_all(
        f"SELECT {project_columns.sql}, member.role FROM {sql.table(Project)} project "
        f"LEFT JOIN {sql.table(Membership)} member ON member.project_id = project.id AND member.user_id = %s "
        "WHERE project.name = %s",
        [user.pk, name],
    )
    if not rows:
        return None, frozenset()
    return project_columns.load(rows[0]), frozenset(row[-1] for row in rows if row[-1] is not None)


def roles_remember(user: User, projects: Iterable[Project]) -> None:
    """Look up the user's roles in many projects in one query, for pages that list projects.

    Later checks on those projects (``can_annotate`` and the rest) then cost nothing.
    """
    if not user.is_authenticated:
        return
    cache: dict[int, frozenset[str]] = user.__dict__.setdefault("_branchpoint_roles", {})
    wanted = {project.pk for project in projects if project.pk not in cache}
    if not wanted:
        return
    found: dict[int, set[str]] = {pk: set() for pk in wanted}
    for project_id, role in Membership.objects.filter(project_id__in=wanted, user=user).values_list(
        "project_id", "role"
    ):
        found[project_id].add(role)
    cache.update({pk: frozenset(roles) for pk, roles in found.items()})


def forget_roles(user: User) -> None:
    """Drop remembered roles (after memberships change within one request)."""
    user.__dict__.pop("_branchpoint_roles", None)


def is_admin(user: User) -> bool:
    return bool(user.is_authenticated and user.is_superuser)


def can_view_project(user: User, project: Project) -> bool:
    return is_admin(user) or bool(roles_in(user, project))


def can_annotate(user: User, project: Project) -> bool:
    return ANNOTATOR in roles_in(user, project)


def can_review(user: User, project: Project) -> bool:
    return is_admin(user) or bool({MANAGER, REVIEWER} & roles_in(user, project))


def can_manage(user: User, project: Project) -> bool:
    return is_admin(user) or MANAGER in roles_in(user, project)


def can_see_all_annotations(user: User, project: Project) -> bool:
    """Managers and reviewers see everyone's answers; annotators only their own."""
    return can_review(user, project)


def visible_projects(user: User) -> QuerySet[Project]:
    if is_admin(user):
        return Project.objects.all()
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(memberships__user=user).distinct()


def can_create_project(user: User) -> bool:
    return is_admin(user) or _staff_with(user, "annotation.add_project")


def can_view_members(user: User, project: Project) -> bool:
    return can_review(user, project)


def can_export(user: User, project: Project) -> bool:
    """Exports hold everyone's answers: for those who may see them all."""
    return can_see_all_annotations(user, project)


def can_import_annotations(user: User, project: Project) -> bool:
    """An import writes answers in others' names (and adds them as annotators): managers only."""
    return can_manage(user, project)


def visible_annotations(user: User) -> QuerySet[Annotation]:
    """Annotations ``user`` may read: their own, and everyone's in projects they manage or review."""
    if is_admin(user):
        return Annotation.objects.all()
    if not user.is_authenticated:
        return Annotation.objects.none()
    reviewed = Membership.objects.filter(user=user, role__in=[MANAGER, REVIEWER]).values("project_id")
    return Annotation.objects.filter(Q(user=user) | Q(project_id__in=reviewed))


# -- datasets and their trees -----------------------------------------------------------
#
# Trees are not a project's: a dataset may serve several projects. Whoever may see
# every answer in a project (its managers and reviewers) may read its dataset; its
# annotators see trees only as the items handed to them. Making datasets is for admins
# and staff given the model permission. A tree added to a dataset becomes an item of
# every project over it, so adding trees is for admins, staff given the permission to
# add trees, and whoever manages every project over the dataset (a manager of one of
# them must not hand work to another's annotators; a dataset no project uses is staff's).
# Replacing trees changes what every project over them refers to, and deleting them
# takes answers with them: both need the admin's permissions (to change, to delete trees).


def _staff_with(user: User, permission: str) -> bool:
    return bool(user.is_authenticated and user.is_staff and user.has_perm(permission))


def _datasets_reviewed(user: User) -> QuerySet[Project]:
    roles = [MANAGER, REVIEWER]
    return Project.objects.filter(memberships__user=user, memberships__role__in=roles).values("dataset_id")


def visible_datasets(user: User) -> QuerySet[Dataset]:
    if is_admin(user) or _staff_with(user, "trees.view_dataset"):
        return Dataset.objects.all()
    if not user.is_authenticated:
        return Dataset.objects.none()
    return Dataset.objects.filter(pk__in=_datasets_reviewed(user))


def visible_trees(user: User) -> QuerySet[ConversationTree]:
    if is_admin(user) or _staff_with(user, "trees.view_dataset"):
        return ConversationTree.objects.all()
    if not user.is_authenticated:
        return ConversationTree.objects.none()
    return ConversationTree.objects.filter(dataset_id__in=_datasets_reviewed(user))


def can_create_dataset(user: User) -> bool:
    return is_admin(user) or _staff_with(user, "trees.add_dataset")


def can_import_trees(user: User, dataset: Dataset, *, replace: bool = False) -> bool:
    """Add trees to ``dataset`` (``replace``: replace trees it has). See the section's comment."""
    if is_admin(user):
        return True
    if replace:
        return _staff_with(user, "trees.change_conversationtree")
    if _staff_with(user, "trees.add_conversationtree"):
        return True
    return user.is_authenticated and _manages_every_project_over(user, dataset)


def _manages_every_project_over(user: User, dataset: Dataset) -> bool:
    """Whether ``user`` manages each project over ``dataset`` (and there is one): one query."""
    managed = Membership.objects.filter(user=user, role=MANAGER).values("project_id")
    counts = Project.objects.filter(dataset=dataset).aggregate(
        projects=Count("pk"), managed=Count("pk", filter=Q(pk__in=managed))
    )
    return counts["projects"] > 0 and counts["managed"] == counts["projects"]


# -- tree collection (annotation.collection) -------------------------------------------


def can_collect(user: User, project: Project) -> bool:
    """Annotators of a collect project write, review and rank through its tasks."""
    return project.mode == Project.Mode.COLLECT and can_annotate(user, project)


def can_moderate(user: User, project: Project) -> bool:
    """Managers and reviewers (and admins) halt and resume trees and delete messages."""
    return project.mode == Project.Mode.COLLECT and can_review(user, project)


def can_report(user: User, project: Project) -> bool:
    """Anyone taking part in a collect project may report (red-flag) a message."""
    return project.mode == Project.Mode.COLLECT and (can_annotate(user, project) or can_review(user, project))


# -- deleted messages -----------------------------------------------------------------
#
# A moderator's deletion (annotation.collection.moderation) hides a message: its text is
# for those who moderate where it was deleted — admins and the managers and reviewers of
# the collect project that grows the tree — and for no one else, whatever they read it
# through (the collection's tasks and trees, another project over the same dataset, the
# trees API, an export). They are shown ``DELETED_TEXT`` instead, which says neither
# what was written nor why it was deleted. A message that came deleted with an import
# (no project grows its tree) is hidden from annotators alike; the managers and reviewers
# of the project it is read through (and through its dataset, whoever may read that)
# see it as imported. The admin and the commands are operators' tools: they show it all.

DELETED_TEXT = "[deleted by a moderator]"
# What stands in for a deleted message's kept HTML (trees.markdown): hiding the text alone
# would leave it readable in its rendering.
DELETED_HTML = message_html(DELETED_TEXT)


class DeletedText:
    """What ``user`` (None: an operator, at the command line or in the admin) reads of deleted
    messages, reading through ``project`` (None: through the tree's dataset). Every path that
    shows a message's text asks ``text`` (or ``readable``) here.

    Costs nothing for trees without a deleted message (callers only ask about those), and
    then one query per tree (the project that grows it), remembered.
    """

    def __init__(self, user: User | None, project: Project | None = None):
        self.user = user
        self.project = project
        self._readable: dict[int, bool] = {}

    def readable(self, tree_id: int) -> bool:
        """Whether the deleted messages of tree ``tree_id`` are shown as they are."""
        if self.user is None or is_admin(self.user):
            return True
        if tree_id not in self._readable:
            # The collect project growing the tree, found through the collection's table by
            # its relation's name (``collected``): this module sits below that app.
            grower = (
                ConversationTree.objects.filter(pk=tree_id)
                .values_list("collected__project_id", flat=True)
                .first()
            )
            if grower is not None:
                readable = bool({MANAGER, REVIEWER} & _roles_in_project(self.user, grower))
            else:
                readable = self.project is None or can_review(self.user, self.project)
            self._readable[tree_id] = readable
        return self._readable[tree_id]

    def text(self, tree_id: int, text: str, deleted: bool) -> str:
        """``text`` if its message is not deleted or ``user`` may read it; else ``DELETED_TEXT``."""
        return text if not deleted or self.readable(tree_id) else DELETED_TEXT

    def html(self, tree_id: int, html: str, deleted: bool) -> str:
        """``html`` (a message's text rendered) if ``user`` may read the text; else ``DELETED_HTML``."""
        return html if not deleted or self.readable(tree_id) else DELETED_HTML

    def outline(self, tree_id: int, rows: list[OutlineRow]) -> list[OutlineRow]:
        """``rows`` (``trees.selectors.tree_outline``) with deleted messages' text as ``user`` may read it."""
        if not any(row.deleted for row in rows) or self.readable(tree_id):
            return rows
        hidden = {"text": DELETED_TEXT, "html": DELETED_HTML}
        return [dataclasses.replace(row, **hidden) if row.deleted else row for row in rows]

    def record(self, tree_id: int | Dataset, record: TreeRecord) -> TreeRecord:
        """``record`` with the text of its deleted messages as ``user`` may read it (changed in place).
        ``tree_id`` may be the tree's dataset instead: the tree is then found by its id in it (one
        query, for a tree with a deleted message only)."""
        if not any(message.deleted for message in record.messages):
            return record
        if isinstance(tree_id, Dataset):
            tree_id = ConversationTree.objects.get(dataset=tree_id, external_id=record.external_id).pk
        if not self.readable(tree_id):
            for message in record.messages:
                if message.deleted:
                    message.text = DELETED_TEXT
        return record
