"""What every annotation export reads: each annotator's answers for an item, with the tree's texts.

The one place exports touch the database. Items are read in pages of
``chunk_size`` trees, each page in a constant number of queries whatever the
trees' sizes or the number of annotators: the page's tree ids, then the
page's annotations (with the tree's and the user's names joined in), then —
only for formats that quote the conversation — the page's messages (or,
for formats that write whole trees back, the page's tree records). Pages
are keyed by tree id, not held open as a cursor, so a slow reader of a
streamed download keeps no transaction alive.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.permissions import DeletedText
from trees.formats.records import TreeRecord
from trees.models import ConversationTree, Message
from trees.store import tree_records

CHUNK_TREES = 500
DRAFT, SUBMITTED, SKIPPED = Annotation.Status.DRAFT, Annotation.Status.SUBMITTED, Annotation.Status.SKIPPED


@dataclass(frozen=True, slots=True)
class Node:
    """One message of a tree, as exports quote it."""

    parent: str | None
    role: str
    text: str
    position: int
    deleted: bool


@dataclass
class TreeText:
    """A tree's messages by external id, for quoting paths and finding siblings."""

    nodes: dict[str, Node] = field(default_factory=dict)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, str) and node in self.nodes

    def path_to(self, node: str) -> list[str] | None:
        """Node ids from the root down to ``node``; None when a node on the way is missing."""
        path: list[str] = []
        current: str | None = node
        while current is not None:
            message = self.nodes.get(current)
            if message is None or len(path) > len(self.nodes):  # missing, or a cycle
                return None
            path.append(current)
            current = message.parent
        path.reverse()
        return path

    @cached_property
    def order(self) -> dict[str, int]:
        """Each node's index in document order (parent first, siblings by position), iteratively."""
        children: dict[str | None, list[str]] = {}
        for node_id, node in self.nodes.items():
            children.setdefault(node.parent, []).append(node_id)
        for siblings in children.values():
            siblings.sort(key=lambda node_id: self.nodes[node_id].position)
        order: dict[str, int] = {}
        stack = list(reversed(children.get(None, [])))
        while stack:
            node_id = stack.pop()
            if node_id in order:
                continue
            order[node_id] = len(order)
            stack.extend(reversed(children.get(node_id, [])))
        return order

    def messages(self, path: list[str]) -> list[dict[str, str]]:
        """``[{role, content}]`` for the nodes of ``path``."""
        return [{"role": self.nodes[node].role, "content": self.nodes[node].text} for node in path]


@dataclass
class ItemAnnotations:
    """One annotator's answers for one item: the unit every export format works on."""

    tree: str  # the item's external id
    user: str  # the annotator's username
    status: str
    updated_at: datetime
    annotations: dict[str, Any]  # scheme name: payload
    text: TreeText | None = None
    # The whole tree (metadata too), for formats that write trees back (CCPE).
    record: TreeRecord | None = None
    # A final answer's (exports.final_rows): field: where it came from, and its version.
    provenance: dict[str, str] | None = None
    version: int | None = None
    # Each answer's ``Annotation.suggestion`` by scheme name: whether a judge's suggestion was
    # visible when it was made (written by formats only for projects with suggestions).
    suggestions: dict[str, str] = field(default_factory=dict)
    # Answered by a model judge (``Annotation.Source.MODEL``: its account is ``judge:<name>``),
    # which the formats that name the annotator say beside the name.
    by_model: bool = False


# How an answer made without any suggestion is written (``Annotation.Suggestion.NONE`` is "").
NO_SUGGESTION = "none"


def suggestion_written(item: ItemAnnotations, scheme: str) -> str:
    """The answer's suggestion mark as exports write it: ``none``, ``after``, ``after_seen``,
    ``before`` or ``before_taken`` (docs/formats.md)."""
    return item.suggestions.get(scheme) or NO_SUGGESTION


def item_status(statuses: Collection[str]) -> str:
    """The status of an item from its answers' statuses.

    Answers of one item share a status (a submit or a skip moves them all);
    should they ever differ — an answer written straight to the database,
    say — any draft makes the item work in progress.
    """
    if DRAFT in statuses:
        return DRAFT
    if SUBMITTED in statuses:
        return SUBMITTED
    return SKIPPED


def item_annotations(
    *,
    project: Project,
    statuses: Collection[str] | None = None,
    user: AbstractBaseUser | None = None,
    accepted_only: bool = False,
    include_gold: bool = False,
    reference: str = "exclude",
    with_text: bool = False,
    with_records: bool = False,
    shown: DeletedText | None = None,
    chunk_size: int = CHUNK_TREES,
) -> Iterator[ItemAnnotations]:
    """The project's answers grouped by item and annotator, in tree order then username.

    ``statuses`` keeps only annotations with those statuses (all when None),
    ``user`` only that annotator's, ``accepted_only`` only those of work a
    reviewer accepted (a correlated check on the assignment, through its
    unique index: no extra query), ``include_gold`` answers to gold items and
    gold or training answers too (left out by default), ``reference`` whether the corpus's
    reference answers are left out (``exclude``, the default), kept (``include``) or the only
    ones read (``only``). Two queries per ``chunk_size`` trees, three
    ``with_text`` (the messages' texts, for pairs and paths); ``with_records``
    adds the trees as records (``trees.store.tree_records``: two queries). Deleted messages' text
    is as ``shown`` lets the export's reader see it (None: an operator's export, all of it).
    """
    annotations = Annotation.objects.filter(project=project)
    if statuses is not None:
        annotations = annotations.filter(status__in=list(statuses))
    if user is not None:
        annotations = annotations.filter(user=user)
    if reference == "exclude":
        annotations = annotations.of_annotators()
    elif reference == "only":
        annotations = annotations.references()
    if accepted_only:
        accepted = Assignment.objects.filter(
            project=project,
            tree_id=OuterRef("tree_id"),
            user_id=OuterRef("user_id"),
            review_status=Assignment.ReviewStatus.ACCEPTED,
        )
        annotations = annotations.filter(Exists(accepted))
    if not include_gold:
        # Gold items and gold or training answers measure annotators, they are not data (quality.gold):
        # two more correlated checks through unique indexes, no extra query.
        gold_item = ProjectItem.objects.filter(project=project, tree_id=OuterRef("tree_id"), is_gold=True)
        checked = Assignment.objects.filter(
            project=project, tree_id=OuterRef("tree_id"), user_id=OuterRef("user_id")
        ).exclude(kind=Assignment.Kind.WORK)
        annotations = annotations.exclude(Exists(gold_item)).exclude(Exists(checked))
    last = 0
    while True:
        tree_ids = list(
            annotations.filter(tree_id__gt=last)
            .order_by("tree_id")
            .values_list("tree_id", flat=True)
            .distinct()[:chunk_size]
        )
        if not tree_ids:
            return
        rows = (
            annotations.filter(tree_id__in=tree_ids)
            .order_by("tree_id", "user__username", "scheme")
            .values_list(*_ROW_FIELDS)
        )
        texts = tree_texts(tree_ids, shown) if with_text else {}
        records = tree_records_by_id(tree_ids) if with_records else {}
        if shown is not None:
            records = {tree_id: shown.record(tree_id, record) for tree_id, record in records.items()}
        yield from _grouped(rows, texts, records)
        if len(tree_ids) < chunk_size:
            return  # the last page: asking for another would cost a query
        last = tree_ids[-1]


_ROW_FIELDS = (
    "tree_id",
    "tree__external_id",
    "user__username",
    "scheme",
    "payload",
    "status",
    "updated_at",
    "suggestion",
    "source",
)


def _grouped(
    rows: Any, texts: dict[int, TreeText], records: dict[int, TreeRecord] | None = None
) -> Iterator[ItemAnnotations]:
    current: ItemAnnotations | None = None
    key: tuple[int, str] | None = None
    statuses: set[str] = set()
    for tree_id, external_id, username, scheme, payload, status, updated_at, suggestion, source in rows:
        if (tree_id, username) != key:
            if current is not None:
                current.status = item_status(statuses)
                yield current
            key, statuses = (tree_id, username), set()
            current = ItemAnnotations(
                external_id,
                username,
                status,
                updated_at,
                {},
                texts.get(tree_id),
                (records or {}).get(tree_id),
            )
        assert current is not None
        current.annotations[scheme] = payload
        current.suggestions[scheme] = suggestion
        current.by_model = current.by_model or source == Annotation.Source.MODEL
        statuses.add(status)
        current.updated_at = max(current.updated_at, updated_at)
    if current is not None:
        current.status = item_status(statuses)
        yield current


def tree_texts(tree_ids: list[int], shown: DeletedText | None = None) -> dict[int, TreeText]:
    """The messages of ``tree_ids``, by tree, in one query (no join: parents are mapped here);
    deleted messages' text as ``shown`` lets the reader see it."""
    rows = Message.objects.filter(tree_id__in=tree_ids).values_list(
        "tree_id", "pk", "parent_id", "external_id", "role", "text", "position", "deleted"
    )
    external: dict[int, str] = {}
    pending = []
    for tree_id, pk, parent_id, external_id, role, text, position, deleted in rows.order_by():
        external[pk] = external_id
        if deleted and shown is not None:
            text = shown.text(tree_id, text, True)
        pending.append((tree_id, parent_id, external_id, role, text, position, bool(deleted)))
    texts: dict[int, TreeText] = {tree_id: TreeText() for tree_id in tree_ids}
    for tree_id, parent_id, external_id, role, text, position, deleted in pending:
        parent = external.get(parent_id) if parent_id is not None else None
        texts[tree_id].nodes[external_id] = Node(parent, role, text, position, deleted)
    return texts


def tree_records_by_id(tree_ids: list[int]) -> dict[int, TreeRecord]:
    """The trees ``tree_ids`` as records (messages and metadata), by tree id: two queries."""
    trees = ConversationTree.objects.filter(pk__in=tree_ids)
    # One page bigger than the trees asked for: tree_records stops without asking for another.
    records = tree_records(trees, chunk_size=len(tree_ids) + 1)
    return dict(zip(sorted(tree_ids), records, strict=True))
