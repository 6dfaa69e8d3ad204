"""Open-Assistant's message rows (``--format oasst-messages``), read and written without
the database. The rules:

- rows may come in any order; each ``message_tree_id`` is one tree, assembled from the
  ``parent_id`` links, its siblings in the order of their rows, its state its root's
  ``tree_state``; a row naming no tree belongs to its root's, named after the root;
- every field is kept: what Branchpoint does not model goes to the message's metadata,
  so writing gives back the same rows, whichever keys each row gave or left out;
- the backend's seed data (``user_message_id``, ``parent_message_id``) is read too;
- a missing parent, a cycle, two roots, a row whose tree is not its parent's and a
  message id given twice are refused, naming the line and the message.
"""

from __future__ import annotations

import copy
import io
import json
import random

import pytest

from trees.formats import oasst_messages
from trees.formats.bounds import ReadBounds
from trees.formats.records import FormatError, TreeRecord

TREE = "6ab24d72-0181-4594-a9cd-deaf170242fb"
# A prompt with every field the hub publishes, as Open-Assistant writes it (none left out).
PROMPT = {
    "message_id": TREE,
    "user_id": "c3fe8c76-fc30-4fa7-b7f8-c492f5967d18",
    "created_date": "2023-02-05T14:23:50.983374+00:00",
    "text": "Can you write a short introduction about the relevance of monopsony?",
    "role": "prompter",
    "lang": "en",
    "review_count": 3,
    "review_result": True,
    "deleted": False,
    "synthetic": False,
    "detoxify": {
        "toxicity": 0.00044308538781479,
        "severe_toxicity": 3.252684837207198e-05,
        "obscene": 0.00023475120542570949,
        "identity_attack": 0.0001416115992469713,
        "insult": 0.00039489680784754455,
        "threat": 4.075629112776369e-05,
        "sexual_explicit": 2.712695459194947e-05,
    },
    "message_tree_id": TREE,
    "tree_state": "ready_for_export",
    "emojis": {"+1": 10, "_skip_reply": 1},
    "labels": {"spam": {"value": 0.0, "count": 3}, "quality": {"value": 0.8333333333333334, "count": 3}},
}
REPLY = {
    "message_id": "c8e83833-ecbc-44fe-b6db-735228c25a1c",
    "parent_id": TREE,
    "user_id": "2c96e467-66f0-4be7-9693-bda51356a424",
    "created_date": "2023-02-06T13:50:44.657083+00:00",
    "text": '"Monopsony" refers to a market structure where there is only one buyer.',
    "role": "assistant",
    "lang": "en",
    "review_count": 3,
    "review_result": True,
    "deleted": False,
    "rank": 0,
    "synthetic": False,
    "model_name": None,
    "detoxify": None,
    "message_tree_id": TREE,
    "tree_state": "ready_for_export",
    "emojis": None,
    "labels": None,
}


def jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def read(data: bytes, **options) -> list[TreeRecord]:
    return list(oasst_messages.read(io.BufferedReader(io.BytesIO(data)), **options))


def rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def written(trees: list[TreeRecord], **options) -> list[dict]:
    return rows("".join(oasst_messages.write(trees, **options)))


def issues(trees: list[TreeRecord]) -> list[str]:
    return [str(issue) for tree in trees for issue in tree.issues]


def row(message_id: str, parent_id: str | None = None, tree: str | None = "t", **more) -> dict:
    found = {"message_id": message_id, "parent_id": parent_id, "text": message_id}
    found["role"] = "prompter" if parent_id is None else "assistant"
    if tree is not None:
        found["message_tree_id"] = tree
    return found | more


# Reading


def test_rows_in_any_order_make_one_tree_per_message_tree_id(fixture_path):
    ordered = fixture_path("oasst/en_10_trees.messages.jsonl").read_text().splitlines()
    shuffled = ordered[:]
    random.Random(17).shuffle(shuffled)

    trees = read("\n".join(shuffled).encode())

    assert all(tree.ok for tree in trees)
    by_tree = {tree.external_id: tree for tree in trees}
    expected = read("\n".join(ordered).encode())
    assert len(by_tree) == len(expected) == 10
    for tree in expected:
        again = by_tree[tree.external_id]
        assert {m.external_id: (m.parent_id, m.depth) for m in again.messages} == {
            m.external_id: (m.parent_id, m.depth) for m in tree.messages
        }


def test_siblings_keep_the_order_of_their_rows_and_the_root_row_gives_the_state():
    [tree] = read(jsonl(row("b2", "a", tree_state="growing"), row("a", tree_state="growing"), row("b1", "a")))

    assert [(m.external_id, m.position) for m in tree.messages] == [("a", 0), ("b2", 0), ("b1", 1)]
    assert tree.state == "growing"


def test_what_branchpoint_does_not_model_goes_to_the_message_metadata():
    [tree] = read(jsonl(PROMPT | {"events": {"emoji": []}}, REPLY))
    prompt, reply = tree.messages

    assert (tree.external_id, tree.state) == (TREE, "ready_for_export")
    assert (prompt.role, prompt.lang, prompt.review_count, prompt.review_result) == ("user", "en", 3, True)
    assert prompt.metadata == {
        key: PROMPT[key] for key in ("user_id", "created_date", "detoxify", "emojis", "labels")
    } | {"events": {"emoji": []}}
    assert (reply.rank, reply.model_name, reply.metadata["emojis"]) == (0, None, None)


def test_rows_come_back_the_same_whichever_keys_they_give():
    sparse = {key: value for key, value in REPLY.items() if value is not None}
    older = {key: value for key, value in sparse.items() if key not in ("deleted", "synthetic")}
    odd = copy.deepcopy(REPLY) | {"deleted": None, "message_id": "odd", "extra": [1, {"k": None}]}
    del odd["lang"]
    given = [PROMPT, REPLY, sparse | {"message_id": "s"}, older | {"message_id": "o"}, odd]

    assert written(read(jsonl(*given))) == given


def test_a_row_whose_tree_state_is_not_its_roots_keeps_its_own():
    given = [row("a", tree_state="growing"), row("b", "a", tree_state="ranking"), row("c", "a")]

    [tree] = read(jsonl(*given))

    assert tree.state == "growing"
    assert written([tree]) == given


def test_rows_of_the_sparse_layout_cost_no_metadata(fixture_path):
    trees = read(fixture_path("oasst/en_10_trees.messages.jsonl").read_bytes())

    assert {key for tree in trees for m in tree.messages for key in m.metadata} == {"emojis"}
    assert all(tree.metadata == {} for tree in trees)


def test_rows_that_name_no_tree_belong_to_their_root_and_come_back_without_one():
    given = [row("a", tree=None), row("b", "a", tree=None), row("c", tree=None)]

    trees = read(jsonl(*given))

    assert [(tree.external_id, [m.external_id for m in tree.messages]) for tree in trees] == [
        ("a", ["a", "b"]),
        ("c", ["c"]),
    ]
    assert written(trees) == [given[0], given[1], given[2]]


def test_the_same_message_id_may_be_used_in_two_trees():
    trees = read(jsonl(row("0", tree="d1"), row("1", "0", tree="d1"), row("0", tree="d2")))

    assert [(tree.external_id, len(tree.messages), tree.ok) for tree in trees] == [
        ("d1", 2, True),
        ("d2", 1, True),
    ]


def test_the_backend_seed_data_is_read_as_message_rows(fixture_path):
    seed = json.loads(fixture_path("oasst/seed_generic.json").read_text())

    trees = read(fixture_path("oasst/seed_generic.json").read_bytes())

    assert [tree.external_id for tree in trees] == ["6f1d0711", "cec432cf"]
    assert all(tree.ok for tree in trees)
    assert sum(len(tree.messages) for tree in trees) == len(seed) == 10
    assert {m.external_id: m.parent_id for tree in trees for m in tree.messages} == {
        entry["user_message_id"]: entry["parent_message_id"] for entry in seed
    }
    assert trees[0].messages[0].metadata["task_message_id"] == seed[0]["task_message_id"]
    assert written(trees)[1] == {
        "message_id": seed[1]["user_message_id"],
        "parent_id": seed[1]["parent_message_id"],
        "text": seed[1]["text"],
        "role": "assistant",
        "task_message_id": seed[1]["task_message_id"],
    }


# Problems, each named by its line and message


def test_a_missing_parent_names_the_line_and_the_message():
    trees = read(jsonl(row("a"), row("b", "nope")))

    assert issues(trees) == ['line 2: parent_id: unknown parent "nope" of message "b"']


def test_a_cycle_of_parents():
    trees = read(jsonl(row("a"), row("b", "c"), row("c", "b")))

    assert issues(trees) == ['line 2: parent_id: cycle of parents: "b" → "c" → "b"']


def test_two_roots_in_one_tree():
    trees = read(jsonl(row("a"), row("b", "a"), row("z")))

    assert issues(trees) == ['line 3: parent_id: tree "t" has 2 roots: "a" (line 1) and "z" (line 3)']


def test_a_row_whose_tree_is_not_its_parents():
    trees = read(jsonl(row("a", tree="t1"), row("b", "a", tree="t2"), row("c", "b", tree="t2")))

    assert issues(trees) == [
        'line 2: parent_id: tree "t2" has no root (a message whose parent_id is null)',
        'line 2: message_tree_id: message "b" is in tree "t2", but its parent "a" is in tree "t1"',
    ]


def test_a_message_id_given_twice():
    trees = read(jsonl(row("a"), row("b", "a"), row("b", "a")))

    assert issues(trees) == ['line 3: message_id: duplicate message id "b" (first at line 2)']


def test_a_row_naming_no_tree_whose_parent_is_missing_is_an_item_of_its_own():
    trees = read(jsonl(row("a", tree=None), row("b", "x", tree=None)))

    assert [(tree.external_id, [str(issue) for issue in tree.issues]) for tree in trees] == [
        ("a", []),
        (None, ['line 2: parent_id: unknown parent "x" of message "b"']),
    ]


def test_values_of_the_wrong_type_and_unknown_words():
    trees = read(
        jsonl(
            row("a", review_count="3", tree_state="finished"),
            row("b", "a", role="robot", deleted="no"),
            row(7, "a") | {"text": "x"},
        )
    )

    assert issues(trees) == [
        "line 1: review_count: must be an integer or null, got string",
        'line 1: tree_state: unknown tree state "finished" (expected one of initial_prompt_review, '
        "prompt_lottery_waiting, growing, ranking, ready_for_scoring, ready_for_export, scoring_failed, "
        "aborted_low_grade, halted_by_moderator, backlog_ranking)",
        'line 2: role: unknown role "robot" (expected user, assistant, system (or bot, gpt, human, model, prompter))',
        "line 2: deleted: must be true or false, got string",
        "line 3: message_id: must be a string, got number",
    ]


def test_a_line_that_is_not_a_row():
    trees = read(b'{"message_id": "a", "text": "x", "role": "prompter"}\n[1]\n{"broken\n')

    assert issues(trees) == [
        "line 2: a message row must be an object, got array",
        "line 3: malformed JSON at column 2: Unterminated string starting at",
    ]


def test_a_jsonl_line_over_the_line_bound_stops_the_file():
    with pytest.raises(FormatError) as caught:
        read(jsonl(row("a"), row("b", "a", text="x" * 500)), bounds=ReadBounds(max_line_bytes=200))

    assert str(caught.value.issue) == "line 2: the line is longer than 200 bytes (BRANCHPOINT_MAX_LINE_BYTES)"


# Writing


def test_written_rows_follow_the_hubs_order_then_other_keys():
    [tree] = read(
        jsonl({"tree_state": "ready_for_export", "extra": 1, **{k: v for k, v in reversed(PROMPT.items())}})
    )

    assert list(written([tree])[0]) == [*(key for key in PROMPT if key != "parent_id"), "extra"]


def test_trees_from_other_formats_are_written_as_rows_in_the_sparse_layout():
    [tree] = read(jsonl(row("a", tree="t1"), row("b", "a", tree="t1")))
    for message in tree.messages:
        message.metadata = {}
    tree.state = None

    assert written([tree]) == [
        {"message_id": "a", "text": "a", "role": "prompter", "deleted": False, "synthetic": False,
         "message_tree_id": "t1", "tree_state": "ready_for_export"},
        {"message_id": "b", "parent_id": "a", "text": "b", "role": "assistant", "deleted": False,
         "synthetic": False, "message_tree_id": "t1", "tree_state": "ready_for_export"},
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["x.parquet", "x.PARQUET.gz"])
def test_a_parquet_name_says_parquet(name):
    assert oasst_messages.layout_of(name) == "parquet"


@pytest.mark.parametrize("name", ["x.jsonl", "x.jsonl.gz", "x.json"])
def test_a_jsonl_name_says_jsonl(name):
    assert oasst_messages.layout_of(name) == "jsonl"
