"""The trees the growing specs grow, imported as Open-Assistant trees (roles ``prompter`` and
``assistant``), and how the specs run a growth.

    chat:  p1 "Hi"  ── a1 "Hello!" ── p2 "How are you?"           (p2 unanswered, a leaf)
                    └─ a2 "Hey."
    fruit: q1 "Name a fruit"                                        (q1 unanswered, a leaf)
    done:  r1 "Thanks" ── r2 "You're welcome"                       (answered: never grown)
"""

from __future__ import annotations

import io
import json
from typing import Any

from evaluation.llm.generation import GrowReport, branches_grow
from evaluation.llm.grow_requests import grow_request_parse
from evaluation.llm.grow_tasks import grow_trees
from trees.models import Dataset, Message
from trees.services import dataset_get_or_create, tree_import

TREES = [
    {
        "message_tree_id": "chat",
        "prompt": {
            "message_id": "p1",
            "role": "prompter",
            "text": "Hi",
            "lang": "en",
            "replies": [
                {
                    "message_id": "a1",
                    "role": "assistant",
                    "text": "Hello!",
                    "replies": [
                        {"message_id": "p2", "role": "prompter", "text": "How are you?", "replies": []}
                    ],
                },
                {"message_id": "a2", "role": "assistant", "text": "Hey.", "replies": []},
            ],
        },
    },
    {
        "message_tree_id": "fruit",
        "prompt": {"message_id": "q1", "role": "prompter", "text": "Name a fruit", "replies": []},
    },
    {
        "message_tree_id": "done",
        "prompt": {
            "message_id": "r1",
            "role": "prompter",
            "text": "Thanks",
            "replies": [{"message_id": "r2", "role": "assistant", "text": "You're welcome", "replies": []}],
        },
    },
]


def grow_dataset(name: str = "grown") -> Dataset:
    dataset = dataset_get_or_create(name)
    source = io.BytesIO("\n".join(json.dumps(tree) for tree in TREES).encode())
    report = tree_import(dataset=dataset, source=source, format_name="oasst")
    assert report.committed, report.errors
    return dataset


def grow(dataset: Dataset, **options: Any) -> GrowReport:
    """Grow ``dataset`` as the options say (endpoint ``local``, rule ``unanswered`` unless told)."""
    request = grow_request_parse({"endpoint": "local", "rule": "unanswered", **options})
    trees, _unknown = grow_trees(dataset=dataset, tree_ids=request.trees)
    return branches_grow(trees=trees, request=request)


def replies_to(node: str) -> list[Message]:
    return list(Message.objects.filter(parent__external_id=node).order_by("position"))


def generated(node: str) -> list[Message]:
    return [message for message in replies_to(node) if message.synthetic]


def last_user_text(body: dict[str, Any]) -> str:
    return [message["content"] for message in body["messages"] if message["role"] == "user"][-1]
