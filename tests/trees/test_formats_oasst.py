"""Open-Assistant's message-tree export, read and written without the database.

Open-Assistant writes with ``exclude_none``: whatever a file leaves out must
stay out, and whatever it has must come back, whichever keys a tree uses.
"""

import copy
import gzip
import io
import json

from trees.formats import oasst
from trees.formats.records import TreeRecord
from trees.services import open_source

# A tree with every key Open-Assistant's export can write.
FULL = {
    "message_tree_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
    "tree_state": "ready_for_export",
    "origin": "oasst_2023-04-12",
    "prompt": {
        "message_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
        "user_id": "c3fe8c76-fc30-4fa7-b7f8-c492f5967d18",
        "created_date": "2023-02-05T14:23:50.983374+00:00",
        "text": "Can you write a short introduction about the relevance of monopsony?",
        "role": "prompter",
        "lang": "en",
        "review_count": 3,
        "review_result": True,
        "deleted": False,
        "synthetic": False,
        "emojis": {"+1": 10, "_skip_reply": 1, "_skip_ranking": 4},
        "labels": {
            "spam": {"value": 0.0, "count": 3},
            "lang_mismatch": {"value": 0.0, "count": 3},
            "quality": {"value": 0.8333333333333334, "count": 3},
            "humor": {"value": 0.08333333333333333, "count": 3},
        },
        "events": {
            "emoji": [{"type": "emoji", "user_id": "u-1", "emoji": "+1"}],
            "ranking": [
                {
                    "type": "ranking",
                    "user_id": "u-2",
                    "ranking": [1, 0],
                    "ranked_message_ids": ["c8e83833-ecbc", "6708c47f-05c9"],
                    "ranking_parent_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
                    "message_tree_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
                    "not_rankable": False,
                }
            ],
        },
        "detoxify": {
            "toxicity": 0.00044308538781479,
            "severe_toxicity": 3.252684837207198e-05,
            "obscene": 0.00023475120542570949,
            "identity_attack": 0.0001416115992469713,
            "insult": 0.00039489680784754455,
            "threat": 4.075629112776369e-05,
            "sexual_explicit": 2.712695459194947e-05,
        },
        "replies": [
            {
                "message_id": "c8e83833-ecbc",
                "parent_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
                "user_id": "2c96e467-66f0-4be7-af17-ad0afb3d2101",
                "created_date": "2023-02-06T13:50:44.657083+00:00",
                "text": "Monopsony is a market structure in which there is a single buyer.",
                "role": "assistant",
                "lang": "en",
                "review_count": 3,
                "deleted": False,
                "rank": 0,
                "synthetic": False,
                "labels": {"spam": {"value": 0.0, "count": 3}, "quality": {"value": 0.75, "count": 3}},
                "replies": [
                    {
                        "message_id": "6b1a6c2e-7c1b",
                        "parent_id": "c8e83833-ecbc",
                        "text": "Now explain it to a dog",
                        "role": "prompter",
                        "lang": "en",
                    }
                ],
            },
            {
                "message_id": "6708c47f-05c9",
                "parent_id": "6ab24d72-0181-4594-a9cd-deaf170242fb",
                "text": "",
                "role": "assistant",
                "lang": "en",
                "review_count": 2,
                "review_result": False,
                "deleted": True,
                "rank": 1,
                "synthetic": True,
                "model_name": "oasst-sft-1-pythia-12b",
                "emojis": {"-1": 2},
                "replies": [],
            },
        ],
    },
}


def read(data: object) -> list[TreeRecord]:
    if isinstance(data, dict):
        data = json.dumps(data)
    if isinstance(data, str):
        data = data.encode()
    return list(oasst.read(io.BytesIO(data)))


def issues(data: object) -> list[str]:
    return [str(issue) for tree in read(data) for issue in tree.issues]


def written(trees: list[TreeRecord]) -> list[dict]:
    return [json.loads(line) for line in "".join(oasst.write(trees)).splitlines()]


def full_with(change) -> dict:
    tree = copy.deepcopy(FULL)
    change(tree)
    return tree


def test_it_gives_back_the_same_objects_for_the_real_export(fixture_path):
    data = fixture_path("oasst/en_10_trees.jsonl").read_bytes()
    trees = read(data)

    assert len(trees) == 10
    assert all(tree.ok for tree in trees)
    assert written(trees) == [json.loads(line) for line in data.decode().splitlines()]


def test_it_reads_the_real_export_with_prompter_as_user_and_ids_kept(fixture_path):
    [first, *_] = read(fixture_path("oasst/en_10_trees.jsonl").read_bytes())

    root = first.messages[0]
    assert first.external_id == "054e1df3-35e0-4bb8-a585-607dbdcd24e0"
    assert first.state == "ready_for_export"
    assert (root.external_id, root.parent_id, root.role) == (first.external_id, None, "user")
    assert (root.lang, root.synthetic, root.model_name, root.review_result) == ("en", True, "chip20b", True)
    assert first.messages[1].parent_id == root.external_id
    assert first.messages[1].role == "assistant"
    assert first.messages[1].rank == 0


def test_it_gives_back_every_key_of_a_full_export():
    assert written(read(FULL)) == [FULL]


def test_it_keeps_user_ids_dates_labels_events_and_detoxify_in_metadata():
    [tree] = read(FULL)

    assert tree.metadata == {"origin": "oasst_2023-04-12"}
    assert set(tree.messages[0].metadata) == {
        "user_id",
        "created_date",
        "emojis",
        "labels",
        "events",
        "detoxify",
    }
    assert tree.messages[0].metadata["labels"]["quality"] == {"value": 0.8333333333333334, "count": 3}


def test_it_leaves_out_deleted_and_synthetic_when_a_message_had_neither():
    def strip(tree):
        for key in ("deleted", "synthetic"):
            tree["prompt"].pop(key)
            tree["prompt"]["replies"][1].pop(key)

    tree = full_with(strip)

    assert written(read(tree)) == [tree]


def test_it_leaves_out_replies_of_a_leaf_that_had_none_and_keeps_an_empty_list():
    [tree] = written(read(FULL))

    assert "replies" not in tree["prompt"]["replies"][0]["replies"][0]
    assert tree["prompt"]["replies"][1]["replies"] == []


def test_it_leaves_out_review_result_and_other_fields_a_message_omitted():
    [tree] = written(read(FULL))

    reply = tree["prompt"]["replies"][0]
    assert "review_result" not in reply
    assert "model_name" not in reply
    assert "emojis" not in reply
    assert set(tree["prompt"]["replies"][0]["replies"][0]) == {
        "message_id",
        "parent_id",
        "text",
        "role",
        "lang",
    }


def test_it_leaves_out_a_tree_state_the_file_did_not_have():
    tree = {"message_tree_id": "t1", "prompt": {"message_id": "t1", "text": "Hi", "role": "prompter"}}

    assert written(read(tree)) == [tree]


def test_it_leaves_out_a_parent_id_a_reply_did_not_have():
    tree = full_with(lambda tree: tree["prompt"]["replies"][1].pop("parent_id"))

    assert written(read(tree)) == [tree]


def test_it_keeps_the_parent_id_of_a_prompt_exported_as_a_subtree():
    tree = full_with(lambda tree: tree["prompt"].update(parent_id="elsewhere"))

    [record] = read(tree)

    assert record.messages[0].parent_id is None
    assert written([record]) == [tree]


def test_it_writes_a_tree_that_has_no_prompt_as_its_head_only():
    record = TreeRecord(external_id="t1", state="growing")

    assert written([record]) == [{"message_tree_id": "t1", "tree_state": "growing"}]


def test_it_writes_trees_from_other_formats_with_oasst_roles_and_the_imported_state():
    record = read(FULL)[0]
    record.state = None
    for message in record.messages:
        message.metadata = {}

    [tree] = written([record])

    assert tree["tree_state"] == "ready_for_export"
    assert tree["prompt"]["role"] == "prompter"
    assert tree["prompt"]["replies"][0]["role"] == "assistant"
    assert tree["prompt"]["deleted"] is False
    assert tree["prompt"]["synthetic"] is False
    assert tree["prompt"]["replies"][0]["replies"][0]["replies"] == []


def test_it_reads_a_gzipped_export_through_the_import_source(fixture_path):
    data = fixture_path("oasst/en_10_trees.jsonl").read_bytes()

    trees = list(oasst.read(open_source(io.BytesIO(gzip.compress(data)))))

    assert [tree.external_id for tree in trees] == [tree.external_id for tree in read(data)]


def test_it_reports_a_reply_whose_parent_id_is_not_its_parent():
    tree = full_with(
        lambda tree: tree["prompt"]["replies"][0]["replies"][0].update(parent_id="6708c47f-05c9")
    )

    assert issues(tree) == [
        'line 1: prompt.replies[0].replies[0].parent_id: "6708c47f-05c9" is not the id of the message '
        'it replies to ("c8e83833-ecbc")'
    ]


def test_it_reports_a_duplicate_message_id_with_both_locations():
    tree = full_with(lambda tree: tree["prompt"]["replies"][1].update(message_id="c8e83833-ecbc"))

    assert issues(tree) == [
        'line 1: prompt.replies[1]: duplicate node id "c8e83833-ecbc" (first at prompt.replies[0])'
    ]


def test_it_reports_an_unknown_tree_state():
    tree = full_with(lambda tree: tree.update(tree_state="finished"))

    assert issues(tree) == [
        'line 1: tree_state: unknown tree state "finished" (expected one of initial_prompt_review, '
        "prompt_lottery_waiting, growing, ranking, ready_for_scoring, ready_for_export, scoring_failed, "
        "aborted_low_grade, halted_by_moderator, backlog_ranking)"
    ]


def test_it_reports_a_missing_prompt_and_a_missing_tree_id():
    assert issues(
        '{"message_tree_id": "t1"}\n{"prompt": {"message_id": "m", "text": "", "role": "prompter"}}'
    ) == [
        'line 1: prompt: missing "prompt"',
        "line 2: message_tree_id: missing message tree id",
    ]


def test_it_reports_replies_that_are_not_a_list():
    tree = full_with(lambda tree: tree["prompt"]["replies"][0].update(replies={"message_id": "x"}))

    assert issues(tree) == ["line 1: prompt.replies[0].replies: must be a list, got object"]


def test_it_reports_an_unknown_role_a_missing_text_and_a_missing_message_id():
    def spoil(tree):
        tree["prompt"]["replies"][0].update(role="moderator")
        tree["prompt"]["replies"][1].pop("text")
        tree["prompt"]["replies"][0]["replies"][0].pop("message_id")

    assert issues(full_with(spoil)) == [
        'line 1: prompt.replies[0].role: unknown role "moderator" '
        "(expected user, assistant, system (or bot, gpt, human, model, prompter))",
        "line 1: prompt.replies[0].replies[0]: missing node id",
        'line 1: prompt.replies[1]: missing text ("text")',
    ]


def test_it_reports_a_review_count_that_is_not_an_integer():
    tree = full_with(lambda tree: tree["prompt"].update(review_count="3"))

    assert issues(tree) == ["line 1: prompt.review_count: must be an integer, got string"]
