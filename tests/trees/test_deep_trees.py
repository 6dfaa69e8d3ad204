"""Trees of any depth: a 10,000-deep chain imports and exports in every
format without recursion, and loading a tree costs the same few queries
whatever its size."""

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db.models import Max

from tests.factories import ChainTreeFactory, DatasetFactory
from trees.formats import flat, potato
from trees.models import ConversationTree, Message
from trees.services import tree_import, trees_export
from trees.store import tree_records
from trees.validation import ImportLimits

pytestmark = pytest.mark.django_db

DEPTH = 10_000  # the default depth limit: the root is level 1


@contextmanager
def default_recursion_limit() -> Iterator[None]:
    """Python's usual limit, which the import raises for its JSON parser: the
    export must not need it."""
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(raised)


def role(level: int) -> str:
    return "user" if level % 2 == 0 else "assistant"


def potato_chain() -> str:
    """The chain as the potato writer spells it, so the export must match byte for byte."""
    opens = "".join(
        f'{{"id":"n{level}","role":"{role(level)}","content":"m{level}","children":['
        for level in range(DEPTH)
    )
    return f'{{"id":"deep","tree":{opens}{"]}" * DEPTH}}}\n'


def oasst_chain() -> str:
    oasst_roles = {"user": "prompter", "assistant": "assistant"}
    opens = "".join(
        f'{{"message_id":"n{level}",'
        + (f'"parent_id":"n{level - 1}",' if level else "")
        + f'"text":"m{level}","role":"{oasst_roles[role(level)]}","deleted":false,"synthetic":false,"replies":['
        for level in range(DEPTH)
    )
    return f'{{"message_tree_id":"deep","tree_state":"ready_for_export","prompt":{opens}{"]}" * DEPTH}}}\n'


def flat_chain() -> str:
    return "".join(
        f'{{"id":"n{level}","parent_id":{f"{chr(34)}n{level - 1}{chr(34)}" if level else "null"},'
        f'"tree_id":"deep","role":"{role(level)}","text":"m{level}"}}\n'
        for level in range(DEPTH)
    )


@pytest.mark.parametrize(
    ("format_name", "make"), [("potato", potato_chain), ("oasst", oasst_chain), ("flat", flat_chain)]
)
def test_a_ten_thousand_deep_chain_imports_and_exports_unchanged(format_name, make):
    data = make()
    dataset = DatasetFactory()

    report = tree_import(dataset=dataset, source=io.BytesIO(data.encode()), format_name=format_name)

    assert report.committed, [str(issue) for issue in report.errors]
    assert Message.objects.aggregate(deepest=Max("depth")) == {"deepest": DEPTH - 1}
    assert Message.objects.get(external_id=f"n{DEPTH - 1}").parent.external_id == f"n{DEPTH - 2}"
    with default_recursion_limit():
        exported = "".join(trees_export(dataset=dataset, format_name=format_name))
    assert exported == data


def test_a_ten_thousand_deep_chain_written_with_aliases_and_integer_ids_reads():
    opens = "".join(
        f'{{"id":{level},"speaker":"{role(level)}","text":"m{level}","children":[' for level in range(DEPTH)
    )
    data = f'{{"id":"deep","tree":{opens}{"]}" * DEPTH}}}'

    [tree] = potato.read(io.BytesIO(data.encode()))

    assert tree.ok
    assert [(m.external_id, m.depth) for m in tree.messages[-2:]] == [
        ("9998", DEPTH - 2),
        ("9999", DEPTH - 1),
    ]


def test_a_ten_thousand_deep_chain_below_a_missing_parent_is_reported_once():
    lines = flat_chain().replace('"tree_id":"deep",', "").replace('"parent_id":null', '"parent_id":"gone"', 1)

    trees = list(flat.read(io.BytesIO(lines.encode())))

    assert [str(issue) for tree in trees for issue in tree.issues] == [
        'line 1: parent_id: unknown parent "gone"'
    ]


def test_a_chain_one_level_over_the_depth_limit_is_refused_by_name():
    chain = "".join(f'{{"id":"n{level}","role":"user","content":"","children":[' for level in range(6))
    data = f'{{"id":"deep","tree":{chain}{"]}" * 6}}}'

    report = tree_import(
        dataset=DatasetFactory(),
        source=io.BytesIO(data.encode()),
        format_name="potato",
        limits=ImportLimits(max_depth=5),
    )

    assert [str(issue) for issue in report.errors] == [
        'line 1: tree: 6 levels deep (node "n5"), over the limit of 5'
    ]


@pytest.mark.parametrize("size", [5, 500])
def test_loading_a_tree_costs_two_queries_whatever_its_size(size, django_assert_num_queries):
    tree = ChainTreeFactory(chain=size)

    with django_assert_num_queries(2):
        [record] = tree_records(ConversationTree.objects.filter(pk=tree.pk))

    assert len(record.messages) == size
    assert {message.external_id: message.parent_id for message in record.messages}[
        f"m{size - 1}"
    ] == f"m{size - 2}"


def test_loading_several_trees_costs_two_queries_per_chunk(django_assert_num_queries):
    dataset = DatasetFactory()
    for size in (1, 2, 3):
        ChainTreeFactory(dataset=dataset, chain=size)

    with django_assert_num_queries(2):
        assert [len(record.messages) for record in tree_records(dataset.trees.all())] == [1, 2, 3]
    with django_assert_num_queries(4):
        assert len(list(tree_records(dataset.trees.all(), chunk_size=2))) == 3
