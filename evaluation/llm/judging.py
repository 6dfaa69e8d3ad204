"""A judge run: a judge answers a project's items as a coder, through its endpoint's limits.

For each item (gold items aside) and each of the project's schemes the judge's kind
answers (``rubric`` schemes for a rubric judge, ``tree_annotation`` with branch
comparisons in pairs for a comparison judge), the judge is asked its questions
(``judge_questions``), each up to ``max_attempts`` times while its answer cannot be read;
then, in one transaction per item, its answers become a submitted ``Annotation`` of the
judge's account with ``source = model`` and a ``JudgeVerdict`` keeps the raw labels, the
reasons, the flips, the failures (with the model's raw text) and the tokens and cost.

- **Idempotent and resumable**: an item whose verdict is ``done`` is skipped unless
  ``redo``; ``partial`` and ``failed`` ones are asked again. Each item commits on its own,
  so a run that stops (a dead worker, a cancel, a spent budget) keeps what it finished and
  the next run takes up the rest.
- **Limits**: items run in up to the endpoint's ``max_concurrency`` threads, each request
  through ``client.chat`` (requests per minute across processes, the ledger with purpose
  ``judge`` and subject the judge's name, the budget checked before each request).
- **Failures are never dropped**: an unreadable answer is asked again, then recorded; a
  request that fails on the way after the client's retries counts as an attempt too. A
  failure of the settings (a refused key, an unknown model) stops the run at once.
- The answers do not take an annotator's place: item counts and overlap are untouched.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from annotation.models import Annotation, Project, ProjectItem
from annotation.projects.config import project_config
from annotation.schemes.base import Scheme
from annotation.schemes.tree import TreeAnnotation
from evaluation.llm.client import ModelCallFailed, chat
from evaluation.llm.judge_questions import (
    Answered,
    Question,
    comparison_payload,
    comparison_questions,
    payload_checked,
    rubric_payload,
    rubric_questions,
)
from evaluation.llm.limits import Budget, BudgetExhausted
from evaluation.llm.models import Judge, JudgeVerdict, ModelCall
from evaluation.llm.prompts import Malformed, TemplateError, template_check
from evaluation.llm.threads import map_in_threads
from evaluation.llm.writes import writes_serialized
from evaluation.schemes import RubricScheme
from trees.models import ConversationTree, Message
from trees.selectors import tree_shape
from trees.store import tree_records

logger = logging.getLogger(__name__)
RAW_CHARS = 4000


class JudgeRunRefused(ValueError):
    """A run that cannot start: no scheme for the judge, a bad template; says why."""


def judge_schemes(judge: Judge, project: Project, scheme: str = "") -> list[Scheme]:
    """The project's schemes ``judge`` answers (only ``scheme`` when named); refused with a
    reason when there are none."""
    try:
        template_check(judge.kind, judge.prompt_template)
    except TemplateError as error:
        raise JudgeRunRefused(f"judge {judge.name}'s prompt template: {error}") from None
    schemes = project_config(project).schemes
    if scheme:
        schemes = [found for found in schemes if found.name == scheme]
        if not schemes:
            raise JudgeRunRefused(f'project {project.name} has no scheme "{scheme}"')
    fitting = [found for found in schemes if _fits(judge, found)]
    if not fitting:
        wanted = (
            "a rubric scheme"
            if judge.kind == Judge.Kind.RUBRIC
            else "a tree_annotation scheme with branch_comparison in pairs"
        )
        found = f'scheme "{scheme}" is not {wanted}' if scheme else f"project {project.name} has none"
        raise JudgeRunRefused(f"judge {judge.name} answers {wanted}: {found}")
    missing = [found.name for found in fitting if isinstance(found, RubricScheme) and found.spec() is None]
    if missing:
        raise JudgeRunRefused(f"the rubric of scheme {', '.join(missing)} no longer exists")
    return fitting


def _fits(judge: Judge, scheme: Scheme) -> bool:
    if judge.kind == Judge.Kind.RUBRIC:
        return isinstance(scheme, RubricScheme)
    return (
        isinstance(scheme, TreeAnnotation) and scheme.comparison_enabled and scheme.comparison_mode == "pairs"
    )


@dataclass
class Asked:
    """What asking one question came to: a value, or a failure; and what it used."""

    value: Any = None
    failure: dict[str, Any] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None


class RunStopped(Exception):
    """The endpoint refuses the judge's settings (key, model, request): asking on is pointless."""


@dataclass
class Context:
    judge: Judge
    project: Project
    budget: Budget | None
    job_id: int | None
    stop: threading.Event = field(default_factory=threading.Event)
    # Every answered request of the run, items stopped half-way included.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def spent(self, prompt_tokens: int, completion_tokens: int, cost: Decimal | None) -> None:
        with self._lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            if cost is not None:
                self.cost = (self.cost or Decimal(0)) + cost


def question_ask(context: Context, question: Question) -> Asked:
    """Ask until the answer reads, at most the judge's ``max_attempts`` times."""
    judge = context.judge
    asked = Asked()
    error, raw = "", ""
    for attempt in range(1, judge.max_attempts + 1):
        try:
            reply = chat(
                judge.endpoint,
                question.messages,
                purpose=ModelCall.Purpose.JUDGE,
                subject=judge.name,
                job_id=context.job_id,
                sampling=judge.sampling,
                budget=context.budget,
            )
        except ModelCallFailed as failure:
            if not failure.retryable:
                raise RunStopped(str(failure)) from None
            error, raw = f"the request failed ({failure.kind}): {failure}", ""
            continue
        context.spent(reply.prompt_tokens, reply.completion_tokens, reply.cost)
        asked.prompt_tokens += reply.prompt_tokens
        asked.completion_tokens += reply.completion_tokens
        if reply.cost is not None:
            asked.cost = (asked.cost or Decimal(0)) + reply.cost
        try:
            asked.value = question.read(reply.text)
            return asked
        except Malformed as malformed:
            error, raw = str(malformed), reply.text[:RAW_CHARS]
            logger.info("judge %s: %s, attempt %s: %s", judge.name, question.name, attempt, error)
    asked.failure = {"question": question.name, "attempts": judge.max_attempts, "error": error, "raw": raw}
    return asked


@dataclass
class ItemResult:
    tree_id: int
    tree: str  # external id
    scheme: str
    status: str = ""  # a JudgeVerdict status, or "" when the run stopped before it was written
    failures: list[dict[str, Any]] = field(default_factory=list)
    pairs: int = 0
    flips: int = 0


def item_judge(context: Context, scheme: Scheme, tree: ConversationTree) -> ItemResult:
    """Ask the judge about one item for one scheme, and write what it answered."""
    result = ItemResult(tree.pk, tree.external_id, scheme.name)
    shape = tree_shape(tree, with_texts=isinstance(scheme, TreeAnnotation))
    if isinstance(scheme, RubricScheme):
        spec = scheme.spec()
        if spec is None:
            raise RunStopped(f"the rubric of scheme {scheme.name} no longer exists")
        record = next(tree_records(ConversationTree.objects.filter(pk=tree.pk)))
        questions = rubric_questions(context.judge, spec, record)
    else:
        assert isinstance(scheme, TreeAnnotation)
        deleted = frozenset(
            Message.objects.filter(tree=tree, deleted=True).values_list("external_id", flat=True)
        )
        questions = comparison_questions(context.judge, scheme, shape, deleted)
    answered, totals = Answered(), Asked()
    for question in questions:
        asked = question_ask(context, question)
        totals.prompt_tokens += asked.prompt_tokens
        totals.completion_tokens += asked.completion_tokens
        if asked.cost is not None:
            totals.cost = (totals.cost or Decimal(0)) + asked.cost
        if asked.failure is not None:
            result.failures.append(asked.failure)
            logger.warning(
                "judge %s: item %s, scheme %s, question %s failed (tried %s times): %s",
                context.judge.name,
                tree.external_id,
                scheme.name,
                question.name,
                asked.failure["attempts"],
                asked.failure["error"],
            )
        else:
            answered.values[question.name] = asked.value
    if isinstance(scheme, RubricScheme):
        payload, details = rubric_payload(spec, record, answered)
    else:
        payload, details = comparison_payload(scheme, shape, answered, deleted)
        result.pairs = sum(1 for pair in details["pairs"] if pair["first"] and pair["second"])
        result.flips = sum(1 for pair in details["pairs"] if pair["flipped"])
    if payload is not None:
        payload = payload_checked(scheme, payload, shape)
    if not result.failures:
        result.status = JudgeVerdict.Status.DONE
    else:
        result.status = JudgeVerdict.Status.PARTIAL if payload else JudgeVerdict.Status.FAILED
    verdict_write(context, tree, scheme.name, result, payload, details, totals)
    return result


@writes_serialized()
@transaction.atomic
def verdict_write(
    context: Context,
    tree: ConversationTree,
    scheme: str,
    result: ItemResult,
    payload: dict[str, Any] | None,
    details: dict[str, Any],
    totals: Asked,
) -> None:
    """The verdict, and the judge's annotation as it now stands (none when nothing was
    answered), in one transaction."""
    judge, project = context.judge, context.project
    JudgeVerdict.objects.update_or_create(
        judge=judge,
        project=project,
        tree=tree,
        scheme=scheme,
        defaults={
            "status": result.status,
            "details": details,
            "failures": result.failures,
            "prompt_tokens": totals.prompt_tokens,
            "completion_tokens": totals.completion_tokens,
            "cost": totals.cost,
        },
    )
    existing = (
        Annotation.objects.select_for_update()
        .filter(project=project, tree=tree, user=judge.user, scheme=scheme)
        .first()
    )
    if payload is None:
        if existing is not None:
            existing.delete()
        return
    now = timezone.now()
    annotation = existing or Annotation(
        project=project, tree=tree, user=judge.user, scheme=scheme, created_at=now, version=0
    )
    annotation.payload = payload
    annotation.status = Annotation.Status.SUBMITTED
    annotation.source = Annotation.Source.MODEL
    annotation.version += 1
    annotation.updated_at = annotation.submitted_at = now
    annotation.save()


@dataclass
class JudgeRunReport:
    """What a run did, as its job's result says it."""

    judge: str
    project: str
    schemes: list[str]
    items: int = 0  # (item, scheme) units in the project
    skipped: int = 0  # already judged, left alone
    judged: int = 0
    partial: int = 0
    failed: int = 0
    failures: int = 0  # questions recorded as failed
    pairs: int = 0  # comparison pairs answered in both orders
    flips: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal | None = None
    stopped: str = ""  # why the run ended early, if it did
    problems: list[dict[str, Any]] = field(default_factory=list)

    @property
    def flip_rate(self) -> float | None:
        return self.flips / self.pairs if self.pairs else None

    def as_result(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "project": self.project,
            "schemes": self.schemes,
            "items": self.items,
            "skipped": self.skipped,
            "judged": self.judged,
            "partial": self.partial,
            "failed": self.failed,
            "failures": self.failures,
            "pairs": self.pairs,
            "flips": self.flips,
            "flip_rate": self.flip_rate,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": str(self.cost) if self.cost is not None else None,
            "stopped": self.stopped,
        }

    def line(self) -> str:
        """The job's message."""
        said = (
            f"judge {self.judge} on {self.project}: {self.judged:,} of {self.items:,} items judged "
            f"({self.partial:,} partly, {self.failed:,} failed, {self.skipped:,} already judged)"
        )
        if self.pairs:
            said += f"; {self.flips:,} of {self.pairs:,} pairs flipped with the order"
        cost = f", cost {self.cost:.4f}" if self.cost is not None else ""
        said += f"; {self.prompt_tokens + self.completion_tokens:,} tokens{cost}"
        return f"{said}; stopped: {self.stopped}" if self.stopped else said


def judge_run(
    *,
    judge: Judge,
    project: Project,
    scheme: str = "",
    redo: bool = False,
    budget: Budget | None = None,
    job_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> JudgeRunReport:
    """Run ``judge`` over ``project``'s items (see the module docstring). Call it outside a
    transaction: each item commits on its own. ``progress(done, total)`` may raise to stop
    the run (a cancelled job); the items finished are kept."""
    schemes = judge_schemes(judge, project, scheme)
    judge = Judge.objects.select_related("endpoint", "user").get(pk=judge.pk)
    report = JudgeRunReport(judge.name, project.name, [found.name for found in schemes])
    tree_ids = list(
        ProjectItem.objects.filter(project=project, is_gold=False)
        .order_by("tree_id")
        .values_list("tree_id", flat=True)
    )
    done = set(
        JudgeVerdict.objects.filter(
            judge=judge, project=project, status=JudgeVerdict.Status.DONE, scheme__in=report.schemes
        ).values_list("tree_id", "scheme")
    )
    report.items = len(tree_ids) * len(schemes)
    units = []
    for tree_id in tree_ids:
        for found in schemes:
            if not redo and (tree_id, found.name) in done:
                report.skipped += 1
            else:
                units.append((tree_id, found))
    context = Context(judge, project, budget, job_id)

    def work(unit: tuple[int, Scheme]) -> ItemResult | str:
        if context.stop.is_set():
            return ""
        tree_id, found = unit
        try:
            return item_judge(context, found, ConversationTree.objects.get(pk=tree_id))
        except BudgetExhausted as spent:
            context.stop.set()
            return f"budget: {spent}"
        except RunStopped as stopped:
            context.stop.set()
            return str(stopped)

    finished = report.skipped
    if progress:
        progress(finished, report.items)
    try:
        for outcome in map_in_threads(work, units, workers=judge.endpoint.max_concurrency):
            if isinstance(outcome, str):
                report.stopped = report.stopped or outcome
                continue
            finished += 1
            _count(report, outcome)
            if progress:
                with writes_serialized():
                    progress(finished, report.items)
    finally:
        context.stop.set()  # a cancel raised by progress: the threads still queued do nothing
    report.prompt_tokens, report.completion_tokens, report.cost = (
        context.prompt_tokens,
        context.completion_tokens,
        context.cost,
    )
    return report


def _count(report: JudgeRunReport, outcome: ItemResult) -> None:
    report.judged += 1
    report.partial += outcome.status == JudgeVerdict.Status.PARTIAL
    report.failed += outcome.status == JudgeVerdict.Status.FAILED
    report.pairs += outcome.pairs
    report.flips += outcome.flips
    for failure in outcome.failures:
        report.failures += 1
        where = f"{outcome.tree}/{outcome.scheme}/{failure['question']}"
        report.problems.append(
            {
                "path": where,
                "message": failure["error"],
                "text": f"{where}: {failure['error']} (tried {failure['attempts']} "
                f"time{'s' if failure['attempts'] > 1 else ''}; the raw answer is kept with the verdict)",
            }
        )
