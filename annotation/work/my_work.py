"""An annotator's own items in a project, newest activity first: the "My work" page and
the Previous / Next walk of the annotate page.

Every item the annotator was handed is in it, whatever became of it: a draft
(held, not submitted), submitted, sent back by a reviewer (with the comment),
accepted, skipped, or lost to an expired lease. Newest activity first is the
assignment's ``updated_at``: the annotator's lease, saves, submission or skip,
and a reviewer sending the item back (which hands it to them again; accepting
it does not). Ties go to the later assignment, so the order is total and the
walk never skips or repeats an item.

A gold check is shown as one only once submitted: until then it must look like
any other item (docs/annotating.md), or the check would be given away.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery

from annotation.models import Assignment, Project, Review
from trees import sql

LEASED, SUBMITTED = Assignment.Status.LEASED, Assignment.Status.SUBMITTED
REJECTED, ACCEPTED = Assignment.ReviewStatus.REJECTED, Assignment.ReviewStatus.ACCEPTED
MY_WORK_PAGE_SIZE = 50

# The page's filters: what each keeps of the annotator's items, by the state ``work_state`` names.
MY_WORK_FILTERS: dict[str, tuple[str, Q]] = {
    "all": ("all", Q()),
    "draft": ("drafts", Q(status=LEASED) & ~Q(review_status=REJECTED)),
    "sent_back": ("sent back", Q(status=LEASED, review_status=REJECTED)),
    "submitted": ("submitted", Q(status=SUBMITTED) & ~Q(review_status=ACCEPTED)),
    "accepted": ("accepted", Q(status=SUBMITTED, review_status=ACCEPTED)),
    "skipped": ("skipped", Q(status=Assignment.Status.SKIPPED)),
    "expired": ("lease ran out", Q(status=Assignment.Status.EXPIRED)),
}

STATE_LABELS = {
    "draft": "draft",
    "sent_back": "sent back",
    "submitted": "submitted",
    "accepted": "accepted",
    "skipped": "skipped",
    "expired": "lease ran out",
}


def work_state(status: str, review_status: str) -> str:
    """Where one item of the annotator's stands, as a key of ``MY_WORK_FILTERS``.

    A rejection puts the item back in their hands (leased) until they submit
    it again, which clears the decision; sent back and then skipped is skipped.
    """
    if status == LEASED:
        return "sent_back" if review_status == REJECTED else "draft"
    if status == SUBMITTED:
        return "accepted" if review_status == ACCEPTED else "submitted"
    return status


@dataclass(frozen=True)
class MyWorkRow:
    """One item of the annotator's, as the My work page lists it."""

    tree_id: int
    external_id: str
    state: str  # a key of MY_WORK_FILTERS, "all" aside
    kind: str  # work, gold or training; gold only once submitted
    score: float | None  # a submitted gold check's or training item's score (0..1)
    updated_at: datetime
    reviewer: str  # who sent it back, when it is sent back
    comment: str  # and why

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]


@dataclass(frozen=True)
class MyWork:
    """A page of the annotator's items under one filter, with every filter's count."""

    rows: list[MyWorkRow]
    page: Page
    status: str
    counts: dict[str, int]  # the annotator's items by filter name


def _mine(project: Project, user: AbstractBaseUser) -> QuerySet[Assignment]:
    return Assignment.objects.filter(project=project, user=user)


def my_work(*, project: Project, user: AbstractBaseUser, status: str = "all", page: int = 1) -> MyWork:
    """``user``'s items in ``project`` in ``status``, newest activity first, a page at a time.

    Two queries whatever the number of items: the counts by filter (the
    paginator's count among them); the page's items with their trees' external
    ids and, for sent-back ones, the latest rejection's comment and reviewer.
    A page past the last gives the last.
    """
    if status not in MY_WORK_FILTERS:
        raise ValueError(f'unknown status "{status}" (expected one of {", ".join(MY_WORK_FILTERS)})')
    mine = _mine(project, user)
    counts = mine.aggregate(
        **{name: Count("pk", filter=wanted) for name, (_, wanted) in MY_WORK_FILTERS.items() if name != "all"}
    )
    counts["all"] = sum(counts.values())  # the states never overlap: "all" is their sum
    rejection = Review.objects.filter(assignment=OuterRef("pk"), decision=Review.Decision.REJECTED).order_by(
        "-created_at", "-id"
    )
    rows = (
        mine.filter(MY_WORK_FILTERS[status][1])
        .order_by("-updated_at", "-pk")
        .annotate(
            rejection_comment=Subquery(rejection.values("comment")[:1]),
            rejection_reviewer=Subquery(rejection.values("reviewer__username")[:1]),
        )
        .values_list(
            "tree_id",
            "tree__external_id",
            "status",
            "review_status",
            "kind",
            "gold_score",
            "updated_at",
            "rejection_reviewer",
            "rejection_comment",
        )
    )
    paginator = Paginator(rows, MY_WORK_PAGE_SIZE)
    # The filter's count is among those just read: the paginator need not count again.
    paginator.count = counts[status]
    shown = paginator.get_page(page)
    return MyWork(rows=[_row(*values) for values in shown], page=shown, status=status, counts=counts)


def _row(
    tree_id: int,
    external_id: str,
    status: str,
    review_status: str,
    kind: str,
    score: float | None,
    updated_at: datetime,
    reviewer: str | None,
    comment: str | None,
) -> MyWorkRow:
    state = work_state(status, review_status)
    if kind == Assignment.Kind.GOLD and status != SUBMITTED:
        kind = Assignment.Kind.WORK
    sent_back = state == "sent_back"
    return MyWorkRow(
        tree_id=tree_id,
        external_id=external_id,
        state=state,
        kind=kind,
        score=score if kind != Assignment.Kind.WORK and status == SUBMITTED else None,
        updated_at=updated_at,
        reviewer=(reviewer or "") if sent_back else "",
        comment=(comment or "") if sent_back else "",
    )


@dataclass(frozen=True)
class Neighbours:
    """The items either side of one in the annotator's My work order (None at either end)."""

    previous: int | None  # the tree touched before it
    next: int | None  # the tree touched after it


def my_work_neighbours(*, assignment: Assignment) -> Neighbours:
    """The trees before and after ``assignment``'s in its annotator's My work: one statement,
    two probes of the index of that order (models.Assignment, ``assignment_my_work``), whatever
    the annotator's history. Written out (``trees.sql``): the annotate page asks on every visit.

    Read when the annotate page is drawn, so a save on that page (which makes the
    item the newest) does not change where its Previous and Next lead.
    """
    mine = (
        f"SELECT mine.tree_id FROM {sql.table(Assignment)} mine "
        "WHERE mine.project_id = %s AND mine.user_id = %s"
    )
    at = sql.value(Assignment, "updated_at", assignment.updated_at)
    place = [assignment.project_id, assignment.user_id, at, assignment.pk]
    # (updated_at, id) compared as a pair (a row value): both databases start the index range
    # at the item's place and stop at the first row (an OR of the two columns read from one end).
    previous, following = sql.fetch_one(
        f"SELECT ({mine} AND (mine.updated_at, mine.id) < (%s, %s) "
        "ORDER BY mine.updated_at DESC, mine.id DESC LIMIT 1), "
        f"({mine} AND (mine.updated_at, mine.id) > (%s, %s) ORDER BY mine.updated_at, mine.id LIMIT 1)",
        [*place, *place],
    )
    return Neighbours(previous=previous, next=following)
