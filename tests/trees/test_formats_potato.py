"""Potato's conversation-tree items, read and written without the database."""

import copy
import io
import json

import pytest

from trees.formats import potato
from trees.formats.records import FormatError, TreeRecord

SEED = {
    "id": "conv_001",
    "tree": {
        "id": "root",
        "role": "user",
        "content": "Hello, I need help with my order",
        "children": [
            {
                "id": "resp_a",
                "role": "assistant",
                "content": "I'd be happy to help! Can you provide your order number?",
                "children": [{"id": "user_2", "role": "user", "content": "It's ORDER-12345", "children": []}],
            },
            {
                "id": "resp_b",
                "role": "assistant",
                "content": "Sure, what seems to be the problem?",
                "children": [],
            },
        ],
    },
}


def read(data: bytes | str | object, **options) -> list[TreeRecord]:
    if not isinstance(data, bytes | str):
        data = json.dumps(data)
    if isinstance(data, str):
        data = data.encode()
    return list(potato.read(io.BytesIO(data), **options))


def issues(data, **options) -> list[str]:
    return [str(issue) for tree in read(data, **options) for issue in tree.issues]


def seed_with(change) -> dict:
    item = copy.deepcopy(SEED)
    change(item)
    return item


def shape(tree: TreeRecord) -> list[tuple]:
    return [
        (message.external_id, message.parent_id, message.role, message.text, message.depth, message.position)
        for message in tree.messages
    ]


def written(trees: list[TreeRecord], **options) -> list[dict]:
    return [json.loads(line) for line in "".join(potato.write(trees, **options)).splitlines()]


def test_it_reads_the_documented_item_keeping_node_ids_parents_and_order(fixture_path):
    [tree] = read(fixture_path("potato/seed_conversation.json").read_bytes())

    assert tree.ok
    assert tree.external_id == "conv_001"
    assert shape(tree) == [
        ("root", None, "user", "Hello, I need help with my order", 0, 0),
        ("resp_a", "root", "assistant", "I'd be happy to help! Can you provide your order number?", 1, 0),
        ("user_2", "resp_a", "user", "It's ORDER-12345", 2, 0),
        ("resp_b", "root", "assistant", "Sure, what seems to be the problem?", 1, 1),
    ]


def test_it_reads_the_same_items_from_an_array_a_single_object_and_jsonl():
    second = {**SEED, "id": "conv_002"}

    from_array = read(json.dumps([SEED, second], indent=2))
    from_jsonl = read(json.dumps(SEED) + "\n" + json.dumps(second) + "\n")
    from_object = read(json.dumps(SEED, indent=2))

    assert [tree.external_id for tree in from_array] == ["conv_001", "conv_002"]
    assert [tree.external_id for tree in from_jsonl] == ["conv_001", "conv_002"]
    assert [tree.external_id for tree in from_object] == ["conv_001"]
    assert shape(from_array[1]) == shape(from_jsonl[1]) == shape(from_object[0])
    assert [tree.line for tree in from_jsonl] == [1, 2]


def test_it_reads_items_with_a_configured_id_key_and_tree_key():
    item = {"conversation_id": "c1", "conversation": SEED["tree"]}

    [tree] = read(item, id_key="conversation_id", tree_key="conversation")

    assert tree.external_id == "c1"
    assert shape(tree) == shape(read(SEED)[0])


def test_it_accepts_text_for_content_and_speaker_for_role():
    item = {"id": "c1", "tree": {"id": "r", "speaker": "human", "text": "Hi", "children": [
        {"id": "a", "speaker": "Assistant", "text": "Hello"},
    ]}}  # fmt: skip

    [tree] = read(item)

    assert tree.ok
    assert shape(tree) == [("r", None, "user", "Hi", 0, 0), ("a", "r", "assistant", "Hello", 1, 0)]
    assert [message.metadata for message in tree.messages] == [{}, {}]


def test_it_works_out_node_paths_only_to_report_a_problem(monkeypatch):
    # A path costs O(depth): working one out for every node would make deep trees quadratic.
    def no_paths(self, index):
        raise AssertionError("a path was worked out for a valid node")

    monkeypatch.setattr(TreeRecord, "location", no_paths)
    item = {"id": "c1", "tree": {"id": 1, "speaker": "human", "text": "Hi", "extra": True, "children": [
        {"id": "a", "role": "Assistant", "content": "Hello", "lang": "en", "children": None},
    ]}}  # fmt: skip

    [tree] = read(item)

    assert tree.ok


def test_it_accepts_integer_ids_as_strings():
    [tree] = read({"id": 7, "tree": {"id": 1, "role": "user", "content": "Hi"}})

    assert (tree.external_id, tree.messages[0].external_id) == ("7", "1")


def test_it_reads_an_empty_text_as_valid():
    [tree] = read(seed_with(lambda item: item["tree"]["children"][1].update(content="")))

    assert tree.ok
    assert tree.messages[3].text == ""


def test_it_keeps_keys_it_does_not_model_in_metadata():
    item = seed_with(lambda item: item.update(ground_truth="resp_a", meta={"source": "x"}))
    item["tree"]["children"][0].update(score=0.9, tags=["polite"])
    item["tree"]["children"][0]["children"][0]["lang"] = "en"

    [tree] = read(item)

    assert tree.metadata == {"ground_truth": "resp_a", "meta": {"source": "x"}}
    assert tree.messages[1].metadata == {"score": 0.9, "tags": ["polite"]}
    assert tree.messages[2].lang == "en"
    assert tree.messages[2].metadata == {}


def test_it_writes_back_what_it_read_including_keys_it_does_not_model():
    item = seed_with(lambda item: item.update(ground_truth="resp_a"))
    item["tree"]["children"][0].update(score=0.9, lang="en", model_name="m-1", synthetic=True)

    assert written(read(item)) == [item]


def test_it_writes_content_and_role_for_items_read_with_text_and_speaker():
    item = {"id": "c1", "tree": {"id": "r", "speaker": "user", "text": "Hi"}}

    assert written(read(item)) == [
        {"id": "c1", "tree": {"id": "r", "role": "user", "content": "Hi", "children": []}}
    ]


def test_it_writes_a_text_key_beside_content_back_as_metadata():
    item = {"id": "c1", "tree": {"id": "r", "role": "user", "content": "Hi", "text": "other", "children": []}}

    assert written(read(item)) == [item]


def test_it_writes_jsonl_by_default_and_a_json_array_when_asked():
    trees = read([SEED, {**SEED, "id": "conv_002"}])

    jsonl = "".join(potato.write(trees))
    array = "".join(potato.write(trees, layout="array"))

    assert [json.loads(line)["id"] for line in jsonl.splitlines()] == ["conv_001", "conv_002"]
    assert json.loads(array) == [SEED, {**SEED, "id": "conv_002"}]
    assert "".join(potato.write([], layout="array")) == "[\n]\n"


def test_it_writes_with_a_configured_id_key_and_tree_key():
    trees = read(SEED)

    assert written(trees, id_key="conversation_id", tree_key="conversation") == [
        {"conversation_id": "conv_001", "conversation": SEED["tree"]}
    ]


def test_a_configured_tree_key_is_written_as_json_whatever_it_holds():
    """The key comes from the caller (an export's option): a quote or a control character in
    it once broke the file's JSON, or added keys of the caller's choosing."""
    trees = read(SEED)
    key = 'tree","injected":"\x0e'

    assert written(trees, tree_key=key) == [{"id": "conv_001", key: SEED["tree"]}]


def test_it_writes_siblings_in_their_position_order_whatever_the_record_order():
    [tree] = read(SEED)
    tree.messages.reverse()  # as rows may come from a database

    assert written([tree]) == [SEED]


def test_it_reports_a_duplicate_node_id_with_both_locations():
    item = seed_with(lambda item: item["tree"]["children"][1].update(id="resp_a"))

    assert issues(item) == [
        'line 1: tree.children[1]: duplicate node id "resp_a" (first at tree.children[0])'
    ]


def test_it_reports_a_duplicate_of_the_root_id_deep_in_the_tree():
    item = seed_with(lambda item: item["tree"]["children"][0]["children"][0].update(id="root"))

    assert issues(item) == ['line 1: tree.children[0].children[0]: duplicate node id "root" (first at tree)']


def test_it_locates_problems_on_the_line_of_their_item():
    bad = seed_with(lambda item: item["tree"]["children"][1].update(id="resp_a"))
    data = json.dumps(SEED) + "\n\n" + json.dumps({**bad, "id": "conv_002"}) + "\n"

    assert issues(data) == [
        'line 3: tree.children[1]: duplicate node id "resp_a" (first at tree.children[0])'
    ]


def test_it_locates_problems_in_an_array_on_the_line_their_item_starts():
    bad = seed_with(lambda item: item["tree"]["children"][1].update(id="resp_a"))
    data = "[\n" + json.dumps(SEED) + ",\n" + json.dumps(bad) + "\n]"

    assert issues(data) == [
        'line 3: tree.children[1]: duplicate node id "resp_a" (first at tree.children[0])'
    ]


def test_it_reports_a_missing_node_id():
    item = seed_with(lambda item: item["tree"]["children"][0]["children"][0].pop("id"))

    assert issues(item) == ["line 1: tree.children[0].children[0]: missing node id"]


def test_it_reports_an_empty_node_id():
    item = seed_with(lambda item: item["tree"]["children"][1].update(id="  "))

    assert issues(item) == ["line 1: tree.children[1].id: empty node id"]


def test_it_reports_a_node_id_that_is_not_a_string():
    item = seed_with(lambda item: item["tree"]["children"][1].update(id=["resp_b"]))

    assert issues(item) == ["line 1: tree.children[1].id: node id must be a string, got array"]


def test_it_reports_a_missing_item_id():
    assert issues({"tree": SEED["tree"]}) == ["line 1: id: missing item id"]


def test_it_reports_an_empty_item_id():
    assert issues({"id": "", "tree": SEED["tree"]}) == ["line 1: id: empty item id"]


def test_it_reports_an_unknown_role():
    item = seed_with(lambda item: item["tree"]["children"][0].update(role="robot"))

    assert issues(item) == [
        'line 1: tree.children[0].role: unknown role "robot" '
        "(expected user, assistant, system (or bot, gpt, human, model, prompter))"
    ]


def test_it_reports_a_role_that_is_not_a_string():
    item = seed_with(lambda item: item["tree"].update(role=None))

    assert issues(item) == ["line 1: tree.role: role must be a string, got null"]


def test_it_reports_a_missing_role():
    item = seed_with(lambda item: item["tree"]["children"][1].pop("role"))

    assert issues(item) == ["line 1: tree.children[1]: missing role"]


def test_it_reports_a_missing_text():
    item = seed_with(lambda item: item["tree"]["children"][1].pop("content"))

    assert issues(item) == ['line 1: tree.children[1]: missing text ("content" or "text")']


def test_it_reports_a_text_that_is_not_a_string():
    item = seed_with(lambda item: item["tree"]["children"][1].update(content=None))

    assert issues(item) == ["line 1: tree.children[1].content: text must be a string, got null"]


def test_it_reports_children_that_are_not_a_list():
    item = seed_with(lambda item: item["tree"]["children"][0].update(children={"id": "x"}))

    assert issues(item) == ["line 1: tree.children[0].children: must be a list, got object"]


def test_it_reports_a_child_that_is_not_an_object():
    item = seed_with(lambda item: item["tree"]["children"].append("resp_c"))

    assert issues(item) == ["line 1: tree.children[2]: must be an object, got string"]


def test_it_reports_an_optional_field_of_the_wrong_type():
    item = seed_with(lambda item: item["tree"]["children"][1].update(synthetic="yes", rank="1"))

    assert issues(item) == [
        "line 1: tree.children[1].synthetic: must be true or false, got string",
        "line 1: tree.children[1].rank: must be an integer, got string",
    ]


def test_it_reports_a_missing_tree_and_a_tree_that_is_not_an_object():
    data = '{"id": "a"}\n{"id": "b", "tree": [1]}\n'

    assert issues(data) == ['line 1: tree: missing "tree"', "line 2: tree: must be an object, got array"]


def test_it_names_the_configured_tree_key_in_messages():
    item = {"cid": "c1", "conv": {"id": "r", "role": "user", "content": "Hi", "children": [{"id": "r"}]}}

    assert issues(item, id_key="cid", tree_key="conv") == [
        "line 1: conv.children[0]: missing role",
        'line 1: conv.children[0]: missing text ("content" or "text")',
        'line 1: conv.children[0]: duplicate node id "r" (first at conv)',
    ]


def test_it_reports_an_item_that_is_not_an_object():
    assert issues('{"id": "a", "tree": {"id": "r", "role": "user", "content": ""}}\n["b"]\n') == [
        "line 2: item must be an object, got array"
    ]


def test_it_reports_every_problem_of_an_item_not_just_the_first():
    item = seed_with(lambda item: item["tree"]["children"][0].update(id="", role="robot", content=3))

    assert issues(item) == [
        "line 1: tree.children[0].id: empty node id",
        'line 1: tree.children[0].role: unknown role "robot" '
        "(expected user, assistant, system (or bot, gpt, human, model, prompter))",
        "line 1: tree.children[0].content: text must be a string, got number",
    ]


def test_it_reports_malformed_jsonl_with_line_and_column_as_an_item_of_its_own():
    data = json.dumps(SEED) + '\n{"id": "conv_002", "tree": }\n'

    [good, bad] = read(data)

    assert good.ok
    assert [str(issue) for issue in bad.issues] == ["line 2: malformed JSON at column 28: Expecting value"]


def test_it_stops_at_a_malformed_json_array():
    with pytest.raises(FormatError) as caught:
        read('[\n{"id": "conv_001"},\n{"id": }\n]')

    assert str(caught.value) == "line 3: malformed JSON at column 8: Expecting value"
