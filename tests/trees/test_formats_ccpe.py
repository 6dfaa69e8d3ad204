"""CCPE dialogues in both of the corpus's layouts: each dialogue a linear tree,
its segments kept so that a file comes back out exactly as it went in.

The fixtures are the corpus's first dialogue in the original release layout
and the dataset card's example in the Hugging Face layout (tests/fixtures/ccpe).
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from trees.formats import ccpe, ccpe_hf
from trees.formats.records import MessageRecord, TreeRecord
from trees.models import ConversationTree, Message
from trees.services import dataset_get_or_create, tree_import, trees_export

CCPE = Path(__file__).resolve().parents[1] / "fixtures" / "ccpe"
ORIGINAL_FILE = CCPE / "CCPE-8e113.original.json"
HF_FILE = CCPE / "CCPE-6faee.hf.json"
ORIGINAL: list[dict[str, Any]] = json.loads(ORIGINAL_FILE.read_text())
HF: dict[str, Any] = json.loads(HF_FILE.read_text())


def read(value: Any) -> list[TreeRecord]:
    data = value if isinstance(value, bytes) else json.dumps(value).encode()
    return list(ccpe.read(io.BytesIO(data)))


def issues(value: Any) -> list[str]:
    return [str(issue) for tree in read(value) for issue in tree.issues]


def written(trees: list[TreeRecord], layout: str = "original") -> Any:
    text = "".join(ccpe.write(trees, layout=layout))
    if layout == "hf":
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


def dialogue(*utterances: dict[str, Any], conversation: str = "CCPE-test") -> dict[str, Any]:
    return {"conversationId": conversation, "utterances": list(utterances)}


def utterance(index: int, speaker: str, text: str, *segments: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"index": index, "speaker": speaker, "text": text}
    if segments:
        body["segments"] = list(segments)
    return body


def segment(start: int, end: int, text: str, *annotations: tuple[str, str]) -> dict[str, Any]:
    return {
        "startIndex": start,
        "endIndex": end,
        "text": text,
        "annotations": [{"annotationType": kind, "entityType": entity} for kind, entity in annotations],
    }


NAME_GENRE = ("ENTITY_NAME", "MOVIE_GENRE_OR_CATEGORY")


# Reading


def test_a_dialogue_becomes_a_linear_tree_named_by_its_conversation_and_utterance_indexes():
    [tree] = read(ORIGINAL_FILE.read_bytes())

    assert tree.ok, tree.issues
    assert tree.external_id == "CCPE-8e113"
    assert len(tree.messages) == 43
    assert [(m.external_id, m.parent_id, m.depth, m.position) for m in tree.messages[:3]] == [
        ("0", None, 0, 0),
        ("1", "0", 1, 0),
        ("2", "1", 2, 0),
    ]
    assert [(m.role, m.text) for m in tree.messages[:2]] == [
        ("assistant", "generally speaking what type of movies do you watch"),
        ("user", "I like thrillers a lot."),
    ]


def test_consecutive_utterances_by_the_same_speaker_stay_as_they_are():
    [tree] = read(ORIGINAL_FILE.read_bytes())

    # Utterances 3 and 4 are both the user's, 34 and 35 both the assistant's.
    assert [tree.messages[index].role for index in (3, 4, 34, 35)] == [
        "user",
        "user",
        "assistant",
        "assistant",
    ]
    assert tree.messages[4].parent_id == "3"


def test_segments_are_kept_in_the_message_metadata_and_an_utterance_without_any_has_none():
    [tree] = read(ORIGINAL_FILE.read_bytes())

    assert tree.messages[0].metadata == {}
    assert tree.messages[1].metadata == {
        ccpe.SEGMENTS_KEY: [
            segment(7, 16, "thrillers", NAME_GENRE),
            segment(0, 22, "I like thrillers a lot", ("ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY")),
        ]
    }
    kept = [s for m in tree.messages for s in m.metadata.get(ccpe.SEGMENTS_KEY, [])]
    assert (len(kept), sum(len(s["annotations"]) for s in kept)) == (44, 45)


def test_a_segment_with_several_annotations_stays_one_segment():
    [tree] = read(ORIGINAL_FILE.read_bytes())

    shared = [
        s for m in tree.messages for s in m.metadata.get(ccpe.SEGMENTS_KEY, []) if len(s["annotations"]) > 1
    ]
    assert shared == [
        segment(
            0,
            19,
            "Catch Me If You Can",
            ("ENTITY_NAME", "MOVIE_OR_SERIES"),
            ("ENTITY_PREFERENCE", "MOVIE_OR_SERIES"),
        )
    ]


def test_the_hugging_face_layout_reads_as_the_same_kind_of_tree_with_names_for_its_codes():
    [tree] = read(HF_FILE.read_bytes())

    assert tree.ok, tree.issues
    assert tree.external_id == "CCPE-6faee"
    assert [m.role for m in tree.messages[:3]] == ["assistant", "user", "assistant"]
    # The dummy segment of an utterance without segments means none.
    assert tree.messages[0].metadata == {}
    assert tree.messages[1].metadata == {
        ccpe.SEGMENTS_KEY: [
            segment(14, 20, "comedy", NAME_GENRE),
            segment(0, 27, "I really like comedy movies", ("ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY")),
        ]
    }


def test_utterances_are_ordered_by_their_index():
    [tree] = read(
        dialogue(
            utterance(1, "USER", "second"), utterance(0, "ASSISTANT", "first"), utterance(5, "USER", "third")
        )
    )

    assert [(m.external_id, m.text, m.parent_id) for m in tree.messages] == [
        ("0", "first", None),
        ("1", "second", "0"),
        ("5", "third", "1"),
    ]


def test_keys_ccpe_does_not_define_are_kept_on_the_tree_and_the_messages():
    [tree] = read({**dialogue({**utterance(0, "USER", "hi"), "mood": "glad"}), "split": "train"})

    assert tree.metadata == {"split": "train"}
    assert tree.messages[0].metadata == {"mood": "glad"}


# Problems, located


def test_a_dialogue_needs_its_conversation_id_and_utterances():
    assert issues(
        [
            {"utterances": [utterance(0, "USER", "hi")]},
            {"conversationId": "c0", "utterances": []},
            {"conversationId": "c1"},
            {"conversationId": "c2", "utterances": 3},
        ]
    ) == [
        "line 1: conversationId: missing conversation id",
        "line 1: utterances: a dialogue needs at least one utterance",
        'line 1: utterances: missing "utterances"',
        "line 1: utterances: must be a list of utterances (the original layout) or an object of columns "
        "(the Hugging Face layout), got number",
    ]


def test_utterance_problems_name_the_utterance_and_the_key():
    assert issues(
        dialogue(
            utterance(0, "BOT", "hi"),
            {"index": "1", "speaker": "USER", "text": "x"},
            {"index": 2, "speaker": "USER"},
            utterance(0, "USER", "again"),
        )
    ) == [
        'line 1: utterances[0].speaker: unknown speaker "BOT" (expected USER or ASSISTANT)',
        "line 1: utterances[1].index: must be an integer, got string",
        'line 1: utterances[2]: missing "text"',
        "line 1: utterances[3].index: duplicate index 0 (first at utterances[0].index)",
    ]


def test_a_segment_must_be_the_slice_of_its_utterance_it_says_it_is():
    assert issues(
        dialogue(
            utterance(
                0,
                "USER",
                "I like thrillers a lot.",
                segment(7, 15, "thrillers", NAME_GENRE),
                segment(7, 40, "thrillers", NAME_GENRE),
                segment(9, 9, "", NAME_GENRE),
                segment(-1, 3, "I l", NAME_GENRE),
            )
        )
    ) == [
        'line 1: utterances[0].segments[0].text: "thrillers" is not the utterance\'s text from 7 to 15 ("thriller")',
        "line 1: utterances[0].segments[1].endIndex: 40 is past the end of the utterance's text (23 characters)",
        "line 1: utterances[0].segments[2].endIndex: must be greater than startIndex (9), got 9",
        "line 1: utterances[0].segments[3].startIndex: must be 0 or more, got -1",
    ]


def test_segments_carry_ccpe_annotation_and_entity_types_and_nothing_else():
    bad = segment(0, 2, "hi", ("ENTITY_NAME", "ROBOT"))
    bad["annotations"].append({"annotationType": "OPINION", "entityType": "PERSON"})
    bad["confidence"] = 0.5
    assert issues(dialogue(utterance(0, "USER", "hi", bad))) == [
        "line 1: utterances[0].segments[0].confidence: unknown key (expected startIndex, endIndex, text, annotations)",
    ]
    del bad["confidence"]
    assert issues(dialogue(utterance(0, "USER", "hi", bad))) == [
        'line 1: utterances[0].segments[0].annotations[0].entityType: unknown entity type "ROBOT" '
        "(expected MOVIE_GENRE_OR_CATEGORY, MOVIE_OR_SERIES, PERSON, SOMETHING_ELSE)",
        'line 1: utterances[0].segments[0].annotations[1].annotationType: unknown annotation type "OPINION" '
        "(expected ENTITY_NAME, ENTITY_PREFERENCE, ENTITY_DESCRIPTION, ENTITY_OTHER)",
    ]


def test_hugging_face_problems_name_the_column_and_the_entry():
    broken = copy.deepcopy(HF)
    broken["utterances"]["speaker"][2] = 7
    broken["utterances"]["segments"][1]["annotations"][0]["annotationType"] = [9]
    broken["utterances"]["segments"][2]["startIndex"] = [15]

    assert issues(broken) == [
        "line 1: utterances.segments[1].annotations[0].annotationType[0]: unknown annotation type 9 "
        "(expected 0 for ENTITY_NAME, 1 for ENTITY_PREFERENCE, 2 for ENTITY_DESCRIPTION, 3 for ENTITY_OTHER)",
        "line 1: utterances.speaker[2]: unknown speaker 7 (expected 0 for USER or 1 for ASSISTANT)",
        'line 1: utterances.segments[2].text[0]: "comedies" is not the utterance\'s text from 15 to 24 '
        '(" comedies")',
    ]


def test_hugging_face_columns_must_be_of_one_length():
    broken = copy.deepcopy(HF)
    broken["utterances"]["text"].pop()

    assert issues(broken) == ["line 1: utterances.text: has 15 entries, but utterances.index has 16"]


# Writing


def test_the_original_file_comes_back_exactly():
    assert written(read(ORIGINAL_FILE.read_bytes())) == ORIGINAL


def test_the_hugging_face_file_comes_back_exactly_one_dialogue_a_line():
    text = "".join(ccpe_hf.write(read(HF_FILE.read_bytes())))

    assert text.count("\n") == 1
    assert json.loads(text) == HF


def test_each_layout_turns_into_the_other_and_back_exactly():
    original_as_hf = "".join(ccpe_hf.write(read(ORIGINAL_FILE.read_bytes()))).encode()
    hf_as_original = "".join(ccpe.write(read(HF_FILE.read_bytes()))).encode()

    assert written(read(original_as_hf)) == ORIGINAL
    assert written(read(hf_as_original), "hf") == [HF]
    # Utterances without segments: no key in one layout, the dummy in the other.
    assert "segments" not in json.loads(hf_as_original)[0]["utterances"][0]
    assert json.loads(original_as_hf)["utterances"]["segments"][0] == ccpe.HF_NO_SEGMENTS


def test_an_empty_dataset_is_an_empty_array():
    assert "".join(ccpe.write([])) == "[]\n"


def test_a_branching_tree_is_written_along_its_first_replies_indexed_by_position():
    messages = [
        MessageRecord("root", None, "user", "Hello", position=0),
        MessageRecord("resp_b", "root", "assistant", "B", position=1),
        MessageRecord("resp_a", "root", "assistant", "A", position=0),
        MessageRecord("user_2", "resp_a", "user", "Thanks", position=0),
    ]

    [body] = written([TreeRecord(external_id="conv_001", messages=messages)])

    assert body == {
        "conversationId": "conv_001",
        "utterances": [
            {"index": 0, "speaker": "USER", "text": "Hello"},
            {"index": 1, "speaker": "ASSISTANT", "text": "A"},
            {"index": 2, "speaker": "USER", "text": "Thanks"},
        ],
    }


# Through the database and the commands


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "format_name"), [(ORIGINAL_FILE, "ccpe"), (HF_FILE, "ccpe-hf")])
def test_import_then_export_gives_the_same_json(tmp_path, path, format_name):
    call_command("import_trees", "movies", str(path), "--format", format_name, stdout=io.StringIO())
    out = tmp_path / "out.json"

    call_command("export_trees", "movies", "--format", format_name, "-o", str(out), stdout=io.StringIO())

    assert json.loads(out.read_text()) == json.loads(path.read_text())


@pytest.mark.django_db
def test_both_layouts_import_into_one_dataset_and_export_in_either():
    dataset = dataset_get_or_create("movies")
    for path in (ORIGINAL_FILE, HF_FILE):
        with path.open("rb") as source:
            assert tree_import(dataset=dataset, source=source, format_name="ccpe").committed

    assert ConversationTree.objects.filter(dataset=dataset).count() == 2
    assert Message.objects.filter(tree__dataset=dataset).count() == 43 + 16
    assert json.loads("".join(trees_export(dataset=dataset, format_name="ccpe"))) == [
        *ORIGINAL,
        dialogue_of(HF),
    ]
    lines = "".join(trees_export(dataset=dataset, format_name="ccpe-hf")).splitlines()
    assert json.loads(lines[1]) == HF


def dialogue_of(hf: dict[str, Any]) -> dict[str, Any]:
    """The Hugging Face example in the original layout."""
    [tree] = read(hf)
    return written([tree])[0]


@pytest.mark.django_db
def test_a_bad_segment_stops_the_import_and_says_where():
    broken = copy.deepcopy(ORIGINAL)
    broken[0]["utterances"][3]["segments"][1]["endIndex"] = 33
    dataset = dataset_get_or_create("movies")

    report = tree_import(
        dataset=dataset, source=io.BytesIO(json.dumps(broken, indent=2).encode()), format_name="ccpe"
    )

    assert not report.committed
    assert [str(error) for error in report.errors] == [
        "line 2: utterances[3].segments[1].text: \"Zodiac's one of my favorite movies\" is not the utterance's "
        'text from 0 to 33 ("Zodiac\'s one of my favorite movie")'
    ]
