"""A judge run over a project, against a real chat-completions server on 127.0.0.1.

- A rubric judge answers every criterion yes or no with a one-line reason, one request
  per item; its answer is a submitted annotation of ``judge:<name>`` with ``source``
  model, in the shape a person's rubric answer has.
- A comparison judge asks each pair of sibling replies in both orders; the second answer
  is mapped back, and two orders that disagree make a tie, marked ``flipped`` and counted.
- An answer that cannot be read is asked again, then recorded as a failure with the raw
  text: the item is partial or failed, never guessed.
- Re-running skips items judged (``redo`` asks again); every request is in the ledger;
  the limits (429 Retry-After, requests per minute, a budget) hold; the key is in no log.
"""

from __future__ import annotations

import json
import logging
import time
from decimal import Decimal

import pytest

from annotation.exports import annotations_export
from annotation.models import Annotation
from evaluation.agreement.project import agreement_compute
from evaluation.llm.client import chat
from evaluation.llm.judges import judge_create
from evaluation.llm.judging import JudgeRunRefused, judge_run
from evaluation.llm.limits import Budget
from evaluation.llm.models import JudgeVerdict, ModelCall
from evaluation.llm.services import endpoint_update
from tests.evaluation.llm.chat_server import Answer, rate_limited
from tests.evaluation.llm.conftest import API_KEY
from tests.evaluation.llm.judging_projects import (
    RUBRIC,
    branch_project,
    label_reply,
    rubric_project,
    rubric_reply,
    shown_first,
)
from tests.factories import (
    AnnotationFactory,
    ChainTreeFactory,
    DatasetFactory,
    MessageFactory,
    ProjectFactory,
    RubricFactory,
    UserFactory,
)
from trees.jobs.services import JobCancelled
from trees.models import ConversationTree

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_rubric_judge_fills_every_criterion_as_an_annotation_of_its_account(chat_server, endpoint):
    project = rubric_project(items=2)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint, sampling={"temperature": 0})
    chat_server.respond = lambda body: rubric_reply(helpful=True, polite=False)

    report = judge_run(judge=judge, project=project)

    assert (report.items, report.judged, report.failures) == (2, 2, 0)
    assert len(chat_server.chats) == 2  # one request per item, all criteria at once
    prompt = chat_server.chats[0].body["messages"][-1]["content"]
    assert "helpful: Is the reply helpful?" in prompt and "message 1" in prompt
    assert chat_server.chats[0].body["temperature"] == 0
    annotation = Annotation.objects.get(tree__external_id="conv_0", user__username="judge:helper")
    assert (annotation.scheme, annotation.status, annotation.source) == ("review", "submitted", "model")
    assert annotation.payload == {
        "criteria": {"helpful": True, "polite": False},
        "note": "helpful: It answers the question.\npolite: It is courteous.",
    }
    verdict = JudgeVerdict.objects.get(tree__external_id="conv_0")
    assert verdict.status == "done" and verdict.failures == []
    assert verdict.details == {
        "criteria": {
            "helpful": {"holds": True, "reason": "It answers the question."},
            "polite": {"holds": False, "reason": "It is courteous."},
        }
    }
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (10, 5)
    calls = ModelCall.objects.all()
    assert {(call.purpose, call.subject, call.status) for call in calls} == {("judge", "helper", "ok")}


def test_tokens_and_cost_are_summed_on_the_verdict(chat_server, endpoint):
    endpoint_update(
        endpoint=endpoint, changes={"input_price_per_1k": Decimal(1), "output_price_per_1k": Decimal(2)}
    )
    project = rubric_project(items=1)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.script("not json", Answer(rubric_reply(), prompt_tokens=100, completion_tokens=50))

    report = judge_run(judge=judge, project=project)

    verdict = JudgeVerdict.objects.get()
    assert (verdict.prompt_tokens, verdict.completion_tokens) == (110, 55)  # the retried answer too
    assert verdict.cost == Decimal("0.22")  # 0.11 * 1 + 0.055 * 2
    assert report.cost == Decimal("0.22") and report.prompt_tokens == 110


def test_branch_comparisons_are_asked_in_both_orders_and_agreeing_answers_kept(chat_server, endpoint):
    project = branch_project(items=1)
    judge = judge_create(name="picky", kind="comparison", endpoint=endpoint)
    # A judge without position bias: reply 1 is better, whichever place it is shown in.
    chat_server.respond = lambda body: label_reply("Better" if shown_first(body) == "reply 1" else "Worse")

    report = judge_run(judge=judge, project=project)

    assert [shown_first(request.body) for request in chat_server.chats] == ["reply 1", "reply 2"]
    assert (report.pairs, report.flips, report.flip_rate) == (1, 0, 0.0)
    annotation = Annotation.objects.get(user__username="judge:picky")
    assert annotation.source == "model"
    assert annotation.payload == {
        "branch_comparisons": {
            "m0": {"shown_order": ["m1-1", "m1-2"], "pairs": [{"a": "m1-1", "b": "m1-2", "label": "Better"}]}
        }
    }
    (pair,) = JudgeVerdict.objects.get().details["pairs"]
    assert (pair["first"], pair["second"], pair["label"], pair["flipped"]) == (
        "Better",
        "Worse",
        "Better",
        False,
    )


def test_a_flip_between_the_orders_is_recorded_as_a_tie_and_counted(chat_server, endpoint):
    project = branch_project(items=2)
    judge = judge_create(name="biased", kind="comparison", endpoint=endpoint)
    # Position bias: whatever is shown first is "Better".
    chat_server.respond = lambda body: label_reply("Better")

    report = judge_run(judge=judge, project=project)

    assert (report.pairs, report.flips, report.flip_rate) == (2, 2, 1.0)
    assert report.as_result()["flip_rate"] == 1.0
    for annotation in Annotation.objects.filter(user__username="judge:biased"):
        assert annotation.payload["branch_comparisons"]["m0"]["pairs"] == [
            {"a": "m1-1", "b": "m1-2", "label": "Same"}
        ]
    for verdict in JudgeVerdict.objects.all():
        assert verdict.details["pairs"][0] | {"reasons": None} == {
            "node": "m0",
            "a": "m1-1",
            "b": "m1-2",
            "first": "Better",
            "second": "Better",
            "label": "Same",
            "flipped": True,
            "reasons": None,
        }
    assert "2 of 2 pairs flipped" in report.line()


def test_malformed_output_is_asked_again_then_recorded_with_the_raw_text(chat_server, endpoint, caplog):
    caplog.set_level(logging.INFO)
    project = rubric_project(items=1)
    judge = judge_create(name="sloppy", kind="rubric", endpoint=endpoint, max_attempts=3)
    chat_server.script(
        "Sure! The reply is helpful.",
        '{"criteria": {"helpful": {"holds": true, "reason": "ok"}}}',
        '{"criteria": {"helpful": {"holds": "yes", "reason": "ok"}, "polite": {"holds": true, "reason": "ok"}}}',
    )

    report = judge_run(judge=judge, project=project)

    assert len(chat_server.chats) == 3
    verdict = JudgeVerdict.objects.get()
    assert verdict.status == "failed"
    assert verdict.failures == [
        {
            "question": "conversation",
            "attempts": 3,
            "error": 'criteria.helpful.holds must be true or false, got "yes"',
            "raw": '{"criteria": {"helpful": {"holds": "yes", "reason": "ok"}, "polite": {"holds": true, "reason": "ok"}}}',
        }
    ]
    assert not Annotation.objects.filter(user__username="judge:sloppy").exists()  # nothing guessed
    assert (report.failed, report.failures) == (1, 1)
    assert report.problems[0]["path"] == "conv_0/review/conversation"
    assert "conv_0" in caplog.text and "conversation" in caplog.text and "not JSON" in caplog.text


def test_a_comparison_with_one_unreadable_order_is_partial(chat_server, endpoint):
    project = branch_project(items=1)
    judge = judge_create(name="partial", kind="comparison", endpoint=endpoint, max_attempts=2)
    chat_server.script(label_reply("Better"), label_reply("Best"), label_reply("Great"))

    judge_run(judge=judge, project=project)

    verdict = JudgeVerdict.objects.get()
    assert verdict.status == "failed"  # one pair, its second order unanswered: no label at all
    assert verdict.failures[0]["question"] == "m0: m1-1 vs m1-2 (b-then-a)"
    assert verdict.failures[0]["error"] == 'label "Great" is not one of Better, Same, Worse'
    assert verdict.details["pairs"][0]["label"] is None


def test_rerunning_skips_items_judged_and_redo_asks_again(chat_server, endpoint):
    project = rubric_project(items=2)
    judge = judge_create(name="steady", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()
    judge_run(judge=judge, project=project)

    again = judge_run(judge=judge, project=project)

    assert (again.skipped, again.judged) == (2, 0) and len(chat_server.chats) == 2
    assert Annotation.objects.filter(user__username="judge:steady").count() == 2

    redone = judge_run(judge=judge, project=project, redo=True)

    assert (redone.skipped, redone.judged) == (0, 2) and len(chat_server.chats) == 4
    assert {a.version for a in Annotation.objects.filter(user__username="judge:steady")} == {2}
    assert JudgeVerdict.objects.count() == 2


def test_a_failed_item_is_asked_again_on_the_next_run(chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(name="retry", kind="rubric", endpoint=endpoint, max_attempts=1)
    chat_server.script("nope")
    judge_run(judge=judge, project=project)
    chat_server.respond = lambda body: rubric_reply()

    report = judge_run(judge=judge, project=project)

    assert (report.skipped, report.judged) == (0, 1)
    assert JudgeVerdict.objects.get().status == "done" and JudgeVerdict.objects.get().failures == []


def test_a_429_is_waited_for_as_retry_after_says(chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(name="patient", kind="rubric", endpoint=endpoint)
    chat_server.script(rate_limited(1), rubric_reply())

    report = judge_run(judge=judge, project=project)

    first, second = chat_server.chats
    assert second.at - first.at >= 0.9
    assert report.judged == 1 and JudgeVerdict.objects.get().status == "done"


def test_requests_per_minute_hold_across_the_runs_threads(chat_server, endpoint):
    chat(endpoint, [{"role": "user", "content": "Hi"}], purpose="test")  # the client made before the clock
    endpoint_update(endpoint=endpoint, changes={"requests_per_minute": 120, "max_concurrency": 4})
    project = rubric_project(items=3)
    judge = judge_create(name="paced", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()

    started = time.monotonic()
    judge_run(judge=judge, project=project)

    after = sorted(request.at - started for request in chat_server.chats[1:])
    assert len(after) == 3
    # The k-th slot is k half-seconds after the first, which is no earlier than the start: a
    # busy machine can only send a request later than its slot, never sooner.
    assert all(at >= k * 0.5 - 0.02 for k, at in enumerate(after)), after


def test_a_budget_stops_the_run_and_keeps_what_was_finished(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 1})
    project = rubric_project(items=3)
    judge = judge_create(name="thrifty", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()

    report = judge_run(judge=judge, project=project, budget=Budget(max_tokens=30))

    assert report.judged == 2 and report.stopped.startswith("budget")  # 15 tokens a request
    assert len(chat_server.chats) == 2 and JudgeVerdict.objects.count() == 2
    rest = judge_run(judge=judge, project=project)
    assert (rest.skipped, rest.judged) == (2, 1)


def test_a_refused_key_stops_the_run_at_once(chat_server, endpoint):
    from tests.evaluation.llm.chat_server import error

    project = rubric_project(items=3)
    judge = judge_create(name="locked", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: error(401, "bad key")

    report = judge_run(judge=judge, project=project)

    assert report.stopped and report.judged == 0 and not JudgeVerdict.objects.exists()
    assert API_KEY not in report.stopped


def test_the_key_is_in_no_log_line_result_or_problem(chat_server, endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    project = rubric_project(items=1)
    judge = judge_create(name="quiet", kind="rubric", endpoint=endpoint, max_attempts=1)
    chat_server.script(f"my key is not {API_KEY[:4]}...")

    report = judge_run(judge=judge, project=project)

    assert caplog.records and API_KEY not in caplog.text
    assert API_KEY not in str(report.as_result()) + str(report.problems) + report.line()


def test_a_judge_of_the_wrong_kind_is_refused_before_any_request(chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(name="pairs", kind="comparison", endpoint=endpoint)

    with pytest.raises(JudgeRunRefused, match="tree_annotation scheme") as refused:
        judge_run(judge=judge, project=project)
    assert str(refused.value) == (
        "judge pairs answers a tree_annotation scheme with branch_comparison in pairs: "
        "project rubrics has none"
    )
    with pytest.raises(JudgeRunRefused, match='scheme "review" is not a tree_annotation scheme'):
        judge_run(judge=judge, project=project, scheme="review")
    with pytest.raises(JudgeRunRefused, match='project rubrics has no scheme "nope"'):
        judge_run(judge=judge, project=project, scheme="nope")
    assert chat_server.chats == []


def test_a_template_with_an_unknown_placeholder_is_refused(chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(name="typo", kind="rubric", endpoint=endpoint, prompt_template="Judge $conversaton")

    with pytest.raises(JudgeRunRefused, match=r"unknown placeholder \$conversaton"):
        judge_run(judge=judge, project=project)


def test_a_judges_own_template_is_filled_and_sent(chat_server, endpoint):
    project = rubric_project(items=1)
    judge = judge_create(
        name="own",
        kind="rubric",
        endpoint=endpoint,
        system_prompt="Be terse.",
        prompt_template="Rubric $rubric.\n$conversation\n$criteria\nCosts $$0.",
    )
    chat_server.respond = lambda body: rubric_reply()

    judge_run(judge=judge, project=project)

    system, user = chat_server.chats[0].body["messages"]
    assert system == {"role": "system", "content": "Be terse."}
    assert user["content"].startswith("Rubric Helpful replies.\n[user]\nmessage 0")
    assert user["content"].endswith("Costs $0.")


def test_requests_of_a_run_go_at_once_up_to_the_endpoints_concurrency(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 3})
    project = rubric_project(items=3)
    judge = judge_create(name="quick", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: Answer(rubric_reply(), delay=0.5)

    started = time.monotonic()
    report = judge_run(judge=judge, project=project)

    assert report.judged == 3 and time.monotonic() - started < 1.4


def test_agreement_lists_the_judge_beside_the_people_not_among_them(chat_server, endpoint):
    project = rubric_project(items=2)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply(helpful=True, polite=True)
    judge_run(judge=judge, project=project)
    alice = UserFactory(username="alice")
    for tree in ConversationTree.objects.filter(dataset=project.dataset):
        AnnotationFactory(
            project=project,
            tree=tree,
            user=alice,
            scheme="review",
            payload={"criteria": {"helpful": True, "polite": True}},
        )

    figures = agreement_compute(project)

    assert figures["annotators"] == ["alice"]
    assert figures["judges"] == ["judge:helper"]
    (review,) = figures["schemes"]
    assert (review["annotations"], review["judge_annotations"]) == (2, 2)


def test_a_node_rubric_is_asked_once_per_assistant_message(chat_server, endpoint):
    RubricFactory(yaml=RUBRIC.replace("name: helpfulness", "name: per-reply") + "target: node\n")
    dataset = DatasetFactory()
    ChainTreeFactory(dataset=dataset, chain=4, external_id="long")
    project = ProjectFactory(
        dataset=dataset,
        config_yaml="annotation_schemes:\n  - {annotation_type: rubric, name: replies, description: R, rubric: per-reply}\n",
    )
    judge = judge_create(name="nodes", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply(polite="message 3" not in body["messages"][-1]["content"])

    judge_run(judge=judge, project=project)

    assert len(chat_server.chats) == 2  # m1 and m3
    payload = Annotation.objects.get(user=judge.user).payload
    assert {node: answer["criteria"] for node, answer in payload["nodes"].items()} == {
        "m1": {"helpful": True, "polite": True},
        "m3": {"helpful": True, "polite": False},
    }
    assert set(JudgeVerdict.objects.get().details["nodes"]) == {"m1", "m3"}


def test_comparisons_fill_a_scheme_that_also_selects_a_path(chat_server, endpoint):
    dataset = DatasetFactory()
    ChainTreeFactory(dataset=dataset, chain=1, replies=3, external_id="three")
    project = ProjectFactory(
        dataset=dataset,
        config_yaml=(
            "annotation_schemes:\n"
            "  - annotation_type: tree_annotation\n"
            "    name: branches\n"
            "    description: Compare\n"
            "    path_selection: {enabled: true}\n"
            "    branch_comparison: {enabled: true, labels: [A better, Tie, B better]}\n"
        ),
    )
    judge = judge_create(name="three", kind="comparison", endpoint=endpoint)
    chat_server.respond = lambda body: label_reply("A better")  # always the first shown: all flip

    report = judge_run(judge=judge, project=project)

    assert len(chat_server.chats) == 6 and (report.pairs, report.flips) == (3, 3)
    payload = Annotation.objects.get(user=judge.user).payload
    assert payload["selected_path"] == []
    assert [pair["label"] for pair in payload["branch_comparisons"]["m0"]["pairs"]] == ["Tie"] * 3


def test_a_cancel_keeps_the_items_finished_and_asks_no_more(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 1})
    project = rubric_project(items=4)
    judge = judge_create(name="halted", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply()

    def progress(done: int, total: int) -> None:
        if done >= 1:
            raise JobCancelled

    with pytest.raises(JobCancelled):
        judge_run(judge=judge, project=project, progress=progress)

    # The one thread may have taken up the next item while the first was being counted.
    assert 1 <= JudgeVerdict.objects.filter(status="done").count() <= 2
    assert len(chat_server.chats) <= 2
    kept = JudgeVerdict.objects.count()
    assert judge_run(judge=judge, project=project).judged == 4 - kept  # the next run takes up the rest


def test_a_deleted_reply_is_never_sent_to_the_judge_nor_compared(chat_server, endpoint):
    project = branch_project(items=1)
    tree = ConversationTree.objects.get()
    MessageFactory(
        tree=tree,
        external_id="m1-3",
        parent=tree.messages.get(external_id="m0"),
        role="assistant",
        text="reply 3",
        position=3,
    )
    tree.messages.filter(external_id="m1-2").update(deleted=True)
    judge = judge_create(name="careful", kind="comparison", endpoint=endpoint)
    chat_server.respond = lambda body: label_reply("Better")

    judge_run(judge=judge, project=project)

    sent = " ".join(request.body["messages"][-1]["content"] for request in chat_server.chats)
    assert len(chat_server.chats) == 2  # m1-1 against m1-3, in both orders
    assert "reply 2" not in sent
    comparison = Annotation.objects.get(user__username="judge:careful").payload["branch_comparisons"]["m0"]
    assert comparison["shown_order"] == ["m1-1", "m1-2", "m1-3"]  # the scheme keeps every reply here
    assert [(pair["a"], pair["b"]) for pair in comparison["pairs"]] == [("m1-1", "m1-3")]


def test_exported_pairs_say_a_judges_answers_came_from_a_model(chat_server, endpoint):
    project = branch_project(items=1)
    judge = judge_create(name="picky", kind="comparison", endpoint=endpoint)
    chat_server.respond = lambda body: label_reply("Better" if shown_first(body) == "reply 1" else "Worse")
    judge_run(judge=judge, project=project)
    alice = UserFactory(username="alice")
    AnnotationFactory(
        project=project,
        tree=ConversationTree.objects.get(),
        user=alice,
        scheme="branches",
        payload={
            "branch_comparisons": {
                "m0": {
                    "shown_order": ["m1-2", "m1-1"],
                    "pairs": [{"a": "m1-2", "b": "m1-1", "label": "Better"}],
                }
            }
        },
    )

    lines = [json.loads(line) for line in annotations_export(project=project, format_name="pairs")]

    by_annotator = {line["annotator"]: line.get("annotator_source") for line in lines}
    assert by_annotator == {"judge:picky": "model", "alice": None}
