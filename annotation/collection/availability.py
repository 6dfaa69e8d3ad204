"""Which task each person may get: the candidates of every task type, and their counts.

Open-Assistant's queries (``tree_manager.py``: ``query_prompts_need_review``,
``query_replies_need_review``, ``query_extendible_parents``,
``query_incomplete_rankings`` and the prompt lottery's count) with one
change that removes its races: a task handed out and not expired counts as
if it were done. A parent with two replies and one reply task out has no
room left under ``max_children_count`` 3; a message with two reviews and one
label task out needs no fourth reviewer.

For one person the candidates leave out their own messages, what they
already did, what they hold, and what they skipped with "don't show me this
again". Every query is scoped by tree, so it reads the project's active
trees only (the prompt review queue, the growing trees, the trees in
ranking), whatever the project's history.

``holder`` names a task whose own place should not count against it: a
submission whose lease ran out asks whether its place is still free (an
expired lease counts for nobody, so a prompt's place needs no such care).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from annotation.collection.models import CollectedTree, Task
from annotation.models import Project
from annotation.projects.workflow_config import WorkflowConfig
from trees.models import ConversationTree, Message
from trees.vocabulary import (
    ASSISTANT,
    GROWING,
    INITIAL_PROMPT_REVIEW,
    PROMPT_LOTTERY_WAITING,
    RANKING,
    USER,
)

T = Task.Type
LEASED, DONE, SKIPPED = Task.Status.LEASED, Task.Status.DONE, Task.Status.SKIPPED

# Categories of work, as Open-Assistant draws them for "random", with its weights.
PROMPT, LABEL_PROMPT, REPLY, LABEL_REPLY, RANK = "prompt", "label_prompt", "reply", "label_reply", "rank"
RANDOM_WEIGHTS = {RANK: 10.0, LABEL_REPLY: 5.0, LABEL_PROMPT: 5.0, REPLY: 2.0, PROMPT: 0.01}
RANDOM = "random"


@dataclass(frozen=True)
class Kind:
    """What a task type works on: its category and the role of its target message
    (the message labelled; for replies and rankings, the parent)."""

    category: str
    target_role: str | None


KINDS: dict[str, Kind] = {
    T.INITIAL_PROMPT: Kind(PROMPT, None),
    T.LABEL_INITIAL_PROMPT: Kind(LABEL_PROMPT, USER),
    T.ASSISTANT_REPLY: Kind(REPLY, USER),
    T.LABEL_ASSISTANT_REPLY: Kind(LABEL_REPLY, ASSISTANT),
    T.PROMPTER_REPLY: Kind(REPLY, ASSISTANT),
    T.LABEL_PROMPTER_REPLY: Kind(LABEL_REPLY, USER),
    T.RANK_ASSISTANT_REPLIES: Kind(RANK, USER),
    T.RANK_PROMPTER_REPLIES: Kind(RANK, ASSISTANT),
}
TYPE_OF = {(kind.category, kind.target_role): task_type for task_type, kind in KINDS.items()}
TYPES_OF = {
    category: tuple(task_type for task_type, kind in KINDS.items() if kind.category == category)
    for category in RANDOM_WEIGHTS
}
TASK_TYPES = (RANDOM, *KINDS)
REPLY_ROLE = {USER: ASSISTANT, ASSISTANT: USER}  # the role of a reply to a message of that role


@dataclass(frozen=True)
class Candidate:
    """A target some task could be handed out on."""

    pk: int  # the message
    tree_id: int
    role: str
    children: int = 0  # replies: the parent's countable children (Open-Assistant's active_children_count)


@dataclass
class Availability:
    """Everything one person could be handed right now, by category."""

    prompts: int
    by_category: dict[str, list[Candidate]] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Tasks available per type, and ``random``: their sum (Open-Assistant's availability)."""
        counts = {RANDOM: 0}
        for task_type, kind in KINDS.items():
            if kind.category == PROMPT:
                count = self.prompts
            else:
                count = sum(1 for c in self.by_category.get(kind.category, ()) if c.role == kind.target_role)
            counts[task_type] = count
            counts[RANDOM] += count
        return counts

    def has_work(self, category: str) -> bool:
        return self.prompts > 0 if category == PROMPT else bool(self.by_category.get(category))


# The states a tree is worked on in (or waits in for the lottery): few trees at any time,
# whatever the project's history — every candidate query starts from them.
WORKING_STATES = (INITIAL_PROMPT_REVIEW, PROMPT_LOTTERY_WAITING, GROWING, RANKING)


@dataclass(frozen=True)
class ProjectCounts:
    """The project's trees in each working state, and its prompt tasks out."""

    trees: dict[str, tuple[int, ...]]
    prompt_tasks_out: int = 0

    def get(self, state: str) -> int:
        return len(self.trees.get(state, ()))

    def ids(self, state: str) -> tuple[int, ...]:
        return self.trees.get(state, ())


def project_counts(project: Project, now: datetime) -> ProjectCounts:
    """The project's trees in the working states and its prompt tasks out (one query, through the
    index on the trees' state: the trees finished long ago are not read)."""
    quote = connection.ops.quote_name
    states = ", ".join(["%s"] * len(WORKING_STATES))
    with connection.cursor() as cursor:
        # CROSS JOIN makes SQLite start from the trees' state index, not from every tree of the project.
        cursor.execute(
            f"SELECT t.state, t.id FROM {quote(ConversationTree._meta.db_table)} t"
            f" CROSS JOIN {quote(CollectedTree._meta.db_table)} c"
            f" WHERE t.state IN ({states}) AND c.tree_id = t.id AND c.project_id = %s"
            f" UNION ALL SELECT NULL, COUNT(*) FROM {quote(Task._meta.db_table)} k"
            " WHERE k.project_id = %s AND k.type = %s AND k.status = %s AND k.expires_at > %s",
            [
                *WORKING_STATES,
                project.pk,
                project.pk,
                T.INITIAL_PROMPT,
                LEASED,
                connection.ops.adapt_datetimefield_value(now),
            ],
        )
        rows = cursor.fetchall()
    trees: dict[str, list[int]] = {}
    for state, value in rows:
        if state is not None:
            trees.setdefault(state, []).append(value)
    return ProjectCounts(
        trees={state: tuple(sorted(ids)) for state, ids in trees.items()},
        prompt_tasks_out=sum(value for state, value in rows if state is None),
    )


def prompt_room(config: WorkflowConfig, counts: ProjectCounts) -> int:
    """How many initial prompts are wanted: Open-Assistant's lottery count, less the prompt tasks out.

    ``min(missing growing trees + room in the prompt review, room in the lottery)``.
    """
    missing_growing = max(0, config.max_active_trees - counts.get(GROWING))
    review_room = max(0, config.max_initial_prompt_review - counts.get(INITIAL_PROMPT_REVIEW))
    lottery_room = max(0, config.max_prompt_lottery_waiting - counts.get(PROMPT_LOTTERY_WAITING))
    return max(0, min(missing_growing + review_room, lottery_room) - counts.prompt_tasks_out)


# The candidate queries are plain SQL: built through the ORM, their correlated
# subqueries cost ten times more to compile than to run, on every hand-out.


class _Query:
    """A candidate query's parameters, named, with the tables it reads."""

    def __init__(self, project: Project, user: AbstractBaseUser, now: datetime, holder: Task | None):
        quote = connection.ops.quote_name
        self.tables = {
            "message": quote(Message._meta.db_table),
            "tree": quote(ConversationTree._meta.db_table),
            "collected": quote(CollectedTree._meta.db_table),
            "task": quote(Task._meta.db_table),
        }
        self.params: dict[str, Any] = {
            "project": project.pk,
            "user": user.pk,
            "now": connection.ops.adapt_datetimefield_value(now),
            "holder": holder.pk if holder is not None else -1,
            "true": True,
            "false": False,
            "leased": LEASED,
            "done": DONE,
            "skipped": SKIPPED,
        }

    def values(self, name: str, values: tuple[str, ...] | list[str]) -> str:
        """Placeholders for a list of values (``IN (...)``)."""
        names = []
        for index, value in enumerate(values):
            self.params[f"{name}{index}"] = value
            names.append(f"%({name}{index})s")
        return ", ".join(names)

    def scope(self, state: str, lang: str | None, target: int | None, trees: Sequence[int] | None) -> str:
        """The project's trees in ``state`` (of ``lang``); only one target message, or only the
        messages of ``trees`` (the ids the query starts from, so that its cost does not grow
        with the project's finished trees)."""
        self.params["state"] = state
        sql = "c.project_id = %(project)s AND t.state = %(state)s"
        if lang:
            self.params["lang"] = lang
            sql += " AND c.lang = %(lang)s"
        if target is not None:
            self.params["target"] = target
            sql += " AND m.id = %(target)s"
        elif trees is not None:
            sql += f" AND m.tree_id IN ({self.values('tree', list(trees))})"
        return sql

    def run(self, sql: str) -> list[Candidate]:
        with connection.cursor() as cursor:
            cursor.execute(sql.format(**self.tables), self.params)
            return [Candidate(*row) for row in cursor.fetchall()]


def _out(types: str, on: str = "k.message_id = m.id") -> str:
    """SQL counting the tasks of ``types`` out (leased, not expired) on the outer message."""
    return (
        f"(SELECT COUNT(*) FROM {{task}} k WHERE {on} AND k.type IN ({types}) AND k.status = %(leased)s"
        " AND k.expires_at > %(now)s AND k.id <> %(holder)s)"
    )


def _mine(types: str, *, done: bool) -> str:
    """SQL for "the person holds, did, or skipped for good a task of ``types`` on the outer message"."""
    statuses = "%(leased)s, %(done)s" if done else "%(leased)s"
    return (
        f"EXISTS (SELECT 1 FROM {{task}} k WHERE k.message_id = m.id AND k.user_id = %(user)s"
        f" AND k.type IN ({types}) AND k.id <> %(holder)s"
        f" AND (k.status IN ({statuses}) OR (k.status = %(skipped)s AND k.dont_show_again = %(true)s)))"
    )


def label_candidates(
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    *,
    root: bool,
    role: str | None = None,
    lang: str | None = None,
    holder: Task | None = None,
    target: int | None = None,
    trees: Sequence[int] | None = None,
) -> list[Candidate]:
    """Messages awaiting review that ``user`` may review: prompts of trees in
    ``initial_prompt_review`` (``root``), or replies in growing trees.

    Reviews done and label tasks out together stay below the reviews required.
    """
    if trees is not None and not trees and target is None:
        return []
    query = _Query(project, user, now, holder)
    types = query.values("type", TYPES_OF[LABEL_PROMPT] + TYPES_OF[LABEL_REPLY])
    query.params["required"] = config.reviews_required(root=root)
    scope = query.scope(INITIAL_PROMPT_REVIEW if root else GROWING, lang, target, trees)
    if role is not None:
        query.params["role"] = role
        scope += " AND m.role = %(role)s"
    return query.run(
        "SELECT m.id, m.tree_id, m.role, 0 FROM {collected} c"
        " JOIN {tree} t ON t.id = c.tree_id JOIN {message} m ON m.tree_id = c.tree_id"
        f" WHERE {scope} AND m.parent_id IS {'' if root else 'NOT '}NULL"
        " AND m.deleted = %(false)s AND m.review_result IS NULL"
        " AND (m.author_id IS NULL OR m.author_id <> %(user)s)"
        f" AND COALESCE(m.review_count, 0) + {_out(types)} < %(required)s"
        f" AND NOT {_mine(types, done=True)}"
        " ORDER BY m.id"
    )


# Children that count against max_children_count, and messages against the goal size:
# not deleted, not rejected.
_COUNTED = (
    "{alias}.deleted = %(false)s AND ({alias}.review_result IS NULL OR {alias}.review_result = %(true)s)"
)


def reply_candidates(
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    *,
    parent_role: str | None = None,
    lang: str | None = None,
    holder: Task | None = None,
    target: int | None = None,
    trees: Sequence[int] | None = None,
) -> list[Candidate]:
    """Accepted messages of growing trees that can take another reply from ``user``.

    In trees whose countable messages and reply tasks out are below their
    goal size; below the tree's depth; below ``max_children_count`` replies
    counting the reply tasks out (an assistant message takes only
    ``num_prompter_replies``). Not a parent the user already replied to.
    Each candidate carries its countable children.
    """
    if trees is not None and not trees and target is None:
        return []
    query = _Query(project, user, now, holder)
    types = query.values("type", TYPES_OF[REPLY])
    query.params["prompter_replies"] = config.num_prompter_replies
    query.params["user_role"] = USER
    scope = query.scope(GROWING, lang, target, trees)
    parents = "m.deleted = %(false)s AND m.review_result = %(true)s AND m.depth < c.max_depth"
    if parent_role is not None:
        query.params["role"] = parent_role
        parents += " AND m.role = %(role)s"
    return query.run(
        "SELECT id, tree_id, role, children FROM ("
        " SELECT m.id, m.tree_id, m.role, c.max_children_count,"
        "  (SELECT COUNT(*) FROM {message} ch WHERE ch.tree_id = m.tree_id AND ch.parent_id = m.id"
        f"   AND {_COUNTED.format(alias='ch')}) AS children,"
        f"  {_out(types)} AS held"
        " FROM {collected} c JOIN {tree} t ON t.id = c.tree_id JOIN {message} m ON m.tree_id = c.tree_id"
        f" WHERE {scope} AND {parents}"
        "  AND (SELECT COUNT(*) FROM {message} s WHERE s.tree_id = c.tree_id"
        f"   AND {_COUNTED.format(alias='s')}) + {_out(types, on='k.tree_id = c.tree_id')}"
        "   < c.goal_tree_size"
        # The unary + keeps SQLite from reading this through the authors' index (all a person ever
        # wrote); the siblings are found through the tree's.
        "  AND NOT EXISTS (SELECT 1 FROM {message} mine WHERE mine.tree_id = m.tree_id"
        "   AND mine.parent_id = m.id AND +mine.author_id = %(user)s AND mine.deleted = %(false)s)"
        f"  AND NOT {_mine(types, done=False)}"
        ") p"
        " WHERE children + held < max_children_count"
        " AND (role = %(user_role)s OR children + held < %(prompter_replies)s)"
        " ORDER BY id"
    )


def rank_candidates(
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    *,
    parent_role: str | None = None,
    lang: str | None = None,
    holder: Task | None = None,
    target: int | None = None,
    trees: Sequence[int] | None = None,
) -> list[Candidate]:
    """Parents in trees being ranked whose accepted replies (two or more) need more rankings.

    Rankings done and ranking tasks out together stay below
    ``num_required_rankings``; nobody ranks replies among which is their own.
    Prompter replies are ranked only with ``rank_prompter_replies``.
    """
    roles = [USER, ASSISTANT] if config.rank_prompter_replies else [USER]
    if parent_role is not None:
        roles = [role for role in roles if role == parent_role]
    if not roles or (trees is not None and not trees and target is None):
        return []
    query = _Query(project, user, now, holder)
    types = query.values("type", TYPES_OF[RANK])
    query.params["required"] = config.num_required_rankings
    scope = query.scope(RANKING, lang, target, trees)
    replies = (
        "FROM {message} r WHERE r.tree_id = m.tree_id AND r.parent_id = m.id"
        " AND r.review_result = %(true)s AND r.deleted = %(false)s"
    )
    return query.run(
        "SELECT id, tree_id, role, 0 FROM ("
        f" SELECT m.id, m.tree_id, m.role, (SELECT COUNT(*) {replies}) AS replies,"
        "  (SELECT COUNT(*) FROM {task} k WHERE k.message_id = m.id"
        f"   AND k.type IN ({types}) AND k.status = %(done)s) + {_out(types)} AS taken"
        " FROM {collected} c JOIN {tree} t ON t.id = c.tree_id JOIN {message} m ON m.tree_id = c.tree_id"
        f" WHERE {scope} AND m.deleted = %(false)s AND m.role IN ({query.values('role', roles)})"
        f"  AND NOT EXISTS (SELECT 1 {replies} AND +r.author_id = %(user)s)"  # + as in reply_candidates
        f"  AND NOT {_mine(types, done=True)}"
        ") p WHERE replies >= 2 AND taken < %(required)s ORDER BY id"
    )


def availability(
    *,
    project: Project,
    user: AbstractBaseUser,
    config: WorkflowConfig,
    now: datetime,
    lang: str | None = None,
    categories: tuple[str, ...] = tuple(RANDOM_WEIGHTS),
    counts: ProjectCounts | None = None,
) -> Availability:
    """What ``user`` could be handed now, for ``categories``: one query each, over the trees
    in the state the category works on (none when there are no such trees)."""
    counts = counts or project_counts(project, now)
    result = Availability(prompts=0)
    if PROMPT in categories:
        result.prompts = prompt_room(config, counts)
    if LABEL_PROMPT in categories:
        result.by_category[LABEL_PROMPT] = label_candidates(
            project, user, config, now, root=True, lang=lang, trees=counts.ids(INITIAL_PROMPT_REVIEW)
        )
    if LABEL_REPLY in categories:
        result.by_category[LABEL_REPLY] = label_candidates(
            project, user, config, now, root=False, lang=lang, trees=counts.ids(GROWING)
        )
    if REPLY in categories:
        result.by_category[REPLY] = reply_candidates(
            project, user, config, now, lang=lang, trees=counts.ids(GROWING)
        )
    if RANK in categories:
        result.by_category[RANK] = rank_candidates(
            project, user, config, now, lang=lang, trees=counts.ids(RANKING)
        )
    return result
