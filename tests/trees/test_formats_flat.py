"""Flat message lists (one message per line, held together by ``parent_id``),
read and written without the database."""

import io
import json

from trees.formats import flat
from trees.formats.records import TreeRecord


def jsonl(*lines: dict) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def read(*lines: dict) -> list[TreeRecord]:
    return list(flat.read(io.BytesIO(jsonl(*lines))))


def read_bytes(data: bytes) -> list[TreeRecord]:
    return list(flat.read(io.BytesIO(data)))


def issues(trees: list[TreeRecord]) -> list[str]:
    return [str(issue) for tree in trees for issue in tree.issues]


def message(id, parent_id=None, role="user", text="...", **more) -> dict:
    return {"id": id, "parent_id": parent_id, "role": role, "text": text, **more}


def shape(tree: TreeRecord) -> list[tuple]:
    return [
        (message.external_id, message.parent_id, message.role, message.text, message.depth, message.position)
        for message in tree.messages
    ]


def written(trees: list[TreeRecord]) -> list[dict]:
    return [json.loads(line) for line in "".join(flat.write(trees)).splitlines()]


def test_it_reads_one_tree_per_root_named_after_it_when_lines_have_no_tree_id():
    trees = read(
        message("q1", text="What is 2+2?"),
        message("a1", "q1", "assistant", "4"),
        message("q2", text="And 3+3?"),
        message("a2", "q1", "assistant", "Four"),
        message("a3", "q2", "assistant", "6"),
    )

    assert [tree.external_id for tree in trees] == ["q1", "q2"]
    assert all(tree.ok for tree in trees)
    assert shape(trees[0]) == [
        ("q1", None, "user", "What is 2+2?", 0, 0),
        ("a1", "q1", "assistant", "4", 1, 0),
        ("a2", "q1", "assistant", "Four", 1, 1),
    ]
    assert shape(trees[1]) == [("q2", None, "user", "And 3+3?", 0, 0), ("a3", "q2", "assistant", "6", 1, 0)]


def test_it_reads_a_child_that_comes_before_its_parent():
    [tree] = read(message("a", "q", "assistant"), message("q"))

    assert tree.ok
    assert [(m.external_id, m.depth) for m in tree.messages] == [("q", 0), ("a", 1)]


def test_it_reads_trees_by_tree_id_one_block_at_a_time():
    trees = read(
        message("root", tree_id="t1"),
        message("reply", "root", "assistant", tree_id="t1"),
        message("root", tree_id="t2"),
    )

    assert [tree.external_id for tree in trees] == ["t1", "t2"]
    assert [tree.line for tree in trees] == [1, 3]
    assert [[m.external_id for m in tree.messages] for tree in trees] == [["root", "reply"], ["root"]]


def test_it_reads_integer_ids_and_tree_ids_as_strings():
    [tree] = read({"id": 1, "parent_id": None, "tree_id": 9, "role": "user", "text": "a"},
                  {"id": 2, "parent_id": 1, "tree_id": 9, "role": "assistant", "text": "b"})  # fmt: skip

    assert tree.external_id == "9"
    assert [(m.external_id, m.parent_id) for m in tree.messages] == [("1", None), ("2", "1")]


def test_it_keeps_other_keys_in_metadata_and_reads_the_fields_it_models():
    [tree] = read(
        message("q", lang="en", score=3, tags=["x"]), message("a", "q", "assistant", rank=0, synthetic=True)
    )

    assert tree.messages[0].metadata == {"score": 3, "tags": ["x"]}
    assert tree.messages[0].lang == "en"
    assert (tree.messages[1].rank, tree.messages[1].synthetic, tree.messages[1].metadata) == (0, True, {})


def test_it_accepts_content_for_text_and_keeps_content_beside_text_as_metadata():
    [tree] = read({"id": "q", "parent_id": None, "role": "user", "content": "Hi"},
                  message("a", "q", "assistant", "Hello", content="other"))  # fmt: skip

    assert [m.text for m in tree.messages] == ["Hi", "Hello"]
    assert tree.messages[1].metadata == {"content": "other"}


def test_it_reads_an_empty_text_as_valid():
    [tree] = read(message("q"), message("a", "q", "assistant", ""))

    assert tree.ok
    assert tree.messages[1].text == ""


def test_it_writes_one_line_per_message_parents_first_with_the_tree_id():
    [tree] = read(
        message("a2", "q", "assistant", "2"), message("q", text="Q"), message("a1", "q", "assistant", "1")
    )

    assert written([tree]) == [
        {"id": "q", "parent_id": None, "tree_id": "q", "role": "user", "text": "Q"},
        {"id": "a2", "parent_id": "q", "tree_id": "q", "role": "assistant", "text": "2"},
        {"id": "a1", "parent_id": "q", "tree_id": "q", "role": "assistant", "text": "1"},
    ]


def test_it_writes_back_what_it_read_including_keys_it_does_not_model():
    lines = [
        message("root", tree_id="t1", lang="en", score=0.5),
        message("reply", "root", "assistant", "", tree_id="t1", model_name="m", rank=1, extra={"k": [1]}),
        message("root", tree_id="t2", deleted=True),
    ]

    assert written(read(*lines)) == lines


def test_it_reads_a_role_spelled_otherwise_as_the_role_and_writes_the_spelling_back():
    lines = [
        message("q", role="prompter", tree_id="t"),
        message("a", "q", "Assistant", tree_id="t"),
        message("b", "q", " bot ", tree_id="t"),
        message("c", "q", "assistant", tree_id="t"),
    ]

    trees = read(*lines)

    assert [m.role for m in trees[0].messages] == ["user", "assistant", "assistant", "assistant"]
    assert written(trees) == lines


def test_a_role_spelled_as_its_name_leaves_nothing_in_metadata():
    [tree] = read(message("q"), message("a", "q", "assistant"))

    assert [m.metadata for m in tree.messages] == [{}, {}]


def test_a_spelling_that_does_not_read_as_the_role_is_not_written():
    [tree] = read(message("q", role="human"))
    tree.messages[0].role = "system"  # changed since: the spelling no longer says it

    assert written([tree])[0]["role"] == "system"


def test_it_reports_a_parent_that_is_not_there():
    trees = read(message("q"), message("a", "q", "assistant"), message("b", "zz", "assistant"))

    assert issues(trees) == ['line 3: parent_id: unknown parent "zz"']


def test_it_reports_a_parent_that_is_not_there_within_a_tree_id():
    trees = read(message("q", tree_id="t"), message("b", "a", "assistant", tree_id="t"))

    assert issues(trees) == ['line 2: parent_id: unknown parent "a"']


def test_it_reports_a_cycle_of_parents_once():
    trees = read(message("q"), message("a", "c"), message("b", "a"), message("c", "b"), message("d", "c"))

    assert issues(trees) == ['line 2: parent_id: cycle of parents: "a" → "c" → "b" → "a"']


def test_it_reports_a_cycle_once_whichever_message_leads_into_it():
    trees = read(message("q"), message("tail", "b"), message("a", "b"), message("b", "a"))

    assert issues(trees) == ['line 4: parent_id: cycle of parents: "b" → "a" → "b"']


def test_it_reports_each_missing_parent_once_in_line_order():
    trees = read(
        message("c", "b"), message("b", "gone"), message("q"), message("d", "missing"), message("e", "d")
    )

    assert issues(trees) == [
        'line 2: parent_id: unknown parent "gone"',
        'line 4: parent_id: unknown parent "missing"',
    ]


def test_it_reports_a_tree_with_no_root():
    trees = read(message("a", "b", tree_id="t"), message("b", "a", tree_id="t"))

    assert issues(trees) == ['line 1: tree "t" has no root (a message whose parent_id is null)']


def test_it_reports_several_roots_in_one_tree():
    trees = read(message("q1", tree_id="t"), message("a", "q1", tree_id="t"), message("q2", tree_id="t"))

    assert issues(trees) == ['line 3: parent_id: tree "t" has several roots: "q1" (line 1) and "q2" (line 3)']


def test_it_names_every_root_of_a_tree_with_several():
    trees = read(*(message(f"q{n}", tree_id="t") for n in range(3)))

    assert issues(trees) == [
        'line 2: parent_id: tree "t" has several roots: "q0" (line 1), "q1" (line 2) and "q2" (line 3)'
    ]


def test_it_reports_a_duplicate_message_id_with_both_lines():
    trees = read(message("q", tree_id="t"), message("a", "q", tree_id="t"), message("a", "q", tree_id="t"))

    assert issues(trees) == ['line 3: id: duplicate message id "a" (first at line 2)']


def test_it_reports_a_duplicate_message_id_across_a_file_without_tree_ids():
    trees = read(message("q"), message("a", "q"), message("q2"), message("a", "q2"))

    assert issues(trees) == ['line 4: id: duplicate message id "a" (first at line 2)']


def test_it_reports_a_tree_whose_lines_are_not_together():
    trees = read(message("q", tree_id="t1"), message("q", tree_id="t2"), message("a", "q", tree_id="t1"))

    assert issues(trees) == [
        'line 3: tree_id: tree "t1" continues here after other trees began (its lines from line 1 must be consecutive)'
    ]


def test_it_reports_a_line_without_tree_id_once_the_first_line_had_one():
    trees = read(message("q", tree_id="t1"), message("a", "q"))

    assert issues(trees) == [
        "line 2: tree_id: missing tree id (the first line has one, so every line needs one)"
    ]


def test_it_reports_a_tree_id_that_is_empty_or_not_a_string():
    trees = read(message("q", tree_id="t1"), message("a", tree_id=""), message("b", tree_id=[1]))

    assert issues(trees) == [
        'line 2: tree_id: tree id must be a non-empty string, got ""',
        "line 3: tree_id: tree id must be a non-empty string, got [1]",
    ]


def test_it_reports_missing_and_empty_message_ids():
    trees = read(message("q"), {"parent_id": "q", "role": "user", "text": ""}, message(" ", "q"))

    assert issues(trees) == ["line 2: id: missing message id", "line 3: id: empty message id"]


def test_it_reports_an_unknown_role_a_missing_role_and_bad_texts():
    trees = read(
        message("q"),
        message("a", "q", "robot"),
        {"id": "b", "parent_id": "q", "text": "x"},
        message("c", "q", text=None),
        {"id": "d", "parent_id": "q", "role": "user"},
    )

    assert issues(trees) == [
        'line 2: role: unknown role "robot" (expected user, assistant, system (or bot, gpt, human, model, prompter))',
        "line 3: missing role",
        "line 4: text: text must be a string, got null",
        'line 5: missing text ("text")',
    ]


def test_it_reports_a_parent_id_that_is_not_a_string():
    trees = read(message("q"), message("a", ["q"]))

    assert issues(trees) == ["line 2: parent_id: must be a string or null, got array"]


def test_it_counts_a_bad_message_against_the_tree_that_holds_it():
    trees = read(
        message("q"), message("a", "q", "robot"), message("b", "a"), message("q2"), message("c", "q2")
    )

    assert [(tree.external_id, tree.ok) for tree in trees] == [("q", False), ("q2", True)]
    assert [str(issue) for issue in trees[0].issues] == [
        'line 2: role: unknown role "robot" (expected user, assistant, system (or bot, gpt, human, model, prompter))'
    ]


def test_it_reports_a_line_that_is_not_an_object_or_not_json():
    trees = read_bytes(jsonl(message("q")) + b'["a"]\n{"id": "b",\n')

    assert issues(trees) == [
        "line 2: message must be an object, got array",
        "line 3: malformed JSON at column 12: Expecting property name enclosed in double quotes",
    ]


def test_it_reports_an_optional_field_of_the_wrong_type():
    trees = read(message("q", lang=3))

    assert issues(trees) == ["line 1: lang: must be a string, got number"]
