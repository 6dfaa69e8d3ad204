"""The checks every import makes whatever the format: text size, depth, node
count, characters that cannot be stored, and item ids repeated in one file."""

import io
import json

from trees.formats import flat, potato
from trees.formats.records import TreeRecord
from trees.validation import ImportLimits, ItemIds, check_limits


def potato_item(item_id: str = "conv_001", line: int = 1, **tree) -> TreeRecord:
    root = {"id": "root", "role": "user", "content": "Hi", "children": []} | tree
    return potato.parse_item({"id": item_id, "tree": root}, line)


def chain(length: int) -> TreeRecord:
    node = None
    for depth in range(length - 1, -1, -1):
        node = {"id": f"n{depth}", "role": "user", "content": "", "children": [node] if node else []}
    return potato.parse_item({"id": "deep", "tree": node}, 4)


def limit_issues(tree: TreeRecord, **limits: int) -> list[str]:
    check_limits(tree, ImportLimits(**limits))
    return [str(issue) for issue in tree.issues]


def test_it_accepts_a_tree_within_every_limit():
    assert limit_issues(chain(3), max_text_chars=10, max_depth=3, max_nodes=3) == []


def test_it_reports_a_text_over_the_size_limit_with_its_node_and_path():
    tree = potato_item(children=[{"id": "resp_a", "role": "assistant", "content": "x" * 12_345}])

    assert limit_issues(tree, max_text_chars=10_000) == [
        'line 1: tree.children[0]: text of node "resp_a" is 12,345 characters, over the limit of 10,000'
    ]


def test_it_counts_characters_not_bytes():
    tree = potato_item(content="é" * 10)

    assert limit_issues(tree, max_text_chars=10) == []


def test_it_reports_a_tree_deeper_than_the_limit_once_naming_its_deepest_node():
    assert limit_issues(chain(6), max_depth=4) == [
        'line 4: tree: 6 levels deep (node "n5"), over the limit of 4'
    ]


def test_it_counts_the_root_as_the_first_level():
    assert limit_issues(chain(4), max_depth=4) == []
    assert limit_issues(chain(5), max_depth=4) == [
        'line 4: tree: 5 levels deep (node "n4"), over the limit of 4'
    ]


def test_it_reports_a_tree_with_more_nodes_than_the_limit():
    assert limit_issues(chain(5), max_nodes=4) == ["line 4: tree: 5 nodes, over the limit of 4 per tree"]


def test_it_reports_every_limit_a_tree_exceeds():
    assert limit_issues(chain(5), max_nodes=4, max_depth=2, max_text_chars=0) == [
        "line 4: tree: 5 nodes, over the limit of 4 per tree",
        'line 4: tree: 5 levels deep (node "n4"), over the limit of 2',
    ]


def test_it_reports_a_nul_character_which_no_database_column_can_hold():
    tree = potato_item(content="a\x00b")

    assert limit_issues(tree) == [
        'line 1: tree: text of node "root" contains a NUL character (\\u0000), which cannot be stored'
    ]


def test_it_reports_ids_longer_than_the_database_keeps():
    tree = potato_item("c" * 256, children=[{"id": "x" * 300, "role": "assistant", "content": ""}])

    assert limit_issues(tree) == [
        "line 1: item id is 256 characters, over the limit of 255",
        "line 1: tree.children[0]: node id is 300 characters, over the limit of 255",
    ]


def test_it_accepts_ids_and_names_as_long_as_the_database_keeps():
    tree = potato_item("c" * 255, id="r" * 255, lang="l" * 32, model_name="m" * 255, review_count=2**31 - 1)

    assert limit_issues(tree) == []


def test_it_reports_a_lang_or_model_name_longer_than_the_database_keeps():
    tree = potato_item(lang="en-" + "x" * 30, model_name="m" * 256)

    assert limit_issues(tree) == [
        'line 1: tree: lang of node "root" is 33 characters, over the limit of 32',
        'line 1: tree: model_name of node "root" is 256 characters, over the limit of 255',
    ]


def test_it_reports_a_review_count_or_rank_the_database_cannot_hold():
    tree = potato_item(
        review_count=-1, children=[{"id": "a", "role": "assistant", "content": "", "rank": 2**31}]
    )

    assert limit_issues(tree) == [
        'line 1: tree: review_count of node "root" is -1, outside 0 to 2,147,483,647',
        'line 1: tree.children[0]: rank of node "a" is 2,147,483,648, outside -2,147,483,648 to 2,147,483,647',
    ]


def test_it_locates_a_flat_message_over_the_limit_by_its_own_line():
    lines = [
        {"id": "q", "parent_id": None, "role": "user", "text": "Hi"},
        {"id": "a", "parent_id": "q", "role": "assistant", "text": "x" * 20},
    ]
    [tree] = flat.read(io.BytesIO("\n".join(json.dumps(line) for line in lines).encode()))

    assert limit_issues(tree, max_text_chars=10) == [
        'line 2: text of node "a" is 20 characters, over the limit of 10'
    ]


def test_it_reports_an_item_id_repeated_in_one_file_with_the_first_line():
    seen = ItemIds()
    trees = [potato_item("conv_001", 1), potato_item("conv_002", 2), potato_item("conv_001", 5)]

    for tree in trees:
        seen.check(tree)

    assert [str(issue) for tree in trees for issue in tree.issues] == [
        'line 5: duplicate item id "conv_001" (first at line 1)'
    ]


def test_it_ignores_items_without_an_id_when_looking_for_repeats():
    seen = ItemIds()
    nameless = [TreeRecord(external_id=None, line=1), TreeRecord(external_id=None, line=2)]

    for tree in nameless:
        seen.check(tree)

    assert [tree.issues for tree in nameless] == [[], []]


def test_it_takes_limits_from_settings_unless_overridden(settings):
    settings.BRANCHPOINT_IMPORT_LIMITS = {"max_text_chars": 50, "max_depth": 7, "max_nodes": 9}

    assert ImportLimits.from_settings() == ImportLimits(max_text_chars=50, max_depth=7, max_nodes=9)
    assert ImportLimits.from_settings(max_depth=3, max_nodes=None) == ImportLimits(
        max_text_chars=50, max_depth=3, max_nodes=9
    )


def test_its_defaults_allow_a_ten_thousand_deep_tree():
    assert ImportLimits().max_depth == 10_000
