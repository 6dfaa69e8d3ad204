"""Reads of trees that several pages share: a whole tree as an outline, a tree's shape
(its node ids and links, which schemes check answers against), and datasets and trees
with their sizes.

Each selector says what it queries. None of them loads related rows one by
one: the sizes are correlated subqueries (one count per row, computed by the
database in the same query) rather than joins, so filters and other
annotations never multiply rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from trees import sql
from trees.markdown import kept_html
from trees.models import ConversationTree, Dataset, Message
from trees.nesting import children_by_parent, preorder
from trees.shapes import TreeShape

# Deeper nodes are drawn at this indentation: a 10,000-deep chain indented
# level by level would run off any screen. Rows still carry their real depth.
MAX_INDENT = 40

_OUTLINE_FIELDS = (
    "pk",
    "parent_id",
    "external_id",
    "role",
    "text",
    "lang",
    "position",
    "synthetic",
    "model_name",
    "rank",
    "deleted",
    "html",
    "html_version",
)


@dataclass(frozen=True, slots=True)
class OutlineRow:
    """One message of a tree, placed in the outline.

    Rows come in preorder (each node before its subtree, siblings by
    position), so a node's subtree is the run of rows after it that are
    deeper than it: that is all a page needs to collapse it, without nesting
    the markup (browsers flatten HTML nested more than a few hundred levels).
    """

    pk: int
    external_id: str
    parent_external_id: str | None
    role: str
    text: str
    html: str  # the text as safe HTML (trees.markdown)
    lang: str | None
    synthetic: bool
    model_name: str | None
    rank: int | None
    deleted: bool
    depth: int  # 0 for the root
    child_count: int
    sibling_index: int  # 0-based position among its siblings, after ordering
    sibling_count: int

    @property
    def level(self) -> int:
        """The 1-based level that WAI-ARIA's ``aria-level`` expects."""
        return self.depth + 1

    @property
    def sibling_number(self) -> int:
        """The 1-based position among siblings that ``aria-posinset`` expects."""
        return self.sibling_index + 1

    @property
    def has_children(self) -> bool:
        return self.child_count > 0

    @property
    def is_branch_point(self) -> bool:
        """Two or more replies: where the conversation branches."""
        return self.child_count >= 2

    @property
    def indent(self) -> int:
        """The depth to draw the row at, capped at ``MAX_INDENT``."""
        return min(self.depth, MAX_INDENT)


def tree_outline(tree: ConversationTree) -> list[OutlineRow]:
    """Every message of ``tree`` in preorder, siblings by position.

    One query (the messages' displayed fields, nothing related), whatever the
    tree's size; the caller already holds the tree. The nesting is worked out
    in Python without recursion, so a 10,000-deep chain is fine.
    """
    # Written out (trees.sql): the annotator's loop reads a tree per item. The columns hold
    # no value the ORM would convert (no JSON, no dates).
    meta = Message._meta
    fields = [(meta.pk if name == "pk" else meta.get_field(name)).column for name in _OUTLINE_FIELDS]
    rows = sql.fetch_all(
        f"SELECT {', '.join(fields)} FROM {sql.table(Message)} WHERE tree_id = %s", [tree.pk]
    )
    # Sorting here rather than in SQL keeps the database from copying every
    # text to sort it; by id first so that siblings with equal positions keep
    # their import order (the sort by position below is stable).
    rows.sort(key=lambda row: row[0])
    roots, children = children_by_parent(
        rows, key=lambda row: row[0], parent_key=lambda row: row[1], order_key=lambda row: row[6]
    )
    external_ids = {row[0]: row[2] for row in rows}
    sibling_slots: dict[int, tuple[int, int]] = {}
    for siblings in (roots, *children.values()):
        for index, row in enumerate(siblings):
            sibling_slots[row[0]] = (index, len(siblings))
    outline = []
    for row, depth in preorder(roots, children, key=lambda row: row[0]):
        *shown, html, html_version = row
        pk, parent_id, external_id, role, text, lang, _position, synthetic, model_name, rank, deleted = shown
        sibling_index, sibling_count = sibling_slots[pk]
        outline.append(
            OutlineRow(
                pk=pk,
                external_id=external_id,
                parent_external_id=external_ids.get(parent_id) if parent_id is not None else None,
                role=role,
                text=text,
                html=kept_html(html, html_version, text),
                lang=lang,
                synthetic=bool(synthetic),
                model_name=model_name,
                rank=rank,
                deleted=bool(deleted),
                depth=depth,
                child_count=len(children.get(pk, ())),
                sibling_index=sibling_index,
                sibling_count=sibling_count,
            )
        )
    return outline


def count_of(queryset: QuerySet, group_by: str) -> Coalesce:
    """A correlated ``COUNT(*)`` of ``queryset`` (already filtered on the outer row): one number
    per row in the same query, without multiplying rows as a join would."""
    counted = queryset.order_by().values(group_by).annotate(count=Count("pk")).values("count")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def datasets_with_counts(datasets: QuerySet[Dataset] | None = None) -> QuerySet[Dataset]:
    """``datasets`` (all by default) annotated with ``tree_count`` and ``message_count``.

    Still one query for any number of datasets: each count is a subquery per
    row; the message count reads the messages of the dataset's trees through
    the (tree, external_id) index.
    """
    datasets = Dataset.objects.all() if datasets is None else datasets
    return datasets.annotate(
        tree_count=count_of(ConversationTree.objects.filter(dataset=OuterRef("pk")), "dataset"),
        message_count=count_of(Message.objects.filter(tree__dataset=OuterRef("pk")), "tree__dataset"),
    )


def trees_with_counts(trees: QuerySet[ConversationTree] | None = None) -> QuerySet[ConversationTree]:
    """``trees`` (all by default) annotated with ``message_count``, in the same query."""
    trees = ConversationTree.objects.all() if trees is None else trees
    return trees.annotate(message_count=count_of(Message.objects.filter(tree=OuterRef("pk")), "tree"))


def tree_shape(tree: ConversationTree | int, *, with_texts: bool = False) -> TreeShape:
    """The tree's node ids and parent links, in one query; the messages' texts too
    ``with_texts`` (for schemes that quote them, such as spans)."""
    tree_id = tree if isinstance(tree, int) else tree.pk
    fields = ["external_id", "parent__external_id", "position", "role"]
    if with_texts:
        fields.append("text")
    rows = Message.objects.filter(tree_id=tree_id).values_list(*fields)
    return TreeShape.from_rows(rows)


def tree_shapes_by_id(tree_ids: list[int], with_texts: bool = False) -> dict[int, TreeShape]:
    """The shapes of several trees in one query (``tree_shape`` reads one),
    with the messages' texts when a scheme quotes them."""
    rows: dict[int, list[tuple[str, str | None, int, str]]] = {tree_id: [] for tree_id in tree_ids}
    fields = ["tree_id", "external_id", "parent__external_id", "position", "role"]
    if with_texts:
        fields.append("text")
    for tree_id, *row in Message.objects.filter(tree_id__in=tree_ids).values_list(*fields):
        rows[tree_id].append(tuple(row))  # type: ignore[arg-type]
    return {tree_id: TreeShape.from_rows(tree_rows) for tree_id, tree_rows in rows.items()}
