"""Linear dialogues: corpora that list utterances one after another (CCPE, CSV).

A dialogue is read as a chain — each utterance replies to the one before —
whose node ids are the utterances' indexes, so annotations and exports name
an utterance the way its corpus does. Writing goes the other way: a tree is
told as the dialogue from its root down its first replies (all of a linear
tree; one branch of a branching one, since a dialogue has no branches).
"""

from __future__ import annotations

import re

from trees.formats.records import MessageRecord, TreeRecord

_INTEGER = re.compile(r"-?[0-9]+")


def chain(tree: TreeRecord, messages: list[MessageRecord]) -> None:
    """Make ``messages`` (in dialogue order) the tree's messages, each replying to the one before."""
    previous: MessageRecord | None = None
    for index, message in enumerate(messages):
        message.parent_index = index - 1
        message.parent_id = previous.external_id if previous is not None else None
        message.depth = index
        message.position = 0
        previous = message
    tree.messages = messages


def dialogue(tree: TreeRecord) -> list[MessageRecord]:
    """The tree's messages as a dialogue: the root, then each message's first reply.

    Records read back from the database come in no particular order, so the
    chain is followed through the parent links (iteratively: a dialogue may
    be thousands of turns long).
    """
    children: dict[str | None, MessageRecord] = {}
    for message in tree.messages:
        first = children.get(message.parent_id)
        if first is None or message.position < first.position:
            children[message.parent_id] = message
    turns: list[MessageRecord] = []
    current = children.get(None)
    while current is not None and len(turns) <= len(tree.messages):
        turns.append(current)
        current = children.get(current.external_id)
    return turns


def utterance_index(message: MessageRecord, position: int) -> int:
    """The utterance's index: its node id when that is an integer (as dialogue imports
    make them), else its position in the dialogue."""
    external_id = message.external_id
    return int(external_id) if _INTEGER.fullmatch(external_id) else position
