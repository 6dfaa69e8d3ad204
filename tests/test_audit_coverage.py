"""Every service that changes data leaves its audit entry: a walk over all of them.

``SERVICE_MODULES`` lists the modules that hold services. Each of their
public functions is either walked (``WALKS``: called in a small world, and
exactly the entries it must write are checked — action, actor, target,
scope) or named in ``NOT_LOGGED`` with the reason it writes no entry of its
own. A new function in one of these modules that is in neither fails
``test_every_service_is_walked_or_says_why_not``, so a data-changing service
cannot be added without its entry. ``test_every_registered_action_is_walked``
keeps the other direction: no action is registered that nothing writes.

The same action from a page, the API (with a Bearer token) and the admin is
logged alike, with the actor and the channel: the last tests.

Personas: Root is a superuser (the admin, and who the walk's requests come
from); Alice and Bob annotate; Maggie manages.
"""

from __future__ import annotations

import importlib
import inspect
import io
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import get_commands, load_command_class
from django.db import transaction
from django.db.models import Max
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.api.tokens import token_create, tokens_revoke
from annotation.collection import lifecycle
from annotation.collection.advance import scoring_retry, tree_advance
from annotation.collection.backlog import backlog_activate, backlog_add
from annotation.collection.export import ExportFilters, collected_export
from annotation.collection.locks import tree_lock
from annotation.collection.lottery import lottery_run
from annotation.collection.moderation import (
    deletion_undo,
    message_delete,
    report_create,
    tree_halt,
    tree_resume,
)
from annotation.collection.scoring import tree_score
from annotation.collection.states import tree_enter
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_ack, task_nack, task_next, workflow_config
from annotation.exports import annotations_export
from annotation.imports.annotations import annotations_import
from annotation.models import ApiToken, Membership, Project, ProjectItem
from annotation.projects.services import (
    membership_add,
    membership_remove,
    project_config_update,
    project_create,
    project_update,
)
from annotation.quality.gold import GoldState, gold_item_set, gold_item_unmark, gold_items_mark, gold_restore
from annotation.quality.gold_imports import gold_import
from annotation.review.finals import final_save, finals_auto, gold_from_finals
from annotation.review.gold_marking import gold_from_work
from annotation.review.services import review_decide
from annotation.webhooks.events import deliveries_record
from annotation.webhooks.models import Delivery
from annotation.webhooks.services import deliveries_replay, webhook_create, webhook_delete, webhook_update
from annotation.work.assignment import item_next
from annotation.work.submissions import draft_save, item_skip, item_submit
from evaluation.llm.judges import judge_create, judge_delete, judge_update
from evaluation.llm.services import endpoint_create, endpoint_delete, endpoint_update
from evaluation.models import Rubric
from evaluation.services import judgments_combine, project_evaluate, rubric_save
from tests.annotation.annotator_items import person, project_over
from tests.annotation.collection.collect import collect_project, prompt, review
from tests.evaluation.samples import CONVERSATIONS, CRITERIA, scheduling_project
from tests.factories import AnnotationFactory, RubricFactory
from trees.audit import AuditedCommand, audit_context, registered_actions
from trees.branches import NewReply, replies_add
from trees.deletion import dataset_delete
from trees.models import AuditEntry, ConversationTree, Dataset, Message
from trees.services import (
    dataset_create,
    dataset_get_or_create,
    dataset_update,
    messages_render,
    tree_import,
    trees_export,
)
from trees.vocabulary import GROWING, READY_FOR_SCORING, SCORING_FAILED

pytestmark = pytest.mark.django_db

SERVICE_MODULES = [
    "trees.services",
    "trees.deletion",
    "trees.store",
    "annotation.projects.config",
    "annotation.projects.services",
    "annotation.projects.references",
    "annotation.work.assignment",
    "annotation.work.submissions",
    "annotation.imports.annotations",
    "annotation.imports.records",
    "annotation.api.tokens",
    "annotation.exports",
    "annotation.review.services",
    "annotation.review.finals",
    "annotation.review.gold_marking",
    "annotation.quality.gold",
    "annotation.quality.gold_imports",
    "annotation.quality.gold_scoring",
    "annotation.quality.training",
    "annotation.quality.report",
    "annotation.collection.tasks",
    "annotation.collection.submissions",
    "annotation.collection.annotations",
    "annotation.collection.moderation",
    "annotation.collection.states",
    "annotation.collection.advance",
    "annotation.collection.lottery",
    "annotation.collection.backlog",
    "annotation.collection.scoring",
    "annotation.collection.export",
    "annotation.collection.locks",
    "evaluation.services",
    "evaluation.rubrics",
    "evaluation.judgments",
    "annotation.webhooks.services",
    "annotation.webhooks.events",
    "annotation.webhooks.sending",
    "evaluation.llm.services",
    "evaluation.llm.judges",
    "trees.branches",
    "evaluation.llm.generation",
]

# Functions of those modules that write no entry of their own, and why.
NOT_LOGGED = {
    "evaluation.llm.services.endpoint_test": "a request to the model, in the usage ledger; changes nothing",
    "evaluation.llm.judges.judge_account_name": "names an account",
    "evaluation.llm.judges.is_judge_account": "a test of a name",
    "trees.branches.nodes_to_grow": "pure",
    "trees.branches.conversation_path": "pure",
    "evaluation.llm.generation.run_key": "pure",
    "evaluation.llm.generation.reply_id": "pure",
    "evaluation.llm.generation.trees_plan": "a read",
    "evaluation.llm.generation.branches_grow": "adds each reply through trees.branches.replies_add (walked), "
    "which logs it; its requests are in the usage ledger",
    # Reads, and pure functions over plain data.
    "trees.services.counted": "formats a count",
    "trees.services.open_source": "wraps a file for reading",
    "trees.store.existing_tree_ids": "a read",
    "trees.store.gc_paused": "a context manager for bulk work",
    "trees.store.tree_records": "a read",
    "trees.deletion.dataset_protected_by": "a read",
    "annotation.projects.config.project_config": "a read",
    "annotation.projects.config.parse_config": "pure",
    "annotation.projects.config.config_from_data": "pure",
    "annotation.work.submissions.item_answers": "a read",
    "annotation.work.submissions.item_assignment": "a read",
    "annotation.imports.annotations.names": "formats names",
    "annotation.imports.records.records_feed": "reads records for an import, which logs itself",
    "annotation.projects.references.spans_from_segments": "pure",
    "annotation.projects.references.imports_references": "pure",
    "annotation.api.tokens.token_hash": "pure",
    "annotation.api.tokens.tokens_forget": "empties this process's memory of read tokens",
    "annotation.exports.get_export": "a lookup",
    "annotation.quality.gold.gold_answers_check": "pure",
    "annotation.quality.gold.needs_shape": "pure",
    "annotation.quality.gold.gold_answers_normalize": "a read",
    "annotation.work.assignment.gold_pick": "a read, under item_next (walked), which writes the assignment",
    "annotation.quality.gold.item_gold_score": "a read, under item_submit (walked)",
    "annotation.quality.gold_scoring.answers_score": "pure",
    "annotation.quality.gold_scoring.is_scored": "pure",
    "annotation.quality.gold_scoring.scheme_score": "pure",
    "annotation.quality.gold_scoring.scored_schemes": "pure",
    "annotation.quality.gold_scoring.scorer": "pure",
    "annotation.quality.gold_scoring.spans_f1": "pure",
    "annotation.quality.training.training_feedback": "a read",
    "annotation.quality.training.training_state": "pure",
    "evaluation.services.rubric_parse_storable": "a read: checks YAML, saves nothing",
    "annotation.webhooks.events.event_emit": "records deliveries, the machinery's own bookkeeping of "
    "an event that its service logged",
    "annotation.webhooks.events.deliveries_record": "the same, once the transaction commits",
    "annotation.webhooks.events.on_item_submitted": "a signal receiver: event_emit",
    "annotation.webhooks.events.on_review_saved": "a signal receiver: event_emit",
    "annotation.webhooks.events.on_item_finalised": "a signal receiver: event_emit",
    "annotation.webhooks.events.on_tree_finished": "a signal receiver: event_emit",
    "annotation.webhooks.sending.url_problem": "pure",
    "annotation.webhooks.sending.delivery_body": "pure",
    "annotation.webhooks.sending.delivery_send": "an attempt's outcome on its delivery row, shown in the admin",
    "annotation.webhooks.sending.deliveries_send": "delivery_send for each due delivery",
    "annotation.quality.training.training_status": "a read",
    "annotation.quality.report.is_flagged": "pure",
    "annotation.quality.report.project_quality": "a read",
    "annotation.collection.tasks.workflow_config": "a read",
    "annotation.collection.tasks.task_locked": "takes a lock, writes nothing",
    "annotation.collection.tasks.task_check_open": "a check",
    "annotation.collection.tasks.task_reclaim": "a check, under the task's locks",
    "annotation.collection.tasks.task_audit": "the entry of task_ack, task_nack and task_submit (walked)",
    "annotation.collection.tasks.tasks_available": "counts; the lottery it runs first logs (lottery_run)",
    "annotation.collection.states.ranked_roles": "pure",
    "annotation.collection.states.ranking_groups": "pure",
    "annotation.collection.states.tree_facts": "a read",
    "annotation.collection.lottery.lottery_needed": "pure",
    "annotation.collection.scoring.consensus_ranks": "pure",
    "annotation.collection.export.collected_records": "a read, under collected_export (walked)",
    "annotation.collection.locks.message_lock": "takes a lock, writes nothing",
    "annotation.collection.locks.project_lock": "takes a lock, writes nothing",
    "annotation.collection.locks.tree_lock": "takes a lock, writes nothing",
    "annotation.collection.locks.user_lock": "takes a lock, writes nothing",
    "annotation.collection.locks.rows_lock": "a database feature",
    "evaluation.services.automatic_verdicts": "pure",
    "evaluation.services.rubric_scheme_names": "a read",
    "evaluation.services.rubric_spec": "a read",
    "evaluation.services.rubric_version_current": "a read",
    "evaluation.rubrics.parse_rubric": "pure",
    "evaluation.rubrics.rubric_from_data": "pure",
    "evaluation.judgments.criterion_agreement": "pure",
    "evaluation.judgments.majority": "pure",
    "evaluation.judgments.payload_units": "pure",
    "evaluation.judgments.vote_note": "pure",
    "evaluation.judgments.votes_collect": "pure",
    # Writes that are a part of a walked service, whose entry covers them.
    "trees.store.allocate_ids": "part of tree_import and project_evaluate (bulk writes)",
    "trees.store.insert_rows": "part of tree_import and project_evaluate (bulk writes)",
    "trees.store.trees_store": "part of tree_import",
    "trees.store.messages_html_refresh": "part of messages_render (walked)",
    "annotation.projects.services.project_items_sync": "part of project_create and of tree imports: items follow the dataset",
    "annotation.projects.services.user_get_or_create_unusable": "part of annotations_import, whose entry names the accounts",
    "annotation.projects.references.reference_user": (
        "part of imported_spans_sync: the account reference answers belong to"
    ),
    "annotation.projects.references.imported_spans_sync": "part of project_create, project_config_update and tree imports",
    "annotation.work.assignment.leases_reclaim": "part of item_next: a lapsed lease ends by itself, nobody ends it",
    "annotation.work.assignment.item_lease": "what item_next (walked) runs, returning the answers it knows too",
    "annotation.collection.annotations.review_record": "part of task_submit",
    "annotation.collection.annotations.ranking_record": "part of task_submit",
    "annotation.collection.backlog.backlog_after_finish": "part of tree_enter; the trees it moves log (tree_enter)",
    "annotation.api.tokens.token_authenticate": "notes last_used_at at most once a minute: a hint, not an action",
}


# -- the world -------------------------------------------------------------------------------

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5, min_label: Poor, max_label: Excellent}
  - {annotation_type: text, name: note, description: Note}
"""
ITEMS = [
    {
        "id": f"item-{index}",
        "tree": {
            "id": "root",
            "role": "user",
            "content": f"question {index}",
            "children": [{"id": "a1", "role": "assistant", "content": "an answer"}],
        },
    }
    for index in range(2)
]
Row = tuple[str, str, str, str, str]  # action, actor, target type, target, scope


@dataclass
class World:
    root: Any
    alice: Any
    bob: Any
    maggie: Any
    project: Project
    logged: list[Row] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def dataset(self) -> Dataset:
        return self.project.dataset

    @property
    def collect(self) -> Project:
        """A collect project with SMALL settings; Alice, Bob, Carol and Dave grow its trees."""
        if "collect" not in self.extra:
            people = [self.alice, self.bob, person("carol"), person("dave")]
            self.extra["collect"] = collect_project(people, max_active_trees=5)
        return self.extra["collect"]

    @contextmanager
    def acting(self) -> Iterator[None]:
        """The service call walked: as a request of Root's would make it; the entries it writes."""
        before = AuditEntry.objects.aggregate(last=Max("id"))["last"] or 0
        with audit_context(actor=self.root, via=AuditEntry.Via.WEB):
            yield
        self.logged = [
            (entry.action, entry.actor_name, entry.target_type, entry.target_repr, entry.scope)
            for entry in AuditEntry.objects.filter(id__gt=before).order_by("id")
        ]


def build_world() -> World:
    root = person("root", is_superuser=True, is_staff=True)
    alice, bob, maggie = person("alice"), person("bob"), person("maggie")
    project = project_over("judge", CONFIG, ITEMS, annotators=[alice, bob], managers=[maggie])
    return World(root=root, alice=alice, bob=bob, maggie=maggie, project=project)


@pytest.fixture
def world() -> World:
    return build_world()


def first_tree(world: World) -> ConversationTree:
    return ConversationTree.objects.filter(dataset=world.dataset).order_by("pk").first()


def potato(items: list[dict[str, Any]]) -> io.BytesIO:
    return io.BytesIO("\n".join(json.dumps(item) for item in items).encode())


# -- the walks: each sets its scene, calls the service inside ``acting`` and says what it logs ---

PROJECT = "annotation.project"
TREE = "trees.conversationtree"
DATASET = "trees.dataset"
USER = "auth.user"
TOKEN = "annotation.apitoken"
TASK = "collection.task"
MESSAGE = "trees.message"
RUBRIC = "evaluation.rubric"


def walk_dataset_create(w: World) -> list[Row]:
    with w.acting():
        dataset_create(name="fresh", description="new trees")
    return [("dataset.create", "root", DATASET, "fresh", "fresh")]


def walk_dataset_get_or_create(w: World) -> list[Row]:
    with w.acting():
        dataset_get_or_create("fresh")
        dataset_get_or_create("fresh")  # found the second time: nothing new
    return [("dataset.create", "root", DATASET, "fresh", "fresh")]


def walk_dataset_update(w: World) -> list[Row]:
    w.dataset.description = "shop reviews"
    with w.acting():
        dataset_update(dataset=w.dataset, fields=["description"])
    return [("dataset.update", "root", DATASET, "judge-trees", "judge-trees")]


def walk_dataset_delete(w: World) -> list[Row]:
    spare = dataset_create(name="spare")
    with w.acting():
        dataset_delete(dataset=spare)
    return [("dataset.delete", "root", DATASET, "spare", "spare")]


def walk_tree_import(w: World) -> list[Row]:
    more = [{"id": "item-9", "tree": {"id": "r", "role": "user", "content": "more"}}]
    with w.acting():
        assert tree_import(dataset=w.dataset, source=potato(more), format_name="potato").committed
    return [("trees.import", "root", DATASET, "judge-trees", "judge-trees")]


def walk_trees_export(w: World) -> list[Row]:
    with w.acting():
        list(trees_export(dataset=w.dataset, format_name="potato"))
    return [("trees.export", "root", DATASET, "judge-trees", "judge-trees")]


def walk_messages_render(w: World) -> list[Row]:
    Message.objects.filter(tree__dataset=w.dataset).update(html_version=0)
    with w.acting():
        assert messages_render() > 0
        messages_render()  # nothing left to render: nothing logged
    return [("messages.render", "root", "", "", "")]


def walk_replies_add(w: World) -> list[Row]:
    tree = ConversationTree.objects.get(dataset=w.dataset, external_id="item-0")
    root = Message.objects.get(tree=tree, parent=None)
    reply = NewReply(external_id="gen-1", text="A reply.", model_name="m")
    with w.acting():
        assert len(replies_add(tree_id=tree.pk, parent_id=root.pk, replies=[reply])) == 1
        assert replies_add(tree_id=tree.pk, parent_id=root.pk, replies=[reply]) == []  # there: nothing logged
    return [("replies.add", "root", TREE, "item-0", "judge-trees")]


def walk_project_create(w: World) -> list[Row]:
    with w.acting():
        project_create(name="second", dataset=w.dataset, config_yaml=CONFIG)
    return [("project.create", "root", PROJECT, "second", "second")]


def walk_project_update(w: World) -> list[Row]:
    w.project.title = "Judge the answers"
    with w.acting():
        project_update(project=w.project, fields=["title"])
    return [("project.update", "root", PROJECT, "Judge the answers", "judge")]


def walk_project_config_update(w: World) -> list[Row]:
    with w.acting():
        project_config_update(
            project=w.project, config_yaml=CONFIG + "assignment: {annotations_per_item: 2}\n"
        )
    return [("project.config_update", "root", PROJECT, "judge", "judge")]


def walk_membership_add(w: World) -> list[Row]:
    with w.acting():
        membership_add(project=w.project, user=w.alice, role=Membership.Role.REVIEWER)
        membership_add(project=w.project, user=w.alice, role=Membership.Role.REVIEWER)  # had it: nothing
    return [("membership.add", "root", USER, "alice", "judge")]


def walk_membership_remove(w: World) -> list[Row]:
    with w.acting():
        membership_remove(project=w.project, user=w.bob, role=Membership.Role.ANNOTATOR)
        membership_remove(project=w.project, user=w.bob, role=Membership.Role.ANNOTATOR)  # gone: nothing
    return [("membership.remove", "root", USER, "bob", "judge")]


def walk_item_next(w: World) -> list[Row]:
    with w.acting():
        item_next(project=w.project, user=w.alice)
        item_next(project=w.project, user=w.alice)  # the same item again: the lease renewed, not new
    return [("assignment.lease", "alice", TREE, "item-0", "judge")]


def walk_draft_save(w: World) -> list[Row]:
    held = item_next(project=w.project, user=w.alice)
    with w.acting():
        first = draft_save(
            project=w.project, tree=held.tree, user=w.alice, answers={"quality": {"rating": 2}}, version=1
        )
        draft_save(
            project=w.project,
            tree=held.tree,
            user=w.alice,
            answers={"quality": {"rating": 3}},
            version=first.version,
        )
    return [
        ("annotation.create", "alice", TREE, "item-0", "judge"),
        ("annotation.update", "alice", TREE, "item-0", "judge"),
    ]


def walk_item_submit(w: World) -> list[Row]:
    held = item_next(project=w.project, user=w.alice)
    with w.acting():
        item_submit(
            project=w.project, tree=held.tree, user=w.alice, answers={"quality": {"rating": 4}}, version=1
        )
    return [("annotation.submit", "alice", TREE, "item-0", "judge")]


def walk_item_skip(w: World) -> list[Row]:
    held = item_next(project=w.project, user=w.alice)
    with w.acting():
        item_skip(project=w.project, tree=held.tree, user=w.alice, version=1)
        item_skip(project=w.project, tree=held.tree, user=w.alice)  # skipped already: nothing
    return [("annotation.skip", "alice", TREE, "item-0", "judge")]


def walk_annotations_import(w: World) -> list[Row]:
    record = {
        "id": "item-1",
        "user": "erin",
        "status": "submitted",
        "annotations": {"quality": {"rating": 5}},
    }
    with w.acting():
        assert annotations_import(project=w.project, source=potato([record])).committed
    return [
        ("membership.add", "root", USER, "erin", "judge"),  # a new account, made an annotator
        ("annotations.import", "root", PROJECT, "judge", "judge"),
    ]


def walk_annotations_export(w: World) -> list[Row]:
    with w.acting():
        lines = annotations_export(project=w.project, format_name="potato")
    assert w.logged == []  # nothing is written (or read) until the export is read
    with w.acting():
        list(lines)
    return [("annotations.export", "root", PROJECT, "judge", "judge")]


def walk_review_decide(w: World) -> list[Row]:
    held = item_next(project=w.project, user=w.alice)
    done = item_submit(
        project=w.project, tree=held.tree, user=w.alice, answers={"quality": {"rating": 4}}, version=1
    )
    with w.acting():
        review_decide(reviewer=w.maggie, assignment=done, decision="rejected", comment="why 4?", version=2)
    return [("annotation.review", "maggie", TREE, "item-0", "judge")]


def adjudicable(w: World, *, auto: bool = False) -> tuple[Project, int]:
    """A project whose one item Alice and Bob both rated 4 (complete: two a item)."""
    extra = "quality: {adjudication: {auto: majority, min_agreement: 1.0}}\n" if auto else ""
    project = project_over(
        "adjudicated",
        CONFIG + "assignment: {annotations_per_item: 2}\n" + extra,
        ITEMS[:1],
        annotators=[w.alice, w.bob],
        managers=[w.maggie],
    )
    for user in (w.alice, w.bob):
        held = item_next(project=project, user=user)
        item_submit(project=project, tree=held.tree, user=user, answers={"quality": {"rating": 4}}, version=1)
    return project, held.tree_id


def walk_final_save(w: World) -> list[Row]:
    project, tree_id = adjudicable(w)
    with w.acting():
        final_save(project=project, tree_id=tree_id, by=w.maggie, version=0, take="bob")
    return [("final.save", "maggie", TREE, "item-0", "adjudicated")]


def walk_finals_auto(w: World) -> list[Row]:
    project, _ = adjudicable(w, auto=True)
    with w.acting():
        finals_auto(project=project)
        finals_auto(project=project)  # final already: nothing
    return [("final.auto", "", TREE, "item-0", "adjudicated")]


def walk_gold_from_finals(w: World) -> list[Row]:
    project, tree_id = adjudicable(w)
    final_save(project=project, tree_id=tree_id, by=w.maggie, version=0, take="bob")
    with w.acting():
        gold_from_finals(project=project)
    return [("gold.set", "root", TREE, "item-0", "adjudicated")]


def walk_gold_item_set(w: World) -> list[Row]:
    item = ProjectItem.objects.get(project=w.project, tree=first_tree(w))
    with w.acting():
        gold_item_set(item=item, answers={"quality": {"rating": 4}}, explanation="It answers.")
    return [("gold.set", "root", TREE, "item-0", "judge")]


def walk_gold_items_mark(w: World) -> list[Row]:
    item = ProjectItem.objects.get(project=w.project, tree=first_tree(w))
    gold_item_set(item=item, answers={"quality": {"rating": 4}}, is_gold=False)
    with w.acting():
        gold_items_mark(items=ProjectItem.objects.filter(project=w.project), is_gold=True)  # one has answers
        gold_items_mark(items=ProjectItem.objects.filter(project=w.project), is_gold=False)
    return [("gold.mark", "root", TREE, "item-0", "judge"), ("gold.unmark", "root", TREE, "item-0", "judge")]


def walk_gold_from_work(w: World) -> list[Row]:
    held = item_next(project=w.project, user=w.alice)
    done = item_submit(
        project=w.project, tree=held.tree, user=w.alice, answers={"quality": {"rating": 4}}, version=1
    )
    with w.acting():
        gold_from_work(assignment=done, version=done.version)
    return [("gold.set", "root", TREE, "item-0", "judge")]


def walk_gold_item_unmark(w: World) -> list[Row]:
    item = ProjectItem.objects.get(project=w.project, tree=first_tree(w))
    gold_item_set(item=item, answers={"quality": {"rating": 4}})
    with w.acting():
        gold_item_unmark(item=item)
    return [("gold.unmark", "root", TREE, "item-0", "judge")]


def walk_gold_restore(w: World) -> list[Row]:
    item = ProjectItem.objects.get(project=w.project, tree=first_tree(w))
    before = GoldState.of(item)
    gold_item_set(item=item, answers={"quality": {"rating": 4}})
    with w.acting():
        gold_restore(item=item, state=before, expected=GoldState.of(item))
    return [("gold.set", "root", TREE, "item-0", "judge")]


def walk_gold_import(w: World) -> list[Row]:
    record = {"id": "item-1", "annotations": {"quality": {"rating": 5}}}
    with w.acting():
        assert gold_import(project=w.project, source=potato([record])).committed
    return [("gold.import", "root", PROJECT, "judge", "judge")]


def walk_token_create(w: World) -> list[Row]:
    with w.acting():
        made = token_create(user=w.alice, name="ci")
    return [("token.create", "root", TOKEN, f"ci (bp_{made.token.prefix}_…)", "alice")]


def walk_tokens_revoke(w: World) -> list[Row]:
    made = [token_create(user=w.alice, name="ci"), token_create(user=w.bob, name="laptop")]
    with w.acting():
        assert tokens_revoke(ApiToken.objects.filter(user__in=[w.alice, w.bob])) == 2
        assert tokens_revoke(ApiToken.objects.all()) == 0  # revoked already: nothing
    return [
        ("token.revoke", "root", TOKEN, f"ci (bp_{made[0].token.prefix}_…)", "alice"),
        ("token.revoke", "root", TOKEN, f"laptop (bp_{made[1].token.prefix}_…)", "bob"),
    ]


def walk_task_next(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    with w.acting():
        task = task_next(project=w.collect, user=w.bob, task_type="label_initial_prompt", message=root)
    return [("task.lease", "bob", TASK, f"label_initial_prompt #{task.pk}", w.collect.name)]


def walk_task_ack(w: World) -> list[Row]:
    task = task_next(project=w.collect, user=w.alice, task_type="initial_prompt")
    with w.acting():
        task_ack(project=w.collect, task_id=task.pk, user=w.alice)
    return [("task.ack", "alice", TASK, f"initial_prompt #{task.pk}", w.collect.name)]


def walk_task_nack(w: World) -> list[Row]:
    task = task_next(project=w.collect, user=w.alice, task_type="initial_prompt")
    with w.acting():
        task_nack(project=w.collect, task_id=task.pk, user=w.alice, reason="no idea")
    return [("task.skip", "alice", TASK, f"initial_prompt #{task.pk}", w.collect.name)]


def walk_task_submit(w: World) -> list[Row]:
    task = task_next(project=w.collect, user=w.alice, task_type="initial_prompt")
    with w.acting():
        task_submit(project=w.collect, task_id=task.pk, user=w.alice, data={"text": "How do I prune roses?"})
    return [("task.submit", "alice", TASK, f"initial_prompt #{task.pk}", w.collect.name)]


def walk_tree_halt(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    with w.acting():
        tree_halt(project=w.collect, tree_id=root.tree_id)
    return [("tree.halt", "root", TREE, root.external_id, w.collect.name)]


def walk_tree_resume(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    tree_halt(project=w.collect, tree_id=root.tree_id)
    with w.acting():
        tree_resume(project=w.collect, tree_id=root.tree_id)
    return [("tree.resume_unreviewed", "root", TREE, root.external_id, w.collect.name)]


def walk_message_delete(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    with w.acting():
        message_delete(project=w.collect, message=root, by=w.maggie, reason="spam")
    return [
        ("message.delete", "maggie", MESSAGE, root.external_id, w.collect.name),
        ("tree.halt", "root", TREE, root.external_id, w.collect.name),  # the prompt is gone: halted
    ]


def walk_deletion_undo(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    deletion = message_delete(project=w.collect, message=root, by=w.maggie, reason="spam")
    with w.acting():
        deletion_undo(project=w.collect, deletion=deletion, by=w.maggie)
    return [("message.restore", "maggie", MESSAGE, root.external_id, w.collect.name)]


def walk_report_create(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    with w.acting():
        report_create(project=w.collect, message=root, user=w.bob, reason="rude")
    return [("message.report", "bob", MESSAGE, root.external_id, w.collect.name)]


def walk_tree_enter(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    with w.acting():
        tree_enter(tree_lock(root.tree_id), lifecycle.HALT)
    return [("tree.halt", "root", TREE, root.external_id, w.collect.name)]


def walk_tree_advance(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    Message.objects.filter(pk=root.pk).update(review_result=True)  # its reviews are in: accepted
    config = workflow_config(w.collect)
    with w.acting():
        tree_advance(tree_lock(root.tree_id), config)
    return [("tree.prompt_accepted", "root", TREE, root.external_id, w.collect.name)]


def walk_lottery_run(w: World) -> list[Row]:
    import random

    root = prompt(w.collect, w.alice)
    carol = get_user_model().objects.get(username="carol")
    review(w.collect, [w.bob, carol], root)  # accepted: waiting for the lottery
    config = workflow_config(w.collect)
    with w.acting():
        lottery_run(project=w.collect, config=config, now=timezone.now(), rng=random.Random(0))
    return [("tree.lottery_won", "root", TREE, root.external_id, w.collect.name)]


def walk_backlog_add(w: World) -> list[Row]:
    tree_import(dataset=w.collect.dataset, source=potato(ITEMS[:1]), format_name="potato")
    with w.acting():
        backlog_add(project=w.collect)
    return [("backlog.add", "root", PROJECT, w.collect.name, w.collect.name)]


def walk_backlog_activate(w: World) -> list[Row]:
    two_replies = {
        "id": "ranked",
        "tree": {
            "id": "q",
            "role": "user",
            "content": "Which is better?",
            "children": [
                {"id": "r1", "role": "assistant", "content": "This."},
                {"id": "r2", "role": "assistant", "content": "That."},
            ],
        },
    }
    tree_import(dataset=w.collect.dataset, source=potato([two_replies]), format_name="potato")
    backlog_add(project=w.collect)
    with w.acting():
        backlog_activate(project=w.collect, count=1)
    return [("tree.backlog_activated", "root", TREE, "ranked", w.collect.name)]


def walk_tree_score(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    ConversationTree.objects.filter(pk=root.tree_id).update(state=READY_FOR_SCORING)
    with w.acting():
        tree_score(tree_lock(root.tree_id), workflow_config(w.collect))
    return [("tree.scored", "root", TREE, root.external_id, w.collect.name)]


def walk_scoring_retry(w: World) -> list[Row]:
    root = prompt(w.collect, w.alice)
    ConversationTree.objects.filter(pk=root.tree_id).update(state=SCORING_FAILED)
    with w.acting():
        scoring_retry(project=w.collect)
    return [
        ("tree.retry", "root", TREE, root.external_id, w.collect.name),
        ("tree.scored", "root", TREE, root.external_id, w.collect.name),  # nothing to rank: scored at once
    ]


def walk_collected_export(w: World) -> list[Row]:
    prompt(w.collect, w.alice)
    with w.acting():
        list(collected_export(project=w.collect, filters=ExportFilters(states=("initial_prompt_review",))))
    return [("collected.export", "root", PROJECT, w.collect.name, w.collect.name)]


def walk_rubric_save(w: World) -> list[Row]:
    yaml = "name: tone\ncriteria:\n  - {key: polite, question: 'Polite?', weight: 1}\noutcomes:\n  - {name: ok}\n"
    with w.acting():
        rubric_save(yaml_text=yaml, user=w.maggie)
        rubric_save(yaml_text=yaml, user=w.maggie)  # the same text: no new version, nothing
        rubric_save(yaml_text=yaml.replace("Polite?", "Is it polite?"))
    return [
        ("rubric.create", "maggie", RUBRIC, "tone", "tone"),
        ("rubric.version", "root", RUBRIC, "tone", "tone"),
    ]


WEBHOOK = "webhooks.webhook"
HOOK_URL = "https://hooks.example.com/in"


def walk_webhook_create(w: World) -> list[Row]:
    with w.acting():
        webhook_create(project=w.project, url=HOOK_URL, secret="x" * 16, events=["item.submitted"])
    return [("webhook.create", "root", WEBHOOK, f"judge → {HOOK_URL}", "judge")]


def walk_webhook_update(w: World) -> list[Row]:
    webhook = webhook_create(project=w.project, url=HOOK_URL, secret="x" * 16, events=["item.submitted"])
    with w.acting():
        webhook_update(webhook=webhook, active=False, secret="y" * 16)
    return [("webhook.update", "root", WEBHOOK, f"judge → {HOOK_URL}", "judge")]


def walk_webhook_delete(w: World) -> list[Row]:
    webhook = webhook_create(project=w.project, url=HOOK_URL, secret="x" * 16, events=["item.submitted"])
    with w.acting():
        webhook_delete(webhook=webhook)
    return [("webhook.delete", "root", WEBHOOK, f"judge → {HOOK_URL}", "judge")]


def walk_deliveries_replay(w: World) -> list[Row]:
    webhook = webhook_create(project=w.project, url=HOOK_URL, secret="x" * 16, events=["item.submitted"])
    deliveries_record(w.project.pk, "item.submitted", {"item": "one"})
    with w.acting():
        deliveries_replay(deliveries=Delivery.objects.filter(webhook=webhook))
    return [("webhook.replay", "root", "", "", "judge")]


ENDPOINT = "llm.modelendpoint"


def walk_endpoint_create(w: World) -> list[Row]:
    with w.acting():
        endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-secret")
    return [("endpoint.create", "root", ENDPOINT, "local (m)", "")]


def walk_endpoint_update(w: World) -> list[Row]:
    endpoint = endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    with w.acting():
        endpoint_update(endpoint=endpoint, changes={"model": "n"}, api_key="sk-secret")
    return [("endpoint.update", "root", ENDPOINT, "local (n)", "")]


def walk_endpoint_delete(w: World) -> list[Row]:
    endpoint = endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m")
    with w.acting():
        endpoint_delete(endpoint=endpoint)
    return [("endpoint.delete", "root", ENDPOINT, "local (m)", "")]


JUDGE = "llm.judge"


def _endpoint() -> Any:
    return endpoint_create(name="local", base_url="http://127.0.0.1:9/v1", model="m")


def walk_judge_create(w: World) -> list[Row]:
    endpoint = _endpoint()
    with w.acting():
        judge_create(name="helpful", kind="rubric", endpoint=endpoint)
    return [("judge.create", "root", JUDGE, "judge:helpful", "")]


def walk_judge_update(w: World) -> list[Row]:
    judge = judge_create(name="helpful", kind="rubric", endpoint=_endpoint())
    with w.acting():
        judge_update(judge=judge, changes={"max_attempts": 5})
    return [("judge.update", "root", JUDGE, "judge:helpful", "")]


def walk_judge_delete(w: World) -> list[Row]:
    judge = judge_create(name="helpful", kind="rubric", endpoint=_endpoint())
    with w.acting():
        judge_delete(judge=judge)
    return [("judge.delete", "root", JUDGE, "judge:helpful", "")]


def walk_project_evaluate(w: World) -> list[Row]:
    rubric = RubricFactory(
        yaml="name: tone\ncriteria:\n  - {key: polite, question: 'Polite?', weight: 1}\noutcomes:\n  - {name: ok}\n"
    )
    with w.acting():
        project_evaluate(project=w.project, rubric=rubric)
    return [("evaluation.run", "root", RUBRIC, "tone", "judge")]


def walk_judgments_combine(w: World) -> list[Row]:
    project = scheduling_project(items=CONVERSATIONS[:1])
    rubric = Rubric.objects.get(name="scheduling")
    tree = ConversationTree.objects.get(dataset=project.dataset, external_id="sched_001")
    verdicts = dict.fromkeys([*CRITERIA, "booking_confirmed"], True)
    AnnotationFactory(
        project=project, tree=tree, user=w.alice, scheme="review", payload={"criteria": verdicts}
    )
    with w.acting():
        judgments_combine(project=project, rubric=rubric)
        judgments_combine(project=project, rubric=rubric)  # nothing new: nothing written, nothing logged
    return [("evaluation.combine", "root", RUBRIC, str(rubric), "scheduling")]


WALKS: dict[str, Callable[[World], list[Row]]] = {
    "trees.services.dataset_create": walk_dataset_create,
    "trees.services.dataset_get_or_create": walk_dataset_get_or_create,
    "trees.services.dataset_update": walk_dataset_update,
    "trees.services.tree_import": walk_tree_import,
    "trees.deletion.dataset_delete": walk_dataset_delete,
    "trees.services.trees_export": walk_trees_export,
    "trees.services.messages_render": walk_messages_render,
    "annotation.projects.services.project_create": walk_project_create,
    "annotation.projects.services.project_update": walk_project_update,
    "annotation.projects.services.project_config_update": walk_project_config_update,
    "annotation.projects.services.membership_add": walk_membership_add,
    "annotation.projects.services.membership_remove": walk_membership_remove,
    "annotation.work.assignment.item_next": walk_item_next,
    "annotation.work.submissions.draft_save": walk_draft_save,
    "annotation.work.submissions.item_submit": walk_item_submit,
    "annotation.work.submissions.item_skip": walk_item_skip,
    "annotation.imports.annotations.annotations_import": walk_annotations_import,
    "annotation.exports.annotations_export": walk_annotations_export,
    "annotation.review.services.review_decide": walk_review_decide,
    "annotation.review.finals.final_save": walk_final_save,
    "annotation.review.finals.finals_auto": walk_finals_auto,
    "annotation.review.finals.gold_from_finals": walk_gold_from_finals,
    "annotation.quality.gold.gold_item_set": walk_gold_item_set,
    "annotation.quality.gold.gold_items_mark": walk_gold_items_mark,
    "annotation.quality.gold.gold_item_unmark": walk_gold_item_unmark,
    "annotation.quality.gold.gold_restore": walk_gold_restore,
    "annotation.review.gold_marking.gold_from_work": walk_gold_from_work,
    "annotation.quality.gold_imports.gold_import": walk_gold_import,
    "annotation.api.tokens.token_create": walk_token_create,
    "annotation.api.tokens.tokens_revoke": walk_tokens_revoke,
    "annotation.collection.tasks.task_next": walk_task_next,
    "annotation.collection.tasks.task_ack": walk_task_ack,
    "annotation.collection.tasks.task_nack": walk_task_nack,
    "annotation.collection.submissions.task_submit": walk_task_submit,
    "annotation.collection.moderation.tree_halt": walk_tree_halt,
    "annotation.collection.moderation.tree_resume": walk_tree_resume,
    "annotation.collection.moderation.message_delete": walk_message_delete,
    "annotation.collection.moderation.deletion_undo": walk_deletion_undo,
    "annotation.collection.moderation.report_create": walk_report_create,
    "annotation.collection.states.tree_enter": walk_tree_enter,
    "annotation.collection.advance.tree_advance": walk_tree_advance,
    "annotation.collection.lottery.lottery_run": walk_lottery_run,
    "annotation.collection.backlog.backlog_add": walk_backlog_add,
    "annotation.collection.backlog.backlog_activate": walk_backlog_activate,
    "annotation.collection.scoring.tree_score": walk_tree_score,
    "annotation.collection.advance.scoring_retry": walk_scoring_retry,
    "annotation.collection.export.collected_export": walk_collected_export,
    "evaluation.services.rubric_save": walk_rubric_save,
    "annotation.webhooks.services.webhook_create": walk_webhook_create,
    "annotation.webhooks.services.webhook_update": walk_webhook_update,
    "annotation.webhooks.services.webhook_delete": walk_webhook_delete,
    "annotation.webhooks.services.deliveries_replay": walk_deliveries_replay,
    "evaluation.services.project_evaluate": walk_project_evaluate,
    "evaluation.services.judgments_combine": walk_judgments_combine,
    "evaluation.llm.services.endpoint_create": walk_endpoint_create,
    "evaluation.llm.services.endpoint_update": walk_endpoint_update,
    "evaluation.llm.services.endpoint_delete": walk_endpoint_delete,
    "evaluation.llm.judges.judge_create": walk_judge_create,
    "evaluation.llm.judges.judge_update": walk_judge_update,
    "evaluation.llm.judges.judge_delete": walk_judge_delete,
    "trees.branches.replies_add": walk_replies_add,
}


# -- the walk ----------------------------------------------------------------------------------


def public_functions() -> set[str]:
    found = set()
    for name in SERVICE_MODULES:
        module = importlib.import_module(name)
        for attribute, value in inspect.getmembers(module, inspect.isfunction):
            if value.__module__ == name and not attribute.startswith("_"):
                found.add(f"{name}.{attribute}")
    return found


def test_every_service_is_walked_or_says_why_not():
    functions = public_functions()
    assert sorted(functions - WALKS.keys() - NOT_LOGGED.keys()) == []  # add a walk (or a reason)
    assert sorted((WALKS.keys() | NOT_LOGGED.keys()) - functions) == []  # gone or renamed
    assert not WALKS.keys() & NOT_LOGGED.keys()


@pytest.mark.parametrize("service", sorted(WALKS))
def test_each_service_that_changes_data_logs_exactly_its_entries(world: World, service: str):
    expected = WALKS[service](world)
    assert world.logged == expected


def test_every_registered_action_is_walked():
    walked: set[str] = set()
    for walk in WALKS.values():
        with transaction.atomic():  # each walk in a world of its own
            walked |= {row[0] for row in walk(build_world())}
            transaction.set_rollback(True)
    # The moves no walk makes happen the same way, through tree_enter (walked with "halt").
    tree_moves = {action for action in registered_actions() if action.startswith("tree.")}
    admin_deletes = {admin_delete_action(model_admin) for model_admin in admin.site._registry.values()} - {""}
    assert sorted(registered_actions() - walked - tree_moves - admin_deletes) == []


def admin_delete_action(model_admin: admin.ModelAdmin) -> str:
    return getattr(model_admin, "audit_delete_action", "")


# -- what the entries say ------------------------------------------------------------------------


def test_a_config_change_is_logged_with_the_schemes_and_keys_it_changed(world: World):
    changed = (
        "annotation_schemes:\n"
        "  - {annotation_type: likert, name: quality, description: Quality, size: 7, min_label: Poor, max_label: Excellent}\n"
        "  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}\n"
        "assignment: {annotations_per_item: 3}\n"
    )
    project_config_update(project=world.project, config_yaml=changed)
    project_config_update(project=world.project, config_yaml=changed)  # the same again: nothing

    entries = AuditEntry.objects.filter(action="project.config_update")
    assert [entry.details for entry in entries] == [
        {
            "schemes_added": ["verdict"],
            "schemes_removed": ["note"],
            "schemes_changed": ["quality"],
            "keys_changed": ["assignment"],
        }
    ]


def test_an_import_is_one_entry_with_its_counts_whatever_its_size(world: World):
    items = [
        {"id": f"bulk-{index}", "tree": {"id": "r", "role": "user", "content": "x"}} for index in range(50)
    ]
    with world.acting():
        tree_import(dataset=world.dataset, source=potato(items), format_name="potato", skip_invalid=True)

    assert len(world.logged) == 1
    entry = AuditEntry.objects.filter(action="trees.import").latest("id")
    assert entry.details == {
        "format": "potato",
        "items_read": 50,
        "trees_created": 50,
        "trees_replaced": 0,
        "messages": 50,
        "items_skipped": 0,
        "replace": False,
        "skip_invalid": True,
    }


def test_a_failed_import_leaves_no_entry(world: World):
    with world.acting():
        report = tree_import(dataset=world.dataset, source=io.BytesIO(b'{"id": 1}\n'), format_name="potato")
    assert not report.committed
    assert world.logged == []


def test_a_token_entry_never_holds_the_secret(world: World):
    made = token_create(user=world.alice, name="ci")
    entry = AuditEntry.objects.get(action="token.create")
    assert made.secret not in json.dumps(entry.details)
    assert entry.details == {"owner": "alice", "name": "ci", "expires_at": None}


def test_auto_moderation_deletes_on_its_own_account(world: World):
    project = collect_project([world.alice, world.bob], auto_mod_red_flags=1)
    root = prompt(project, world.alice)
    reply = Message.objects.create(
        tree_id=root.tree_id, parent=root, external_id="reply", role="assistant", text="rude", depth=1
    )
    ConversationTree.objects.filter(pk=root.tree_id).update(state=GROWING)
    report_create(project=project, message=reply, user=world.bob, reason="rude")

    deleted = AuditEntry.objects.get(action="message.delete")
    assert (deleted.actor, deleted.actor_name, deleted.details["auto"]) == (None, "", True)
    assert deleted.details["reason"] == "auto-moderation: 1 red flags"


# -- one action, three channels ----------------------------------------------------------------


def read(response: Any) -> bytes:
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def export_from_page(world: World) -> bytes:
    client = Client()
    client.force_login(world.maggie)
    return read(client.get(reverse("annotation:export", args=["judge"]), {"format": "potato"}))


def export_from_api(world: World) -> bytes:
    secret = token_create(user=world.maggie, name="ci").secret
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return read(client.get(reverse("api:project-export", kwargs={"name": "judge"}), {"format": "potato"}))


def export_from_admin(world: World) -> bytes:
    client = Client()
    client.force_login(world.root)
    form = {"action": "export_potato", "_selected_action": [world.project.pk]}
    return read(client.post(reverse("admin:annotation_project_changelist"), form))


@pytest.mark.parametrize(
    ("channel", "actor", "via"),
    [
        (export_from_page, "maggie", "web"),
        (export_from_api, "maggie", "api"),
        (export_from_admin, "root", "admin"),
    ],
)
def test_an_export_is_logged_alike_from_a_page_the_api_and_the_admin(world: World, channel, actor, via):
    channel(world)

    entry = AuditEntry.objects.get(action="annotations.export")
    assert (entry.actor_name, entry.actor.get_username(), entry.via) == (actor, actor, via)
    assert (entry.target_type, entry.target_repr, entry.scope) == (PROJECT, "judge", "judge")
    assert entry.details["format"] == "potato"


def test_a_token_is_logged_alike_from_the_admin_and_the_command(world: World):
    client = Client()
    client.force_login(world.root)
    client.post(reverse("admin:annotation_apitoken_add"), {"user": world.alice.pk, "name": "from-admin"})
    from django.core.management import call_command

    call_command("create_token", "alice", "--name", "from-cli", stdout=io.StringIO())

    rows = AuditEntry.objects.filter(action="token.create").order_by("id")
    assert [(entry.actor_name, entry.via, entry.scope) for entry in rows] == [
        ("root", "admin", "alice"),
        ("manage.py create_token", "command", "alice"),
    ]


def test_an_api_call_with_a_token_is_logged_as_the_tokens_owner(world: World):
    secret = token_create(user=world.alice, name="ci").secret
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")

    response = client.post(
        reverse("api:item-next", kwargs={"name": "judge"}), "{}", content_type="application/json"
    )

    assert response.status_code in (200, 201), response.content
    entry = AuditEntry.objects.get(action="assignment.lease")
    assert (entry.actor, entry.via, entry.scope) == (world.alice, "api", "judge")


# -- the admin: every delete it offers is logged; every save goes through a service --------------

# Models whose admin deletes are not logged, and why.
ADMIN_DELETES_NOT_LOGGED = {
    "auth.user": "accounts: Django's own admin history keeps these",
    "auth.group": "accounts: Django's own admin history keeps these",
    "evaluation.agreementsnapshot": "kept figures, computed again from the answers whenever they are read",
    "jobs.job": "a record of work asked for: what the work changed is logged by its services",
}


def test_every_delete_the_admin_offers_is_logged(world: World, rf: Any):
    request = rf.get("/admin/")
    request.user = world.root
    unlogged = [
        model._meta.label_lower
        for model, model_admin in admin.site._registry.items()
        if model_admin.has_delete_permission(request)
        and not admin_delete_action(model_admin)
        and model._meta.label_lower not in ADMIN_DELETES_NOT_LOGGED
    ]
    assert unlogged == []


def test_every_save_the_admin_offers_goes_through_a_service(world: World, rf: Any):
    request = rf.get("/admin/")
    request.user = world.root
    own_saves = [
        model._meta.label_lower
        for model, model_admin in admin.site._registry.items()
        if (model_admin.has_add_permission(request) or model_admin.has_change_permission(request))
        and type(model_admin).save_model is admin.ModelAdmin.save_model
        and model._meta.label_lower not in ADMIN_DELETES_NOT_LOGGED
    ]
    assert own_saves == []


def test_a_dataset_made_changed_and_deleted_in_the_admin_is_logged(world: World):
    client = Client()
    client.force_login(world.root)
    client.post(reverse("admin:trees_dataset_add"), {"name": "fresh", "description": ""})
    fresh = Dataset.objects.get(name="fresh")
    client.post(
        reverse("admin:trees_dataset_change", args=[fresh.pk]), {"name": "fresh", "description": "new"}
    )
    client.post(reverse("admin:trees_dataset_delete", args=[fresh.pk]), {"post": "yes"})

    rows = AuditEntry.objects.filter(scope="fresh").order_by("id")
    assert [(entry.action, entry.actor_name, entry.via, entry.details) for entry in rows] == [
        ("dataset.create", "root", "admin", {}),
        ("dataset.update", "root", "admin", {"fields": ["description"]}),
        ("dataset.delete", "root", "admin", {}),
    ]
    assert not Dataset.objects.filter(name="fresh").exists()


# -- commands: their writes are logged as the command's ----------------------------------------

COMMANDS_NOT_AUDITED = {
    "agreement": "computes agreement figures: a cache of what the answers say, no one's action",
    "usernames_check": "only reads: lists the accounts whose usernames look like another's",
}


def test_every_command_of_ours_logs_as_a_command():
    ours = {"trees", "annotation", "annotation.collection", "evaluation"}
    commands = {name: app for name, app in get_commands().items() if app in ours}
    assert {"import_trees", "import_annotations", "collect_backlog", "evaluate"} <= commands.keys()
    plain = sorted(
        name
        for name, app in commands.items()
        if name not in COMMANDS_NOT_AUDITED and not isinstance(load_command_class(app, name), AuditedCommand)
    )
    assert plain == []
