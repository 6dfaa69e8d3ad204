"""Growing a tree's branches, the tree's part (``trees.branches``).

- ``unanswered`` chooses every user turn without an assistant reply; ``leaves`` every user
  turn without any reply; ``nodes`` the turns named, refusing (with why) a turn that is not
  there, deleted or under a deleted turn, or not a user's.
- A run's own replies do not count as answers, so a run stopped part-way chooses its turns
  again.
- Replies join under their turn after its present children, one level down, in its
  language; an id the tree has already is skipped, so the same reply added twice is there
  once; each addition is one audit entry on the tree.

The tree of these specs (ids; roles u, a; x marks a deleted turn):

    u1 ── a1 ── u2              u2: unanswered leaf
       │     └─ u3 ── u4        u3: answered? no (its reply is a user's); not a leaf
       ├─ a2 ── u5 ── a3        u5: answered
       └─ a4x ── u6             u6: under a deleted turn
"""

from __future__ import annotations

import pytest

from tests.factories import ConversationTreeFactory, DatasetFactory, MessageFactory
from trees.branches import LEAVES, NODES, UNANSWERED, NewReply, Node, NodeGone, nodes_to_grow, replies_add
from trees.models import AuditEntry, Message

SHAPE = [
    # id, parent, role, deleted
    ("u1", None, "user", False),
    ("a1", "u1", "assistant", False),
    ("u2", "a1", "user", False),
    ("u3", "a1", "user", False),
    ("u4", "u3", "user", False),
    ("a2", "u1", "assistant", False),
    ("u5", "a2", "user", False),
    ("a3", "u5", "assistant", False),
    ("a4", "u1", "assistant", True),
    ("u6", "a4", "user", False),
]


def nodes(shape=SHAPE) -> list[Node]:
    pks = {external_id: index + 1 for index, (external_id, *_rest) in enumerate(shape)}
    return [
        Node(pks[external_id], external_id, pks.get(parent) if parent else None, role, deleted)
        for external_id, parent, role, deleted in shape
    ]


def chosen(rule: str, **options) -> list[str]:
    found, _problems = nodes_to_grow(nodes(), rule=rule, **options)
    return [node.external_id for node in found]


def test_unanswered_is_every_user_turn_without_an_assistant_reply():
    assert chosen(UNANSWERED) == ["u2", "u3", "u4"]


def test_leaves_is_every_user_turn_without_any_reply():
    assert chosen(LEAVES) == ["u2", "u4"]


def test_a_runs_own_replies_are_not_answers():
    shape = [*SHAPE, ("gen-u2-0", "u2", "assistant", False), ("other", "u4", "assistant", False)]
    found, _ = nodes_to_grow(
        nodes(shape), rule=UNANSWERED, is_own=lambda parent, child: child.external_id.startswith("gen-")
    )
    assert [node.external_id for node in found] == ["u2", "u3"]


def test_named_turns_are_taken_or_refused_with_why():
    found, problems = nodes_to_grow(nodes(), rule=NODES, node_ids=["u5", "a1", "u6", "zz", "u5"])

    assert [node.external_id for node in found] == ["u5"]
    assert problems == [
        ("a1", "assistant turn: only user turns get model replies"),
        ("u6", "the node or one above it is deleted"),
        ("zz", "no such node in this tree"),
    ]


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown rule 'sideways'"):
        nodes_to_grow(nodes(), rule="sideways")


def test_a_very_deep_tree_is_walked_without_recursion():
    shape = [("n0", None, "user", False)] + [
        (f"n{i}", f"n{i - 1}", "assistant" if i % 2 else "user", False) for i in range(1, 5000)
    ]
    found, _ = nodes_to_grow(nodes(shape), rule=LEAVES)
    assert found == []  # the last turn is the assistant's
    assert [node.external_id for node in nodes_to_grow(nodes(shape[:-1]), rule=LEAVES)[0]] == ["n4998"]


@pytest.mark.django_db
def test_replies_join_after_the_turns_children_and_the_same_id_is_added_once():
    tree = ConversationTreeFactory(dataset=DatasetFactory(name="grown"), external_id="chat")
    root = MessageFactory(tree=tree, external_id="u1", role="user", text="Hi", lang="de")
    MessageFactory(tree=tree, parent=root, external_id="a1", role="assistant", depth=1, position=0)
    reply = NewReply(
        external_id="gen-1", text="Hallo!", model_name="m", metadata={"generation": {"index": 0}}
    )

    added = replies_add(tree_id=tree.pk, parent_id=root.pk, replies=[reply, NewReply("gen-2", "Servus!")])
    again = replies_add(tree_id=tree.pk, parent_id=root.pk, replies=[reply])

    assert [message.external_id for message in added] == ["gen-1", "gen-2"] and again == []
    first = Message.objects.get(external_id="gen-1")
    assert (first.role, first.depth, first.position, first.lang, first.synthetic, first.model_name) == (
        "assistant",
        1,
        1,
        "de",
        True,
        "m",
    )
    assert first.metadata == {"generation": {"index": 0}} and first.html_version > 0
    assert Message.objects.get(external_id="gen-2").position == 2
    (entry,) = AuditEntry.objects.filter(action="replies.add")
    assert (entry.target_repr, entry.scope) == ("chat", "grown")
    assert entry.details == {"node": "u1", "replies": ["gen-1", "gen-2"], "models": ["m"]}


@pytest.mark.django_db
def test_a_deleted_or_missing_turn_takes_no_reply():
    tree = ConversationTreeFactory()
    root = MessageFactory(tree=tree, external_id="u1", deleted=True)

    with pytest.raises(NodeGone, match="deleted"):
        replies_add(tree_id=tree.pk, parent_id=root.pk, replies=[NewReply("gen-1", "x")])
    with pytest.raises(NodeGone, match="no longer in its tree"):
        replies_add(tree_id=tree.pk, parent_id=root.pk + 100, replies=[NewReply("gen-1", "x")])
    assert Message.objects.count() == 1
