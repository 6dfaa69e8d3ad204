"""Reads for reviewing: the queue of submitted work, and one item's answers side by side.

Each selector says what it queries; the counts are fixed whatever the
number of items, annotators or messages. Only work (``Assignment.Kind.WORK``)
is reviewed: gold checks and training are scored against expected answers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Case, Count, Q, QuerySet, When
from django.http import Http404

from annotation.models import Annotation, Assignment, Membership, Project, ProjectItem, Review
from annotation.permissions import DeletedText
from annotation.projects.config import project_config
from annotation.quality.gold import GoldState
from annotation.schemes import Scheme
from annotation.schemes.answer_text import answer_text
from trees.models import ConversationTree
from trees.selectors import OutlineRow, tree_outline

SUBMITTED = Assignment.Status.SUBMITTED
UNREVIEWED, ACCEPTED, REJECTED = (
    Assignment.ReviewStatus.UNREVIEWED,
    Assignment.ReviewStatus.ACCEPTED,
    Assignment.ReviewStatus.REJECTED,
)

# The queue's filters by review status, with what each keeps (an annotator's work on an item).
PENDING_Q = Q(status=SUBMITTED, review_status=UNREVIEWED)
QUEUE_FILTERS: dict[str, tuple[str, Q]] = {
    "pending": ("waiting for review", PENDING_Q),
    "accepted": ("accepted", Q(status=SUBMITTED, review_status=ACCEPTED)),
    "rejected": ("sent back", Q(review_status=REJECTED)),
    "all": ("all submitted or reviewed", Q(status=SUBMITTED) | Q(review_status__in=[ACCEPTED, REJECTED])),
}
QUEUE_PAGE_SIZE = 50


def work_of(project: Project) -> QuerySet[Assignment]:
    return Assignment.objects.filter(project=project, kind=Assignment.Kind.WORK)


def review_label(status: str, review_status: str) -> str:
    """Where one annotator's work on an item stands, for reviewers."""
    if review_status == REJECTED:
        # Until they submit it again, which clears the decision, or give it up.
        return (
            "sent back, then skipped by the annotator"
            if status == Assignment.Status.SKIPPED
            else "sent back to the annotator"
        )
    if review_status == ACCEPTED:
        return "accepted"
    return "waiting for review" if status == SUBMITTED else status


# -- the queue ------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueEntry:
    """One annotator's work on a queued item."""

    username: str
    status: str
    review_status: str
    submitted_at: datetime | None

    @property
    def label(self) -> str:
        return review_label(self.status, self.review_status)


@dataclass(frozen=True)
class QueueRow:
    tree_id: int
    external_id: str
    entries: list[QueueEntry]

    @property
    def last_submitted(self) -> datetime | None:
        return max((e.submitted_at for e in self.entries if e.submitted_at is not None), default=None)


@dataclass(frozen=True)
class ReviewQueue:
    rows: list[QueueRow]
    counts: dict[str, int]  # annotators' items by filter name, under the annotator filter
    status: str
    annotator: str
    annotators: list[str]  # the project's annotators, for the filter
    page: int
    has_next: bool


def review_queue(
    *, project: Project, status: str = "pending", annotator: str = "", page: int = 1
) -> ReviewQueue:
    """Items with work in ``status`` (by ``annotator`` when given), in item order, a page at a time.

    Four queries: the counts by review status; the page's items (one more
    than a page, to know whether another follows); every annotator's
    reviewable work on those items, with the items' and users' names; the
    project's annotators.
    """
    if status not in QUEUE_FILTERS:
        raise ValueError(f'unknown review status "{status}" (expected one of {", ".join(QUEUE_FILTERS)})')
    page = max(page, 1)
    work = work_of(project)
    if annotator:
        work = work.filter(user__username=annotator)
    counts = work.aggregate(
        **{name: Count("pk", filter=QUEUE_FILTERS[name][1]) for name in ("pending", "accepted", "rejected")}
    )
    counts["all"] = sum(counts.values())  # the three never overlap: "all" is their sum
    offset = (page - 1) * QUEUE_PAGE_SIZE
    tree_ids = list(
        work.filter(QUEUE_FILTERS[status][1])
        .order_by("tree_id")
        .values_list("tree_id", flat=True)
        .distinct()[offset : offset + QUEUE_PAGE_SIZE + 1]
    )
    has_next = len(tree_ids) > QUEUE_PAGE_SIZE
    tree_ids = tree_ids[:QUEUE_PAGE_SIZE]
    entries: dict[int, list[QueueEntry]] = defaultdict(list)
    names: dict[int, str] = {}
    if tree_ids:
        for tree_id, external_id, username, state, review_status, submitted_at in (
            work_of(project)
            .filter(QUEUE_FILTERS["all"][1], tree_id__in=tree_ids)
            .order_by("tree_id", "user__username")
            .values_list(
                "tree_id", "tree__external_id", "user__username", "status", "review_status", "submitted_at"
            )
        ):
            names[tree_id] = external_id
            entries[tree_id].append(QueueEntry(username, state, review_status, submitted_at))
    annotators = list(
        Membership.objects.filter(project=project, role=Membership.Role.ANNOTATOR)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )
    return ReviewQueue(
        rows=[QueueRow(tree_id, names[tree_id], entries[tree_id]) for tree_id in tree_ids],
        counts=counts,
        status=status,
        annotator=annotator,
        annotators=annotators,
        page=page,
        has_next=has_next,
    )


def review_next_tree_id(*, project: Project, after: int) -> int | None:
    """The next item with work waiting for review after ``after``, wrapping around (one query)."""
    return (
        work_of(project)
        .filter(PENDING_Q)
        .exclude(tree_id=after)
        .order_by(Case(When(tree_id__gt=after, then=0), default=1), "tree_id")
        .values_list("tree_id", flat=True)
        .first()
    )


# -- one item, side by side ---------------------------------------------------------------------


@dataclass
class Column:
    """One annotator's work on the item: their answers and the decisions on it so far."""

    assignment: Assignment
    answers: dict[str, Any]
    reviews: list[Review] = field(default_factory=list)  # oldest first
    gold: bool = False  # these answers are the item's gold answers

    @property
    def username(self) -> str:
        return self.assignment.user.get_username()

    @property
    def label(self) -> str:
        return review_label(self.assignment.status, self.assignment.review_status)

    @property
    def time_spent(self) -> str:
        seconds = round(self.assignment.time_spent_ms / 1000)
        return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"

    @property
    def decidable(self) -> bool:
        """Submitted work can be decided on (again: a reviewer may change their mind)."""
        return self.assignment.status == SUBMITTED


@dataclass(frozen=True)
class Row:
    """One line of the comparison: what each column answered, in words ("" for nothing).

    Plain fields rather than properties: a 1,000-message tree draws 1,000 rows,
    and the template engine looks each value up more than once.
    """

    label: str
    cells: list[str]
    node: OutlineRow | None = None  # for a tree's message rows
    differ: bool = field(init=False)
    answered: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "differ", len(set(self.cells)) > 1)
        object.__setattr__(self, "answered", any(self.cells))


@dataclass(frozen=True)
class Section:
    """A scheme's rows (a tree annotation's messages, path and comparisons), or the item-level answers."""

    title: str
    description: str
    rows: list[Row]
    by_node: bool = False


@dataclass(frozen=True)
class ReviewItem:
    project: Project
    tree: ConversationTree
    columns: list[Column]
    sections: list[Section]
    outline: list[OutlineRow]
    in_progress: int  # other annotators who hold the item but have not submitted it
    next_tree_id: int | None
    gold: GoldState
    gold_words: list[tuple[str, str]]  # the gold answers in words, scheme by scheme

    @property
    def shows_messages(self) -> bool:
        """Whether the sections quote the messages (a tree annotation); otherwise the outline is shown."""
        return any(section.by_node for section in self.sections)


def review_item(*, project: Project, tree_id: int, viewer: Any) -> ReviewItem:
    """``tree_id``'s submitted and reviewed work, each annotator a column: six queries at most.

    1. the item and its tree, with its gold answers (Http404 when not an item of the project); 2. the item's
    work with its annotators; 3. their answers; 4. the decisions on their
    work, with the reviewers; 5. the tree's messages (``tree_outline``; deleted messages' text
    as ``viewer`` may read it, ``permissions.DeletedText``: one more query for a tree with one);
    6. the next item waiting for review.
    """
    project_item = ProjectItem.objects.select_related("tree").filter(project=project, tree_id=tree_id).first()
    if project_item is None:
        raise Http404("no such item in this project")
    tree, gold = project_item.tree, GoldState.of(project_item)
    schemes = project_config(project).schemes
    assignments = list(work_of(project).filter(tree=tree).select_related("user").order_by("user__username"))
    shown = [a for a in assignments if a.status == SUBMITTED or a.review_status in (ACCEPTED, REJECTED)]
    columns = [Column(assignment, {}) for assignment in shown]
    if columns:
        by_user = {column.assignment.user_id: column for column in columns}
        for user_id, scheme, payload in Annotation.objects.filter(
            project=project, tree=tree, user_id__in=list(by_user)
        ).values_list("user_id", "scheme", "payload"):
            by_user[user_id].answers[scheme] = payload
        by_assignment = {column.assignment.pk: column for column in columns}
        for review in (
            Review.objects.filter(assignment_id__in=list(by_assignment))
            .select_related("reviewer")
            .order_by("created_at", "id")
        ):
            by_assignment[review.assignment_id].reviews.append(review)
    names = {scheme.name for scheme in schemes}
    for column in columns:
        # As gold_from_work takes them: the answers to the project's schemes.
        answers = {name: payload for name, payload in column.answers.items() if name in names}
        column.gold = gold.is_gold and answers == gold.answers
    outline = DeletedText(viewer, project).outline(tree.pk, tree_outline(tree))
    return ReviewItem(
        project=project,
        tree=tree,
        columns=columns,
        sections=answer_sections(schemes, columns, outline),
        outline=outline,
        in_progress=len(assignments) - len(shown),
        next_tree_id=review_next_tree_id(project=project, after=tree.pk),
        gold=gold,
        gold_words=gold_in_words(schemes, gold.answers),
    )


def gold_in_words(schemes: list[Scheme], answers: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Expected answers as people read them, in the schemes' order (no queries)."""
    return [
        (scheme.name, _in_words(scheme, answers[scheme.name])) for scheme in schemes if scheme.name in answers
    ]


def answer_sections(schemes: list[Scheme], columns: list[Column], outline: list[OutlineRow]) -> list[Section]:
    """The columns' answers, scheme by scheme, as rows to lay side by side (no queries).

    Item-level schemes make one section, a row each. A tree annotation makes
    its own: the selected path, each compared decision point, then every
    message of the tree with each annotator's rating of it and its place on
    their path.
    """
    sections: list[Section] = []
    item_rows: list[Row] = []
    for scheme in schemes:
        payloads = [column.answers.get(scheme.name) for column in columns]
        if scheme.annotation_type != "tree_annotation":
            item_rows.append(Row(scheme.name, [_in_words(scheme, payload) for payload in payloads]))
            continue
        trees = [payload if isinstance(payload, Mapping) else {} for payload in payloads]
        rows = []
        if getattr(scheme, "path_enabled", False):
            rows.append(Row("selected path", [" → ".join(tree.get("selected_path") or []) for tree in trees]))
        for parent in _compared_parents(trees):
            rows.append(Row(f"replies to {parent}", [_comparison(tree, parent) for tree in trees]))
        for node in outline:
            rows.append(
                Row(node.external_id, [_node(scheme, tree, node.external_id) for tree in trees], node)
            )
        sections.append(Section(scheme.name, scheme.description, rows, by_node=True))
    if item_rows:
        sections.insert(0, Section("Answers", "", item_rows))
    return sections


def _in_words(scheme: Scheme | None, payload: Any) -> str:
    return "" if scheme is None or payload in (None, {}) else answer_text(scheme, payload)


def _node(scheme: Scheme, tree: Mapping[str, Any], node: str) -> str:
    """What a tree annotation says about one message: its rating, and its step on the path."""
    rating = _in_words(getattr(scheme, "node_scheme", None), (tree.get("node_annotations") or {}).get(node))
    path = tree.get("selected_path") or []
    step = f"path step {path.index(node) + 1}" if node in path else ""
    return "; ".join(part for part in (rating, step) if part)


def _comparison(tree: Mapping[str, Any], parent: str) -> str:
    comparison = (tree.get("branch_comparisons") or {}).get(parent)
    if not isinstance(comparison, Mapping):
        return ""
    if comparison.get("ranking"):
        return "best first: " + " > ".join(comparison["ranking"])
    pairs = comparison.get("pairs") or []
    return "; ".join(f"{pair.get('a')} vs {pair.get('b')}: {pair.get('label')}" for pair in pairs)


def _compared_parents(trees: list[Mapping[str, Any]]) -> list[str]:
    """The decision points any annotator compared replies at, each once, in the tree's order of answers."""
    parents: dict[str, None] = {}
    for tree in trees:
        for parent, comparison in (tree.get("branch_comparisons") or {}).items():
            if isinstance(comparison, Mapping) and (comparison.get("pairs") or comparison.get("ranking")):
                parents.setdefault(parent)
    return list(parents)
