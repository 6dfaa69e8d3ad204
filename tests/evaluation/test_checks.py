"""Automatic checks over a conversation and its tree's metadata, and the JSON paths they read.

Pure: subjects are built from plain records, as the evaluation service builds
them from the database.
"""

from __future__ import annotations

from typing import Any

import pytest

from annotation.problems import Problems
from evaluation.checks import ParseContext, parse_check
from evaluation.paths import MISSING, PathError, parse_path
from evaluation.subjects import Subject, subjects
from trees.formats.records import MessageRecord, TreeRecord

METADATA = {
    "ground_truth": {"participants": ["ana@example.com", "ben@example.com"], "start": "14:00", "minutes": 30},
    "final_state": {
        "booking": {
            "participants": ["Ben@Example.com", "ana@example.com"],
            "start": "14:00",
            "minutes": 30.0,
        },
        "alternatives": [],
        "odd.key": {"value": 1},
    },
    "conflict": False,
    "model": "gpt-x",
}
TURNS = [
    ("user", "Book Ana and Ben at 14:00."),
    ("assistant", "Which day would suit you?"),
    ("user", "Tuesday."),
    ("assistant", "Booked: Tuesday at 14:00 with Ana and Ben."),
]


def record(
    turns: list[tuple[str, str]] = TURNS, metadata: dict[str, Any] = METADATA, **extra: Any
) -> TreeRecord:
    """A linear conversation as a record (``extra`` messages: id -> (parent, role, text))."""
    messages = [
        MessageRecord(f"m{i}", f"m{i - 1}" if i else None, role, text, depth=i)
        for i, (role, text) in enumerate(turns)
    ]
    for node, (parent, role, text) in extra.items():
        messages.append(MessageRecord(node, parent, role, text, position=1))
    return TreeRecord(external_id="conv", messages=messages, metadata=metadata, state="ready_for_export")


def conversation(turns: list[tuple[str, str]] = TURNS, metadata: dict[str, Any] = METADATA) -> Subject:
    ((_, subject),) = subjects(record(turns, metadata), "conversation")
    return subject


def check(raw: Any, subject: Subject | None = None, **context: Any) -> bool:
    problems = Problems()
    compiled = parse_check(raw, "check", problems, ParseContext(context.get("python_checks", ())))
    assert not problems, [str(p) for p in problems.items]
    return compiled(subject or conversation())


# -- paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("metadata.ground_truth.start", "14:00"),
        ("$.ground_truth.start", "14:00"),
        ("metadata.ground_truth.participants[0]", "ana@example.com"),
        ("metadata.ground_truth.participants[-1]", "ben@example.com"),
        ('metadata.final_state["odd.key"].value', 1),
        ("metadata.ground_truth.participants[2]", MISSING),
        ("metadata.ground_truth.start.hour", MISSING),
        ("metadata.nothing.here", MISSING),
        ("node.role", "assistant"),
        ("node.text", "Booked: Tuesday at 14:00 with Ana and Ben."),
        ("node.id", "m3"),
        ("tree.id", "conv"),
        ("tree.state", "ready_for_export"),
    ],
)
def test_a_path_names_a_value_in_the_metadata_the_judged_message_or_the_tree(path: str, value: Any):
    resolved = parse_path(path).resolve(conversation())

    assert resolved is MISSING if value is MISSING else resolved == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'must be a path: a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps'),
        (
            "ground_truth.start",
            '"ground_truth.start" starts with "ground_truth": paths start with metadata, node, tree or $',
        ),
        (
            "metadata.a[x]",
            '"metadata.a[x]" is not a path: cannot read "[x]" (a root (metadata, node, tree or $) then .key, [index] or ["quoted key"] steps)',
        ),
    ],
)
def test_a_path_that_cannot_be_read_says_why(text: str, message: str):
    with pytest.raises(PathError) as caught:
        parse_path(text)

    assert str(caught.value) == message


def test_missing_is_never_equal_to_anything_not_even_itself():
    assert MISSING != MISSING
    assert not MISSING


# -- comparisons of paths -----------------------------------------------------------------


def test_equals_compares_two_paths_as_json_values():
    assert check({"equals": ["metadata.final_state.booking.start", "metadata.ground_truth.start"]})
    # 30.0 minutes in one place and 30 in the other are the same number.
    assert check({"equals": ["metadata.final_state.booking.minutes", "metadata.ground_truth.minutes"]})
    assert not check(
        {"equals": ["metadata.final_state.booking.participants", "metadata.ground_truth.participants"]}
    )


def test_equals_with_two_missing_values_does_not_hold():
    assert not check({"equals": ["metadata.nothing", "metadata.nowhere"]})


def test_equals_can_compare_a_path_with_a_value():
    assert check({"equals": {"path": "metadata.model", "value": "gpt-x"}})
    assert check({"equals": {"path": "metadata.model", "value": "GPT-X", "ignore_case": True}})
    assert not check({"equals": {"path": "metadata.conflict", "value": 0}})  # false is not 0


def test_equals_can_stand_a_default_for_a_missing_or_null_right_hand_value():
    booked = "metadata.final_state.booking.minutes"  # 30.0
    # The ground truth gives no length: the default stands for it.
    assert check({"equals": {"left": booked, "right": "metadata.ground_truth.length", "default": 30}})
    assert not check({"equals": {"left": booked, "right": "metadata.ground_truth.length", "default": 45}})
    # A right-hand value that is there is used as it is (30), whatever the default.
    assert check({"equals": {"left": booked, "right": "metadata.ground_truth.minutes", "default": 45}})


def test_set_equals_ignores_order_and_duplicates_and_can_ignore_case():
    paths = {
        "left": "metadata.final_state.booking.participants",
        "right": "metadata.ground_truth.participants",
    }

    assert not check({"set_equals": paths})
    assert check({"set_equals": {**paths, "ignore_case": True}})
    assert check(
        {
            "set_equals": {
                "path": "metadata.ground_truth.participants",
                "value": ["ben@example.com", "ana@example.com", "ana@example.com"],
            }
        }
    )
    assert not check({"set_equals": ["metadata.ground_truth.participants", "metadata.ground_truth.start"]})


def test_exists_and_truthy():
    assert check({"exists": "metadata.final_state.alternatives"})
    assert not check({"truthy": "metadata.final_state.alternatives"})
    assert check({"exists": "metadata.conflict"})
    assert not check({"truthy": "metadata.conflict"})
    assert not check({"exists": "metadata.final_state.booking.room"})


# -- messages -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "text", "holds"),
    [
        ("last_assistant", "Booked", True),
        ("last_assistant", "Which day", False),
        ("any_assistant", "Which day", True),
        ("last_user", "Tuesday", True),
        ("last", "Booked", True),
        ("any", "Book Ana", True),
        ("any_user", "Booked", False),
        ("path", "Tuesday.\n\nBooked", True),
    ],
)
def test_contains_looks_in_the_chosen_message(message: str, text: str, holds: bool):
    assert check({"contains": {"message": message, "text": text}}) is holds


def test_contains_may_ignore_case_and_accept_any_of_several_texts():
    assert not check({"contains": {"text": "booked"}})
    assert check({"contains": {"text": "booked", "ignore_case": True}})
    assert check({"contains": {"text": ["confirmed", "Booked"]}})


def test_regex_searches_the_chosen_message():
    assert check({"regex": {"pattern": r"\b\d{2}:\d{2}\b"}})
    assert check({"regex": {"message": "any_user", "pattern": "^tuesday", "ignore_case": True}})
    assert not check({"regex": {"message": "last_user", "pattern": "^Book"}})


def test_length_bounds_a_message_a_value_or_the_number_of_messages():
    assert check({"length": {"message": "last_assistant", "min": 20, "max": 60}})
    assert not check({"length": {"message": "last_assistant", "max": 10}})
    assert check({"length": {"path": "metadata.ground_truth.participants", "min": 2, "max": 2}})
    assert not check({"length": {"path": "metadata.final_state.alternatives", "min": 1}})
    assert not check({"length": {"path": "metadata.nothing", "min": 0}})
    assert check({"length": {"messages": "assistant", "max": 2}})
    assert check({"length": {"messages": "any", "min": 4, "max": 4}})


def test_last_role_says_who_spoke_last():
    assert check({"last_role": "assistant"})
    assert check({"last_role": "user"}, conversation(TURNS[:3]))


def test_a_conversation_without_an_assistant_message_has_no_last_assistant_message():
    only_user = conversation([("user", "Hello?")])

    assert not check({"contains": {"text": "Hello"}}, only_user)
    assert check({"contains": {"message": "last", "text": "Hello"}}, only_user)
    assert not check({"length": {"message": "last_assistant", "max": 100}}, only_user)


# -- combinators and Python checks ---------------------------------------------------------


def test_all_any_and_not_combine_checks():
    yes = {"last_role": "assistant"}
    no = {"last_role": "user"}

    assert check({"all": [yes, yes]}) and not check({"all": [yes, no]})
    assert check({"any": [no, yes]}) and not check({"any": [no, no]})
    assert check({"not": no}) and not check({"not": yes})


def test_combinators_nest_at_most_twenty_levels_deep():
    """Reading a check and running it descend one call per all/any/not: the nesting is bounded
    (and a rubric's YAML, by BRANCHPOINT_YAML_MAX_DEPTH, before it)."""
    yes: Any = {"last_role": "assistant"}
    for level in range(20):
        yes = {"not": yes} if level % 2 else {"all": [yes]}
    problems = Problems()

    assert check(yes)
    assert parse_check({"any": [yes]}, "check", problems, ParseContext(())) is None
    assert [str(problem) for problem in problems.items] == [
        "check.any[0]" + ".not.all[0]" * 10 + ": all, any and not nest more than 20 levels deep"
    ]


def test_a_python_check_is_the_function_settings_register_under_its_name(settings):
    settings.BRANCHPOINT_RUBRIC_CHECKS = {"two_turns": "tests.evaluation.test_checks.two_assistant_turns"}

    assert check({"python": "two_turns"}, python_checks=["two_turns"])
    assert not check({"python": "two_turns"}, conversation(TURNS[:2]), python_checks=["two_turns"])


def two_assistant_turns(subject: Subject) -> bool:
    return sum(message.role == "assistant" for message in subject.line) == 2


def test_a_python_check_that_raises_fails_its_criterion_and_says_why(settings):
    settings.BRANCHPOINT_RUBRIC_CHECKS = {"broken": "tests.evaluation.test_checks.broken"}
    subject = conversation()

    assert not check({"python": "broken"}, subject, python_checks=["broken"])
    assert subject.errors == ["broken: KeyError: 'booking'"]


def broken(subject: Subject) -> bool:
    return subject.metadata["booking"]


# -- what a subject is, by target ------------------------------------------------------------


def test_a_branching_tree_is_judged_on_its_main_line_with_every_message_in_scope():
    branching = record(b1=("m0", "assistant", "An alternative reply."))
    ((unit, subject),) = subjects(branching, "conversation")

    assert unit == ""
    assert [m.external_id for m in subject.line] == ["m0", "m1", "m2", "m3"]
    assert [m.external_id for m in subject.messages] == ["m0", "m1", "m2", "m3", "b1"]


def test_paths_are_judged_root_to_leaf_and_nodes_one_assistant_message_at_a_time():
    branching = record(b1=("m0", "assistant", "An alternative reply."))

    paths = {unit: [m.external_id for m in subject.line] for unit, subject in subjects(branching, "path")}
    nodes = {unit: subject.node.external_id for unit, subject in subjects(branching, "node")}

    assert paths == {"m3": ["m0", "m1", "m2", "m3"], "b1": ["m0", "b1"]}
    assert nodes == {"m1": "m1", "m3": "m3", "b1": "b1"}


def test_deleted_messages_and_their_replies_are_left_out():
    tree = record()
    tree.messages[2].deleted = True

    ((_, subject),) = subjects(tree, "conversation")

    assert [m.external_id for m in subject.line] == ["m0", "m1"]
