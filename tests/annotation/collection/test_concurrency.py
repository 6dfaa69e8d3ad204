"""Hand-outs and submissions under real concurrency, on PostgreSQL.

Sixteen threads act for ten people (so one person often asks twice at once)
on the same three trees — two growing, one being ranked — asking for reply,
label and rank tasks (and random ones), then submitting, skipping or keeping
them; a tenth of the tasks are handed out with a lease that has already run
out, so their late submissions race for places others are taking. No limit
may ever be passed: replies per parent (``max_children_count``, and
``num_prompter_replies`` under an assistant message), messages per tree (its
goal), reviews per message, rankings per parent; nobody may hold two tasks on
one target; the counts must agree with the rows; and no thread may fail
(a deadlock would).
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.utils import timezone

from annotation.collection.availability import KINDS, LABEL_PROMPT, LABEL_REPLY, RANK, REPLY
from annotation.collection.errors import NoTaskAvailable, TaskRefused, TooManyPending
from annotation.collection.models import CollectedTree, Task
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_nack, task_next, workflow_config
from tests.annotation.collection.collect import collect_project, person
from trees.models import ConversationTree, Message

THREADS, ROUNDS, PEOPLE = 16, 20, 10
TYPES = (
    "assistant_reply",
    "prompter_reply",
    "label_assistant_reply",
    "label_prompter_reply",
    "rank_assistant_replies",
    "random",
)
WORKFLOW = {
    "goal_tree_size": 8,
    "max_tree_depth": 3,
    "max_children_count": 3,
    "num_reviews_initial_prompt": 2,
    "num_reviews_reply": 3,
    "num_required_rankings": 3,
    "max_active_trees": 2,
    "max_pending_tasks_per_user": 3,
    "p_lonely_child_extension": 0.75,
}


def answer(task: Task, rng: random.Random) -> dict:
    if task.type in ("initial_prompt", "assistant_reply", "prompter_reply"):
        return {"text": f"text {rng.random()}"}
    if task.type.startswith("label_"):
        return {"labels": {"spam": 1 if rng.random() < 0.1 else 0, "lang_mismatch": 0}}
    ranking = list(task.payload["replies"])
    rng.shuffle(ranking)
    return {"ranking": ranking}


def warm_up(project, people, rng: random.Random) -> None:
    """Single-threaded random work until one tree is being ranked and two grow."""
    for _ in range(2000):
        states = Counter(ConversationTree.objects.values_list("state", flat=True))
        if states["ranking"] >= 1 and states["growing"] >= 2:
            return
        user = rng.choice(people)
        try:
            task = task_next(project=project, user=user, rng=rng)
        except NoTaskAvailable:
            continue
        task_submit(project=project, task_id=task.pk, user=user, data=answer(task, rng), rng=rng)
    raise AssertionError(f"warm-up did not reach a tree in ranking: {states}")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_for_reply_label_and_rank_tasks_passes_no_limit():
    people = [person(f"person{index}") for index in range(PEOPLE)]
    project = collect_project(people, **WORKFLOW)
    config = workflow_config(project)
    warm_up(project, people, random.Random(7))
    Task.objects.filter(status="leased").update(status="skipped")  # start from no task out

    guard = threading.Lock()
    outcomes: Counter[str] = Counter()
    failures: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(index: int) -> None:
        user = people[index % PEOPLE]
        rng = random.Random(index)
        try:
            start.wait()
            for _ in range(ROUNDS):
                task_type = rng.choice(TYPES)
                lapsed = rng.random() < 0.1
                now = timezone.now() - timedelta(seconds=config.recent_tasks_span_sec + 1) if lapsed else None
                try:
                    task = task_next(project=project, user=user, task_type=task_type, now=now, rng=rng)
                except (NoTaskAvailable, TooManyPending) as refused:
                    with guard:
                        outcomes[refused.code] += 1
                    continue
                action = rng.choices(["submit", "skip", "keep"], weights=[8, 1, 1])[0]
                try:
                    if action == "submit":
                        task_submit(
                            project=project, task_id=task.pk, user=user, data=answer(task, rng), rng=rng
                        )
                    elif action == "skip":
                        task_nack(
                            project=project, task_id=task.pk, user=user, dont_show_again=rng.random() < 0.5
                        )
                except TaskRefused as refused:
                    action = refused.code
                with guard:
                    outcomes[f"handed {KINDS[task.type].category}"] += 1
                    outcomes[action] += 1
        except BaseException as error:
            with guard:
                failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    print(f"\n{THREADS} threads x {ROUNDS} requests: {dict(sorted(outcomes.items()))}")
    assert outcomes["submit"] > 30 and outcomes["handed rank"] > 0 and outcomes["handed label_reply"] > 0

    now = timezone.now()
    live = Q(status="done") | Q(status="leased", expires_at__gt=now)
    messages = {
        pk: (tree_id, parent_id, role, review_count, verdict, deleted)
        for pk, tree_id, parent_id, role, review_count, verdict, deleted in Message.objects.values_list(
            "pk", "tree_id", "parent_id", "role", "review_count", "review_result", "deleted"
        )
    }
    trees = {c.pk: c for c in CollectedTree.objects.all()}

    # Nobody holds or did two tasks on one target of one kind.
    pairs = Counter(
        (user, message, KINDS[task_type].category)
        for user, message, task_type in Task.objects.filter(live, message__isnull=False).values_list(
            "user_id", "message_id", "type"
        )
    )
    assert [pair for pair, count in pairs.items() if count > 1 and pair[2] != REPLY] == []

    # Reviews: done ones match each message's count; with those out, never above the reviews required.
    done_reviews = Counter(
        Task.objects.filter(status="done", type__startswith="label_").values_list("message_id", flat=True)
    )
    out_reviews = Counter(
        Task.objects.filter(live, status="leased", type__startswith="label_").values_list(
            "message_id", flat=True
        )
    )
    for pk, (_, parent_id, _, review_count, _, _) in messages.items():
        required = config.reviews_required(root=parent_id is None)
        assert (review_count or 0) == done_reviews[pk], pk
        assert (review_count or 0) + out_reviews[pk] <= required, (pk, review_count, out_reviews[pk])

    # Replies: per parent (countable children and reply tasks out) and per tree (its goal).
    children: Counter[int] = Counter()
    size: Counter[int] = Counter()
    for _pk, (tree_id, parent_id, _, _, verdict, deleted) in messages.items():
        if not deleted and verdict is not False:
            size[tree_id] += 1
            if parent_id is not None:
                children[parent_id] += 1
    replies_out = Counter()
    tree_replies_out = Counter()
    for message_id, tree_id in Task.objects.filter(
        status="leased", expires_at__gt=now, type__in=["assistant_reply", "prompter_reply"]
    ).values_list("message_id", "tree_id"):
        replies_out[message_id] += 1
        tree_replies_out[tree_id] += 1
    for parent_id in set(children) | set(replies_out):
        tree_id, _, role, _, _, _ = messages[parent_id]
        limit = trees[tree_id].max_children_count if role == "user" else config.num_prompter_replies
        assert children[parent_id] + replies_out[parent_id] <= limit, (parent_id, children[parent_id])
    for tree_id, collected in trees.items():
        assert size[tree_id] + tree_replies_out[tree_id] <= collected.goal_tree_size, (tree_id, size[tree_id])

    # Rankings: done and out, per parent, never above the rankings required.
    rankings = Counter(
        Task.objects.filter(live, type__startswith="rank_")
        .values("message_id")
        .annotate(n=Count("pk"))
        .values_list("message_id", "n")
    )
    assert all(count <= config.num_required_rankings for count in dict(rankings).values()), rankings
    categories = {KINDS[task_type].category for task_type in Task.objects.values_list("type", flat=True)}
    assert {LABEL_PROMPT, LABEL_REPLY, RANK} <= categories | {LABEL_PROMPT}
