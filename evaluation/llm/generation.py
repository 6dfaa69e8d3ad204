"""Growing branches with model replies: at the chosen turns of the chosen trees, ask a model
endpoint for N replies each and add them to the tree as siblings under the turn, marked as
Open-Assistant marks synthetic messages (``synthetic``, ``model_name``) with the generation
settings in their metadata (``generation``), for annotators to rank and compare.

A run is named by its key: the endpoint, its model, the sampling settings and the system
prompt (not N). Reply ``i`` of a turn has an id made of the turn, the key and ``i``, the
same on every run: a second run of the same settings finds the replies already there and
asks only for the missing ones (N = 3 with 2 there makes 1), a run stopped part-way goes on
where it stopped, and two runs at once add each reply once (``trees.branches.replies_add``).

Requests go in threads up to the endpoint's ``max_concurrency``, each through its requests
per minute (``limits``) and into the ledger (purpose ``generate``); each reply is kept as
soon as it comes. A failed request is a problem of its turn (tree, node, why) and the run
goes on; a budget stops the run before a request that would pass it (judged by the largest
request so far), keeping what is done.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from evaluation.llm.client import ModelCallFailed, chat
from evaluation.llm.grow_requests import GrowRequest
from evaluation.llm.limits import Budget, BudgetExhausted
from evaluation.llm.models import ModelCall, ModelEndpoint
from evaluation.llm.threads import map_in_threads
from evaluation.llm.writes import writes_serialized
from trees.branches import NewReply, Node, NodeGone, conversation_path, nodes_to_grow, replies_add
from trees.models import ConversationTree, Message
from trees.vocabulary import ASSISTANT

# Turns whose requests are sent together: their texts are read a batch at a time.
BATCH_NODES = 50
# How many problems a run keeps (the counts go on).
MAX_PROBLEMS = 1000


def run_key(endpoint: ModelEndpoint, request: GrowRequest) -> str:
    """What makes two runs the same run: endpoint, model, sampling settings, system prompt."""
    named = {
        "endpoint": endpoint.name,
        "model": endpoint.model,
        "sampling": request.sampling,
        "system_prompt": request.system_prompt,
    }
    return hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()[:16]


def reply_id(node_id: str, key: str, index: int) -> str:
    """The id of reply ``index`` of run ``key`` at the turn ``node_id`` (short whatever the
    turn's id: an id holds at most 255 characters)."""
    digest = hashlib.sha256(f"{node_id}\x00{key}".encode()).hexdigest()[:20]
    return f"gen-{digest}-{index}"


def _own(key: str) -> Callable[[Node, Node], bool]:
    def is_own(parent: Node, child: Node) -> bool:
        prefix = reply_id(parent.external_id, key, 0)[:-1]
        return child.external_id.startswith(prefix)

    return is_own


@dataclass
class Turn:
    """A chosen turn of a tree, with the replies it still lacks."""

    tree_id: int
    tree_external_id: str
    node: Node
    path: list[Node]
    missing: list[int]


@dataclass
class GrowReport:
    """What a run did: turns chosen and done, replies added and already there, tokens, cost,
    the problems of the turns that failed, and why it stopped early (if it did)."""

    key: str
    nodes: int = 0
    nodes_done: int = 0
    added: int = 0
    existing: int = 0
    failed: int = 0
    refused: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None
    stopped: str = ""
    problems: list[dict[str, Any]] = field(default_factory=list)
    named_found: set[str] = field(default_factory=set, repr=False)

    def problem(self, tree: str, node: str, why: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(
                {
                    "tree": tree,
                    "node": node,
                    "path": f"{tree}/{node}",
                    "message": why,
                    "text": f"tree {tree}, node {node}: {why}",
                }
            )

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.key,
            "nodes": self.nodes,
            "nodes_done": self.nodes_done,
            "added": self.added,
            "existing": self.existing,
            "failed": self.failed,
            "refused": self.refused,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": None if self.cost is None else str(self.cost),
            "stopped": self.stopped,
        }

    def summary(self) -> str:
        cost = "" if self.cost is None else f", cost {self.cost:.4f}"
        line = (
            f"{self.nodes_done:,} of {self.nodes:,} turns grown: {self.added:,} replies added, "
            f"{self.existing:,} already there, {self.failed:,} turns failed"
            f"{f', {self.refused:,} named turns refused' if self.refused else ''}; "
            f"{self.prompt_tokens + self.completion_tokens:,} tokens{cost}"
        )
        return f"{line}; stopped: {self.stopped}" if self.stopped else line


def trees_plan(
    trees: QuerySet[ConversationTree], request: GrowRequest, key: str, report: GrowReport
) -> list[Turn]:
    """The turns to grow in ``trees`` and the replies each lacks (no text read)."""
    rows = (
        Message.objects.filter(tree__in=trees)
        .order_by("tree_id", "depth", "position", "pk")
        .values_list("tree_id", "tree__external_id", "pk", "external_id", "parent_id", "role", "deleted")
    )
    turns: list[Turn] = []
    current: int | None = None
    nodes: list[Node] = []
    tree_name = ""
    for tree_id, tree_external_id, pk, external_id, parent_id, role, deleted in rows.iterator(
        chunk_size=5000
    ):
        if tree_id != current:
            if current is not None:
                turns.extend(_tree_turns(current, tree_name, nodes, request, key, report))
            current, tree_name, nodes = tree_id, tree_external_id, []
        nodes.append(Node(pk, external_id, parent_id, role, deleted))
    if current is not None:
        turns.extend(_tree_turns(current, tree_name, nodes, request, key, report))
    for node_id in request.nodes:
        if node_id not in report.named_found:
            report.problem("-", node_id, "no such node in the chosen trees")
            report.refused += 1
    return turns


def _tree_turns(
    tree_id: int, tree_name: str, nodes: list[Node], request: GrowRequest, key: str, report: GrowReport
) -> Iterator[Turn]:
    chosen, problems = nodes_to_grow(nodes, rule=request.rule, node_ids=request.nodes, is_own=_own(key))
    # A named turn is looked for in every chosen tree: missing from this one is no problem yet.
    report.named_found.update(node.external_id for node in nodes)
    problems = [problem for problem in problems if problem[1] != "no such node in this tree"]
    for node_id, why in problems:
        report.problem(tree_name, node_id, why)
        report.refused += 1
    by_pk = {node.pk: node for node in nodes}
    present = {node.external_id for node in nodes}
    for node in chosen:
        missing = [
            index for index in range(request.n) if reply_id(node.external_id, key, index) not in present
        ]
        report.existing += request.n - len(missing)
        yield Turn(tree_id, tree_name, node, conversation_path(node, by_pk), missing)


@dataclass
class RunBudget(Budget):
    """A ``Budget`` that also stops before a request that would pass it, expecting the next
    request to use as much as the largest so far (the first is always sent)."""

    largest_tokens: int = 0
    largest_cost: Decimal = Decimal(0)

    def check(self) -> None:
        super().check()
        with self._lock:
            if self.max_tokens is not None and self.tokens + self.largest_tokens > self.max_tokens:
                raise BudgetExhausted(
                    f"the next request would pass the budget of {self.max_tokens:,} tokens "
                    f"({self.tokens:,} used, up to {self.largest_tokens:,} a request)"
                )
            if self.max_cost is not None and self.cost + self.largest_cost > self.max_cost:
                raise BudgetExhausted(
                    f"the next request would pass the budget of {self.max_cost} "
                    f"({self.cost:.4f} spent, up to {self.largest_cost:.4f} a request)"
                )

    def spend(self, tokens: int, cost: Decimal | None) -> None:
        super().spend(tokens, cost)
        with self._lock:
            self.largest_tokens = max(self.largest_tokens, tokens)
            if cost is not None:
                self.largest_cost = max(self.largest_cost, cost)


@dataclass
class _Result:
    turn: Turn
    added: int = 0
    error: str = ""
    stopped: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None
    requested: bool = False


def branches_grow(
    *,
    trees: QuerySet[ConversationTree],
    request: GrowRequest,
    job_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> GrowReport:
    """Grow the chosen turns of ``trees`` as ``request`` says (see the module's docstring).
    ``progress(turns done, turns)`` is called as turns finish; an exception it raises (a
    cancel) stops the run after the requests under way, keeping the replies made."""
    endpoint = ModelEndpoint.objects.get(name=request.endpoint)
    key = run_key(endpoint, request)
    report = GrowReport(key=key, cost=Decimal(0) if endpoint.priced else None)
    turns = trees_plan(trees, request, key, report)
    report.nodes = len(turns)
    budget = RunBudget(
        max_tokens=request.budget_tokens,
        max_cost=Decimal(request.budget_cost) if request.budget_cost else None,
    )
    stop = threading.Event()
    done = [turn for turn in turns if not turn.missing]
    report.nodes_done = len(done)
    if progress:
        progress(report.nodes_done, report.nodes)
    pending = [turn for turn in turns if turn.missing]
    try:
        for start in range(0, len(pending), BATCH_NODES):
            if stop.is_set():
                break
            batch = pending[start : start + BATCH_NODES]
            _grow_batch(endpoint, request, key, batch, budget, stop, job_id, report, progress)
    except BaseException:
        stop.set()
        raise
    return report


def _texts(batch: Sequence[Turn]) -> dict[int, str]:
    pks = {node.pk for turn in batch for node in turn.path}
    return dict(Message.objects.filter(pk__in=pks).values_list("pk", "text"))


def _grow_batch(
    endpoint: ModelEndpoint,
    request: GrowRequest,
    key: str,
    batch: Sequence[Turn],
    budget: RunBudget,
    stop: threading.Event,
    job_id: int | None,
    report: GrowReport,
    progress: Callable[[int, int], None] | None,
) -> None:
    texts = _texts(batch)
    asks = [(turn, index) for turn in batch for index in turn.missing]

    def ask(item: tuple[Turn, int]) -> _Result:
        turn, index = item
        result = _Result(turn)
        if stop.is_set():
            return result
        messages = [{"role": "system", "content": request.system_prompt}] if request.system_prompt else []
        messages += [{"role": node.role, "content": texts.get(node.pk, "")} for node in turn.path]
        sampling = dict(request.sampling)
        if request.seed is not None:
            sampling["seed"] = request.seed + index  # the same seed would give the same reply N times
        try:
            reply = chat(
                endpoint,
                messages,
                purpose=ModelCall.Purpose.GENERATE,
                subject=f"grow {key}",
                job_id=job_id,
                sampling=sampling,
                budget=budget,
            )
        except BudgetExhausted as spent:
            stop.set()
            result.stopped = str(spent)
            return result
        except ModelCallFailed as failure:
            result.requested, result.error = True, str(failure)
            return result
        result.requested = True
        result.prompt_tokens, result.completion_tokens, result.cost = (
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cost,
        )
        if not reply.text.strip():
            result.error = f"{endpoint.name}: the reply is empty (finish reason {reply.finish_reason})"
            return result
        metadata = {
            "generation": {
                "endpoint": endpoint.name,
                "run": key,
                "index": index,
                "settings": sampling,
                "system_prompt": request.system_prompt,
                "finish_reason": reply.finish_reason,
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "job": job_id,
            }
        }
        new = NewReply(
            external_id=reply_id(turn.node.external_id, key, index),
            text=reply.text,
            role=ASSISTANT,
            synthetic=True,
            model_name=endpoint.model,
            metadata=metadata,
        )
        try:
            with writes_serialized():
                result.added = len(replies_add(tree_id=turn.tree_id, parent_id=turn.node.pk, replies=[new]))
        except NodeGone as gone:
            result.error = str(gone)
        return result

    left = {id(turn): len(turn.missing) for turn in batch}
    errors: dict[int, list[str]] = {}
    skipped: set[int] = set()
    # Each request runs in the context it was asked in: the audit log's actor and channel.
    context = contextvars.copy_context()
    workers = endpoint.max_concurrency

    def in_context(item: tuple[Turn, int]) -> _Result:
        return context.copy().run(ask, item)

    # One at a time needs no thread (nor a connection of its own).
    asked = map(in_context, asks) if workers == 1 else map_in_threads(in_context, asks, workers=workers)
    try:
        for result in asked:
            turn = result.turn
            report.requests += int(result.requested)
            report.added += result.added
            report.prompt_tokens += result.prompt_tokens
            report.completion_tokens += result.completion_tokens
            if result.cost is not None and report.cost is not None:
                report.cost += result.cost
            if result.stopped and not report.stopped:
                report.stopped = result.stopped
            if result.error:
                errors.setdefault(id(turn), []).append(result.error)
            elif not result.requested:
                skipped.add(id(turn))  # the run stopped before asking
            left[id(turn)] -= 1
            if left[id(turn)]:
                continue
            if id(turn) in errors:
                report.failed += 1
                why = "; ".join(dict.fromkeys(errors[id(turn)]))
                report.problem(turn.tree_external_id, turn.node.external_id, why)
            elif id(turn) not in skipped:
                report.nodes_done += 1
            if progress:
                progress(report.nodes_done + report.failed, report.nodes)
    except BaseException:
        stop.set()  # a cancel: the requests not yet sent are not sent
        raise
    finally:
        close = getattr(asked, "close", None)
        if close is not None:
            close()  # wait here for the requests under way, not when the generator is collected
