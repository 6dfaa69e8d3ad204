"""The world the API's specs run in: two projects' worth of trees and people, with tokens.

Personas (``PERSONAS``): Root is a superuser; Maggie manages project alpha,
Alice annotates it and Rita reviews it; Bob annotates project beta; Dana manages
project delta, which shares beta's dataset (she has no role in beta). Olga
annotates alpha too, but only as a bystander whose answers nobody else's
token may read. A revoked token (Maggie's) and anonymous requests complete
the matrix.

Markers that must not leak: ``ALPACA`` is in alpha's trees, ``ZEBRA`` in
beta's, ``OTTER`` in Olga's answer.

Alpha exists twice: ``alpha`` judges trees (annotate mode) and
``alpha-collect`` grows them (collect mode), with the same people in the
same roles, so that every endpoint meets every role.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.test import Client

from annotation.api.tokens import token_create, tokens_revoke
from annotation.collection.models import Deletion, Task
from annotation.collection.moderation import message_delete, tree_halt
from annotation.collection.tasks import task_next
from annotation.exports.tasks import ANNOTATIONS_EXPORT, annotations_export_job
from annotation.models import Assignment, Membership, Project
from annotation.projects.services import membership_add, project_create
from annotation.webhooks.services import webhook_create
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from evaluation.llm.judges import judge_create
from evaluation.llm.services import endpoint_create
from evaluation.services import project_evaluate
from tests.annotation.annotator_items import person
from tests.annotation.collection.collect import SMALL, prompt
from tests.factories import CollectProjectFactory, DatasetFactory, RubricFactory
from trees.jobs.models import Job
from trees.models import ConversationTree, Message
from trees.services import tree_import

SUPERUSER, MANAGER, ANNOTATOR, REVIEWER, OUTSIDER, SHARER, ANONYMOUS, REVOKED = PERSONAS = (
    "superuser",
    "manager_a",
    "annotator_a",
    "reviewer_a",
    "annotator_b",
    "manager_d",
    "anonymous",
    "revoked",
)

ALPHA_MARK, BETA_MARK, OTHER_MARK = "ALPACA", "ZEBRA", "OTTER"

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
  - {annotation_type: text, name: note, description: Note}
assignment: {annotations_per_item: 2}
"""


def potato_items(prefix: str, mark: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}-{index}",
            "tree": {
                "id": "root",
                "role": "user",
                "content": f"{mark} question {index}",
                "children": [
                    {"id": "a1", "role": "assistant", "content": f"{mark} answer one"},
                    {"id": "a2", "role": "assistant", "content": f"{mark} answer two"},
                ],
            },
        }
        for index in range(count)
    ]


def session_client(user: Any) -> Client:
    """A client signed in as ``user`` (the pages' way in: the session, no token)."""
    client = Client()
    client.force_login(user)
    return client


def dataset_with(name: str, items: list[dict[str, Any]]) -> Any:
    dataset = DatasetFactory(name=name)
    lines = "\n".join(json.dumps(item) for item in items)
    report = tree_import(dataset=dataset, source=io.BytesIO(lines.encode()), format_name="potato")
    assert report.committed, report.summary()
    return dataset


def rows_digest() -> dict[str, str]:
    """Every table's rows, hashed by model: what a refused request must leave as it was (aside
    from what any request may note: the throttle's counts of requests, and a token's
    ``last_used_at``)."""
    digests = {}
    for model in apps.get_models():
        if model._meta.label == "annotation.RateWindow":
            continue
        names = [field.attname for field in model._meta.concrete_fields if field.name != "last_used_at"]
        rows = model._default_manager.order_by("pk").values_list(*names)
        digests[model._meta.label] = hashlib.sha256(repr(list(rows)).encode()).hexdigest()
    return digests


@dataclass
class World:
    users: dict[str, Any]
    tokens: dict[str, str]  # persona -> secret (anonymous has none)
    alpha: Project
    beta: Project
    collect: Project
    held: Assignment  # Alice's leased item in alpha
    other_answer_id: int  # Olga's submitted note in alpha (OTHER_MARK)
    olga_membership_id: int
    alpha_tree: ConversationTree
    beta_tree: ConversationTree
    task: Task  # Alice's leased review task in alpha-collect
    collected: str  # a growing collected tree's id
    halted: str  # a halted collected tree's id
    message: str  # the growing tree's prompt
    deletion: Deletion
    rubric: str
    extra: dict[str, Any] = field(default_factory=dict)
    webhook_id: int = 0  # alpha's webhook
    job_id: int = 0  # Maggie's export job of alpha, waiting
    judge: str = ""  # a model judge's name (its report in alpha)

    def headers(self, persona: str) -> dict[str, str]:
        token = self.tokens.get(persona)
        return {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}


def build_world() -> World:
    users = {
        SUPERUSER: person("root", is_superuser=True, is_staff=True),
        MANAGER: person("maggie"),
        ANNOTATOR: person("alice"),
        REVIEWER: person("rita"),
        OUTSIDER: person("bob"),
        SHARER: person("dana"),
    }
    olga, helper = person("olga"), person("hank")
    alpha_data = dataset_with("alpha-trees", potato_items("alpha", ALPHA_MARK, 3))
    beta_data = dataset_with("beta-trees", potato_items("beta", BETA_MARK, 2))
    alpha = project_create(name="alpha", dataset=alpha_data, config_yaml=CONFIG)
    beta = project_create(name="beta", dataset=beta_data, config_yaml=CONFIG)
    delta = project_create(name="delta", dataset=beta_data, config_yaml=CONFIG)

    collect = CollectProjectFactory(
        name="alpha-collect", workflow=SMALL | {"max_active_trees": 5, "max_initial_prompt_review": 5}
    )
    for project in (alpha, collect):
        membership_add(project=project, user=users[MANAGER], role=Membership.Role.MANAGER)
        membership_add(project=project, user=users[ANNOTATOR], role=Membership.Role.ANNOTATOR)
        membership_add(project=project, user=users[REVIEWER], role=Membership.Role.REVIEWER)
    olga_membership = membership_add(project=alpha, user=olga, role=Membership.Role.ANNOTATOR)
    membership_add(project=beta, user=users[OUTSIDER], role=Membership.Role.ANNOTATOR)
    membership_add(project=delta, user=users[SHARER], role=Membership.Role.MANAGER)
    membership_add(project=collect, user=helper, role=Membership.Role.ANNOTATOR)

    # Olga answers the first item; Alice then holds the same one (two answers per item).
    olga_item = item_next(project=alpha, user=olga)
    item_submit(
        project=alpha,
        tree=olga_item.tree,
        user=olga,
        answers={"quality": {"rating": 2}, "note": {"text": f"{OTHER_MARK} thinks so"}},
        version=olga_item.version,
    )
    held = item_next(project=alpha, user=users[ANNOTATOR])
    item_next(project=beta, user=users[OUTSIDER])

    growing = prompt(collect, helper, "How do I keep basil alive?")
    halted = prompt(collect, helper, "How do I repot a fern?")
    tree_halt(project=collect, tree_id=halted.tree_id)
    third = prompt(collect, helper, "Which soil for cacti?")
    deletion = message_delete(project=collect, message=third, by=users[MANAGER], reason="off topic")
    task = task_next(
        project=collect, user=users[ANNOTATOR], task_type="label_initial_prompt", message=growing
    )

    rubric = RubricFactory()
    project_evaluate(project=alpha, rubric=rubric)
    # A model judge: alpha has no rubric scheme, so a run it may start is refused (400) before
    # anything is queued, and nothing is asked of the endpoint (nothing listens there).
    judge_create(
        name="critic",
        kind="rubric",
        endpoint=endpoint_create(name="world-model", base_url="http://127.0.0.1:9/v1", model="m"),
    )

    tokens = {persona: token_create(user=user, name=persona).secret for persona, user in users.items()}
    revoked = token_create(user=users[MANAGER], name="revoked")
    tokens_revoke(type(revoked.token).objects.filter(pk=revoked.token.pk))
    tokens[REVOKED] = revoked.secret

    from annotation.models import Annotation

    return World(
        users=users,
        tokens=tokens,
        alpha=alpha,
        beta=beta,
        collect=collect,
        held=held,
        other_answer_id=Annotation.objects.get(user=olga, scheme="note").pk,
        olga_membership_id=olga_membership.pk,
        alpha_tree=held.tree,
        beta_tree=ConversationTree.objects.filter(dataset=beta_data).first(),
        task=task,
        collected=growing.external_id,
        halted=Message.objects.get(pk=halted.pk).external_id,
        message=growing.external_id,
        deletion=deletion,
        rubric=rubric.name,
        webhook_id=webhook_create(
            project=alpha, url="https://hooks.example.com/alpha", secret="x" * 20, events=["item.submitted"]
        ).pk,
        job_id=Job.objects.create(
            kind=ANNOTATIONS_EXPORT,
            task_path=annotations_export_job.module_path,
            created_by=users[MANAGER],
            project_name="alpha",
            params={"format": "potato"},
        ).pk,
        judge=model_judge().name,
    )


def model_judge() -> Any:
    """A model judge (no answers yet: its report says so)."""
    endpoint = endpoint_create(name="world-local", base_url="http://127.0.0.1:9/v1", model="m")
    return judge_create(name="world-judge", kind="comparison", endpoint=endpoint)
