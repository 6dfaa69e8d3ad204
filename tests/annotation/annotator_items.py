"""Projects, trees and people for the annotator's tests (API loop, pages, browser).

Plain functions, not fixtures: each test file names its own personas.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from annotation.models import Membership, Project
from annotation.projects.services import membership_add, project_create
from tests.factories import DatasetFactory, UserFactory
from trees.models import ConversationTree
from trees.services import tree_import

POTATO = Path(__file__).resolve().parents[1] / "fixtures" / "potato"
SEED_ITEM: dict[str, Any] = json.loads((POTATO / "seed_conversation.json").read_text())
SEED_EXPECTED: dict[str, Any] = json.loads((POTATO / "seed_expected_output.json").read_text())
# The five documented tree_annotation configs, one YAML text each.
SEED_CONFIGS: list[str] = (POTATO / "seed_configs.yaml").read_text().split("\n---\n")
RESPONSE_QUALITY, RESPONSE_RATING, BEST_PATH, MULTI_CRITERIA, BRANCH_COMPARE = SEED_CONFIGS


def person(username: str, **fields: Any) -> Any:
    """A user who signs in with ``force_login`` (no usable password: hashing one costs half a second).

    The session is signed with the stored password field, so the user is
    saved after the factory sets it (the factory skips that second save).
    """
    user = UserFactory(username=username, password=None, **fields)
    user.save()
    return user


def bushy_item(item_id: str, size: int) -> dict[str, Any]:
    """A Potato item of ``size`` messages, three replies per message, breadth first.

    Nested only a few levels deep (log3 of the size), with a branch point at
    almost every inner node.
    """
    nodes = [{"id": "root", "role": "user", "content": "message 0", "children": []}]
    for index in range(1, size):
        parent = nodes[(index - 1) // 3]
        role = "assistant" if parent["role"] == "user" else "user"
        node = {"id": f"n{index}", "role": role, "content": f"message {index}", "children": []}
        parent["children"].append(node)
        nodes.append(node)
    return {"id": item_id, "tree": nodes[0]}


def trees_import(dataset_name: str, items: list[dict[str, Any]]) -> list[ConversationTree]:
    """Import Potato ``items`` into a new dataset, as an upload would."""
    dataset = DatasetFactory(name=dataset_name)
    source = io.BytesIO("\n".join(json.dumps(item) for item in items).encode())
    report = tree_import(dataset=dataset, source=source, format_name="potato")
    assert report.committed, report.summary()
    return list(ConversationTree.objects.filter(dataset=dataset).order_by("pk"))


def project_over(
    name: str,
    config_yaml: str,
    items: list[dict[str, Any]],
    annotators: list[Any] = (),
    **roles: list[Any],
) -> Project:
    """A project over newly imported ``items``, with ``annotators`` (and e.g. ``managers=[...]``)."""
    trees = trees_import(f"{name}-trees", items)
    project = project_create(name=name, dataset=trees[0].dataset, config_yaml=config_yaml)
    for user in annotators:
        membership_add(project=project, user=user, role=Membership.Role.ANNOTATOR)
    for plural, users in roles.items():
        for user in users:
            membership_add(project=project, user=user, role=plural.removesuffix("s"))
    return project


# A tree that branches twice: at its question (a1, b1) and at the follow-up under a1 (a2, a3).
TWO_BRANCHES = {
    "id": "two-branches",
    "tree": {
        "id": "q",
        "role": "user",
        "content": "Question",
        "children": [
            {
                "id": "a1",
                "role": "assistant",
                "content": "First answer",
                "children": [
                    {
                        "id": "u1",
                        "role": "user",
                        "content": "Follow-up",
                        "children": [
                            {"id": "a2", "role": "assistant", "content": "One"},
                            {"id": "a3", "role": "assistant", "content": "Two"},
                        ],
                    }
                ],
            },
            {"id": "b1", "role": "assistant", "content": "Second answer"},
        ],
    },
}
