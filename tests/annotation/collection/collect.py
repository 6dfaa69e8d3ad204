"""Shared set-up for the collection workflow's specs: small projects and the people working in them.

``SMALL`` trees hold a prompt and three replies (goal size 4, depth 2, two
replies per message), each message needs two reviews and each branch point
two rankings; every label task is in full mode and reply tasks go to any
parent (no lonely-child preference), so that nothing is left to chance.
"""

from __future__ import annotations

import random
from typing import Any

from django.utils import timezone

from annotation.collection.lottery import lottery_run
from annotation.collection.models import Task
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_next, workflow_config
from annotation.models import Membership, Project
from annotation.projects.services import membership_add
from tests.factories import CollectProjectFactory, PersonaFactory
from trees.models import ConversationTree, Message

SMALL = {
    "goal_tree_size": 4,
    "max_tree_depth": 2,
    "max_children_count": 2,
    "num_reviews_initial_prompt": 2,
    "num_reviews_reply": 2,
    "num_required_rankings": 2,
    "p_full_labeling_review_prompt": 1.0,
    "p_full_labeling_review_reply_assistant": 1.0,
    "p_full_labeling_review_reply_prompter": 1.0,
    "p_lonely_child_extension": 0.0,
}
NOT_SPAM = {"spam": 0, "lang_mismatch": 0}
SPAM = {"spam": 1, "lang_mismatch": 0}


def person(name: str) -> Any:
    return PersonaFactory(username=name)


def collect_project(members: list[Any], **workflow: Any) -> Project:
    """A collect project with ``SMALL`` settings (overridden by ``workflow``), ``members`` as annotators."""
    project = CollectProjectFactory(workflow=SMALL | workflow)
    for member in members:
        membership_add(project=project, user=member, role=Membership.Role.ANNOTATOR)
    return project


def done(project: Project, user: Any, task_type: str, data: Any, message: Message | None = None) -> Task:
    """Ask for a task of ``task_type`` (on ``message``) and submit ``data`` for it."""
    task = task_next(project=project, user=user, task_type=task_type, message=message)
    return task_submit(project=project, task_id=task.pk, user=user, data=data)


def prompt(project: Project, user: Any, text: str = "How do I keep basil alive?") -> Message:
    return done(project, user, "initial_prompt", {"text": text}).created_message


def reply(project: Project, user: Any, parent: Message, text: str = "A reply.") -> Message:
    task_type = "assistant_reply" if parent.role == "user" else "prompter_reply"
    return done(project, user, task_type, {"text": text}, parent).created_message


def label_type(message: Message) -> str:
    if message.parent_id is None:
        return "label_initial_prompt"
    return "label_assistant_reply" if message.role == "assistant" else "label_prompter_reply"


def review(project: Project, users: list[Any], message: Message, labels: dict | None = None) -> None:
    """Each of ``users`` reviews ``message`` (not spam, unless ``labels`` says otherwise)."""
    for user in users:
        done(project, user, label_type(message), {"labels": labels or NOT_SPAM}, message)


def rank(project: Project, user: Any, parent: Message, best_first: list[Message]) -> Task:
    task_type = "rank_assistant_replies" if parent.role == "user" else "rank_prompter_replies"
    return done(project, user, task_type, {"ranking": [m.external_id for m in best_first]}, parent)


def draw_lottery(project: Project) -> int:
    """Run the prompt lottery, as every request for a task does."""
    config = workflow_config(project)
    return lottery_run(
        project=project, config=config, now=timezone.now(), rng=random.Random(0), max_activate=99
    )


def state(thing: ConversationTree | Message) -> str:
    tree_id = thing.tree_id if isinstance(thing, Message) else thing.pk
    return ConversationTree.objects.get(pk=tree_id).state


def fresh(message: Message) -> Message:
    return Message.objects.get(pk=message.pk)
