"""What text the databases can store (``trees.storable``): found anywhere in a JSON value, with
its place, in one walk that never recurses; and mended in what was stored before.

Pure: plain values in, plain values out.
"""

from __future__ import annotations

from typing import Any

from trees.storable import (
    json_problems,
    may_hold_unstorable,
    may_nest_deeper,
    nesting_depth,
    repaired,
    unstorable,
)


def deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_a_nul_and_a_lone_surrogate_cannot_be_stored_and_say_so():
    assert unstorable("a\x00b") == (
        "null_characters_not_allowed",
        "contains a NUL character (\\u0000), which cannot be stored",
        1,
    )
    assert unstorable("ab\udfff") == (
        "surrogate_characters_not_allowed",
        "contains a lone UTF-16 surrogate (\\udfff), which is not text and cannot be stored",
        2,
    )


def test_a_character_beyond_the_first_plane_is_text():
    assert unstorable("ok \U0001f600") is None


def test_each_problem_has_its_path_keys_at_the_object_holding_them():
    document = {"a": [{"b": "x\ud800"}, "fine", "\x00"], "k\udc00": 1, "c": {"d": {"e": "y"}}}

    assert [str(problem) for problem in json_problems(document)] == [
        "a key contains a lone UTF-16 surrogate (\\udc00), which is not text and cannot be stored",
        "a[0].b: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored",
        "a[2]: contains a NUL character (\\u0000), which cannot be stored",
    ]


def test_nesting_past_the_limit_is_one_problem_where_it_passes_it():
    document = {"ok": deep(2), "deep": deep(4)}

    assert [str(problem) for problem in json_problems(document, max_depth=3, depth_setting="SETTING")] == [
        "deep[0][0]: nests arrays and objects more than 3 levels deep (SETTING)"
    ]


def test_the_walk_is_iterative_whatever_the_depth():
    very = deep(200_000)

    assert json_problems(very) == []
    assert nesting_depth(very) == 200_000
    assert nesting_depth(very, stop_above=10) == 11


def test_the_fast_tests_spare_the_walk_only_when_there_can_be_nothing():
    assert not may_hold_unstorable(b'{"a": "plain \\\\u not an escape"}')
    assert may_hold_unstorable(b'{"a": "\\ud83d\\ude00"}')  # a pair: the walk tells
    assert may_hold_unstorable('{"a": "\\u0000"}')
    assert not may_hold_unstorable(b'{"a": "\\u00e9"}')
    assert may_nest_deeper(b"[[[1]]]", 2) and not may_nest_deeper(b"[[[1]]]", 3)
    assert not may_hold_unstorable(b'xx"\\ud800"', 0, 2)


def test_stored_text_is_mended_with_the_replacement_character_keys_too():
    value = {"a\ud800": ["x\udfff", {"b": "\ud83d"}], "fine": "ok \U0001f600"}

    assert repaired(value) == {"a\ufffd": ["x\ufffd", {"b": "\ufffd"}], "fine": "ok \U0001f600"}
    assert repaired("\udc00") == "\ufffd"
