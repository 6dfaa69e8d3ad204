"""Growing branches with model replies, against a real chat-completions server on 127.0.0.1.

- At the chosen turns (``unanswered``: user turns without an assistant reply; ``leaves``:
  user turns without any reply; ``nodes``: the turns named), N replies each join the tree as
  assistant siblings under the turn, marked ``synthetic`` with the endpoint's ``model_name``
  and the generation settings in their metadata — and an Open-Assistant export carries them.
- The model is sent the system prompt and the conversation down to the turn, with its roles.
- A run is idempotent: the same run again adds nothing; a larger N makes up only the missing.
- A failed request is a problem of its turn (tree, node, why); the run goes on, and a second
  run fills the turn.
- A budget stops the run before its next request, keeping what is done, and says why.
- Every request is in the ledger with purpose ``generate``.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pytest

from evaluation.llm.generation import branches_grow
from evaluation.llm.grow_requests import grow_request_parse
from evaluation.llm.grow_tasks import grow_trees
from evaluation.llm.models import ModelCall
from evaluation.llm.services import endpoint_update
from tests.evaluation.llm.chat_server import error, malformed
from tests.evaluation.llm.conftest import API_KEY
from tests.evaluation.llm.grow_world import generated, grow, grow_dataset, last_user_text, replies_to
from trees.models import AuditEntry, ConversationTree
from trees.services import dataset_get_or_create, tree_import, trees_export

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dataset(endpoint):
    # One request at a time: no threads, so SQLite can run these (test_generation_threads.py has more).
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 1})
    return grow_dataset()


def test_replies_join_the_unanswered_turns_as_marked_siblings(chat_server, endpoint, dataset):
    chat_server.respond = lambda body: f"About {last_user_text(body)!r}"

    report = grow(dataset, n=2, temperature=0.7, top_p=0.9, max_tokens=64, seed=7, system_prompt="Be brief.")

    assert (report.nodes, report.nodes_done, report.added, report.failed) == (2, 2, 4, 0)
    first, second = generated("p2")
    assert [first.text, second.text] == ["About 'How are you?'"] * 2
    for index, reply in enumerate([first, second]):
        assert (reply.role, reply.synthetic, reply.model_name, reply.depth) == (
            "assistant",
            True,
            "test-model",
            3,
        )
        settings = reply.metadata["generation"]
        assert settings["endpoint"] == "local" and settings["index"] == index
        assert settings["settings"] == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 64, "seed": 7 + index}
        assert settings["system_prompt"] == "Be brief."
        assert (settings["prompt_tokens"], settings["completion_tokens"]) == (10, 5)
    assert [reply.position for reply in replies_to("q1")] == [0, 1]
    assert generated("r1") == [] and generated("p1") == []  # answered turns are left alone
    sent = next(request.body for request in chat_server.chats if "How are you?" in json.dumps(request.body))
    assert sent["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "How are you?"},
    ]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.7, 0.9, 64)
    assert sorted(request.body["seed"] for request in chat_server.chats) == [7, 7, 8, 8]
    calls = ModelCall.objects.all()
    assert [call.purpose for call in calls] == ["generate"] * 4
    assert (report.requests, report.prompt_tokens, report.completion_tokens) == (4, 40, 20)


def test_the_replies_take_the_turns_language_and_move_their_trees_on(chat_server, endpoint, dataset):
    before = ConversationTree.objects.get(external_id="fruit").updated_at

    grow(dataset)

    assert generated("q1")[0].lang is None and generated("p2")[0].lang is None
    assert ConversationTree.objects.get(external_id="fruit").updated_at > before
    entries = AuditEntry.objects.filter(action="replies.add")
    assert sorted(entry.target_repr for entry in entries) == ["chat", "fruit"]
    assert {entry.scope for entry in entries} == {"grown"}


def test_an_open_assistant_export_carries_the_marks(chat_server, endpoint, dataset):
    chat_server.respond = lambda body: "Apple."
    grow(dataset, temperature=0.5)

    lines = [
        json.loads(line) for line in "".join(trees_export(dataset=dataset, format_name="oasst")).splitlines()
    ]

    fruit = next(tree for tree in lines if tree["message_tree_id"] == "fruit")
    (reply,) = fruit["prompt"]["replies"]
    assert (reply["text"], reply["role"], reply["synthetic"], reply["model_name"]) == (
        "Apple.",
        "assistant",
        True,
        "test-model",
    )
    assert reply["generation"]["settings"] == {"temperature": 0.5}


def test_the_same_run_again_adds_nothing_and_a_larger_n_only_what_is_missing(chat_server, endpoint, dataset):
    grow(dataset, n=2, temperature=0.7)

    again = grow(dataset, n=2, temperature=0.7)
    assert (again.nodes, again.nodes_done, again.added, again.existing, again.requests) == (2, 2, 0, 4, 0)

    more = grow(dataset, n=3, temperature=0.7)
    assert (more.added, more.existing, more.requests) == (2, 4, 2)
    assert len(generated("p2")) == 3 and len(generated("q1")) == 3
    assert len(chat_server.chats) == 6


def test_other_settings_are_another_run(chat_server, endpoint, dataset):
    grow(dataset, temperature=0.7)

    other = grow(dataset, temperature=1.0)

    # The first run answered the turns: "unanswered" now finds none for another run.
    assert (other.nodes, other.added) == (0, 0)
    named = grow(dataset, rule="nodes", nodes=["q1"], temperature=1.0)
    assert (named.nodes, named.added) == (1, 1)
    assert sorted(reply.metadata["generation"]["settings"]["temperature"] for reply in generated("q1")) == [
        0.7,
        1.0,
    ]


def test_leaves_and_named_turns(chat_server, endpoint, dataset):
    report = grow(dataset, rule="leaves")
    assert report.added == 2 and len(generated("p2")) == 1 and len(generated("q1")) == 1

    named = grow(dataset, rule="nodes", nodes=["r1", "a1", "nowhere"], trees=["done", "chat"], temperature=0)

    assert (named.nodes, named.added, named.refused) == (1, 1, 2)
    assert len(generated("r1")) == 1
    problems = sorted((problem["tree"], problem["node"], problem["message"]) for problem in named.problems)
    assert problems == [
        ("-", "nowhere", "no such node in the chosen trees"),
        ("chat", "a1", "assistant turn: only user turns get model replies"),
    ]


def test_a_failed_request_is_its_turns_problem_and_a_second_run_fills_it(chat_server, endpoint, dataset):
    def respond(body):
        if last_user_text(body) == "Name a fruit":
            return malformed()
        return "Fine, thanks."

    chat_server.respond = respond
    report = grow(dataset, n=2)

    assert (report.nodes, report.nodes_done, report.failed, report.added) == (2, 1, 1, 2)
    (problem,) = report.problems
    assert (problem["tree"], problem["node"]) == ("fruit", "q1")
    assert problem["message"].startswith("local: the answer is not a chat completion")
    assert problem["text"].startswith("tree fruit, node q1: local:")
    assert generated("q1") == []

    chat_server.respond = lambda body: "Banana."
    second = grow(dataset, n=2)
    # p2 is chosen again (its replies are the run's own) and found complete.
    assert (second.nodes, second.nodes_done, second.added, second.existing, second.requests) == (
        2,
        2,
        2,
        2,
        2,
    )
    assert [reply.text for reply in generated("q1")] == ["Banana.", "Banana."]


def test_an_empty_reply_is_a_failure_not_a_node(chat_server, endpoint, dataset):
    chat_server.respond = lambda body: ""

    report = grow(dataset)

    assert (report.added, report.failed) == (0, 2)
    assert "the reply is empty" in report.problems[0]["message"]


def test_a_budget_stops_the_run_before_it_overspends_and_keeps_what_is_done(chat_server, endpoint, dataset):
    report = grow(dataset, n=3, budget_tokens=40)  # each answer is 10 + 5 tokens: a third would make 45

    assert report.requests == 2 and report.added == 2
    assert (
        report.stopped == "the next request would pass the budget of 40 tokens (30 used, up to 15 a request)"
    )
    assert report.nodes_done == 0  # the first turn has 2 of its 3
    assert "; stopped: the next request would pass" in report.summary()
    assert len(chat_server.chats) == 2

    rest = grow(dataset, n=3)
    assert (rest.added, rest.existing, rest.nodes_done) == (4, 2, 2)


def test_a_money_budget_counts_the_endpoints_prices(chat_server, endpoint, dataset):
    endpoint_update(endpoint=endpoint, changes={"output_price_per_1k": Decimal("10")})  # 0.05 an answer

    report = grow(dataset, n=3, budget_cost="0.12")

    assert (report.requests, report.cost) == (2, Decimal("0.1"))
    assert (
        report.stopped
        == "the next request would pass the budget of 0.12 (0.1000 spent, up to 0.0500 a request)"
    )
    assert report.as_dict()["cost"] == "0.100000"


def test_the_key_is_nowhere_in_the_problems_the_ledger_or_the_report(chat_server, endpoint, dataset):
    chat_server.respond = lambda body: error(401, f"Incorrect API key provided: {API_KEY}")

    report = grow(dataset)

    assert report.failed == 2
    shown = json.dumps([report.as_dict(), report.problems, report.summary()])
    assert API_KEY not in shown
    assert all(API_KEY not in call.error for call in ModelCall.objects.all())
    assert "refused the API key" in report.problems[0]["message"]


def test_a_cancel_stops_the_run_between_turns_and_keeps_the_replies_made(chat_server, endpoint, dataset):
    class Cancelled(Exception):
        pass

    def progress(done: int, total: int) -> None:
        if done:
            raise Cancelled

    request = grow_request_parse({"endpoint": "local", "n": 2})
    trees, _ = grow_trees(dataset=dataset)
    with pytest.raises(Cancelled):
        branches_grow(trees=trees, request=request, progress=progress)

    assert len(generated("p2")) == 2 and generated("q1") == []
    assert len(chat_server.chats) == 2
    assert grow(dataset, n=2).added == 2  # the rest, when run again


def test_a_potato_trees_roles_go_to_the_model_as_they_are(chat_server, endpoint, dataset):
    item = {
        "id": "potato-1",
        "tree": {
            "id": "u",
            "role": "user",
            "content": "Plan a trip",
            "children": [
                {
                    "id": "a",
                    "role": "assistant",
                    "content": "Where to?",
                    "children": [{"id": "u2", "role": "user", "content": "Rome"}],
                }
            ],
        },
    }
    potato = dataset_get_or_create("potato-trees")
    assert tree_import(
        dataset=potato, source=io.BytesIO(json.dumps(item).encode()), format_name="potato"
    ).committed

    report = grow(potato)

    assert report.added == 1 and generated("u2")[0].synthetic
    assert chat_server.chats[0].body["messages"] == [
        {"role": "user", "content": "Plan a trip"},
        {"role": "assistant", "content": "Where to?"},
        {"role": "user", "content": "Rome"},
    ]
