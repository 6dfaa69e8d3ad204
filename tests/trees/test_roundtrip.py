"""Import → export → import through the database gives back what went in,
in every format and from one format to another."""

import copy
import io
import json

import pytest

from tests.factories import DatasetFactory
from tests.trees.test_formats_oasst import FULL
from trees.services import tree_import, trees_export

pytestmark = pytest.mark.django_db

POTATO_ITEMS = [
    {
        "id": "conv_001",
        "ground_truth": "resp_a",
        "tree": {
            "id": "root",
            "role": "user",
            "content": "Hello, I need help with my order",
            "children": [
                {
                    "id": "resp_a",
                    "role": "assistant",
                    "content": "I'd be happy to help! Can you provide your order number?",
                    "model_name": "model-a",
                    "score": 0.75,
                    "children": [
                        {"id": "user_2", "role": "user", "content": "It's ORDER-12345", "children": []}
                    ],
                },
                {"id": "resp_b", "role": "assistant", "content": "", "lang": "en", "children": []},
            ],
        },
    },
    {"id": "conv_002", "tree": {"id": "only", "role": "system", "content": "Be brief.", "children": []}},
]
FLAT_LINES = [
    {"id": "q", "parent_id": None, "tree_id": "t1", "role": "user", "text": "What is 2+2?", "source": "quiz"},
    {"id": "a2", "parent_id": "q", "tree_id": "t1", "role": "assistant", "text": "Four", "rank": 1},
    {"id": "follow", "parent_id": "a2", "tree_id": "t1", "role": "user", "text": "Digits please"},
    {"id": "a1", "parent_id": "q", "tree_id": "t1", "role": "assistant", "text": "4", "rank": 0},
    {"id": "q", "parent_id": None, "tree_id": "t2", "role": "user", "text": "", "deleted": True},
]


def load(data: bytes, format_name: str, **options) -> str:
    """Import ``data`` into a new dataset and export it again."""
    dataset = DatasetFactory()
    report = tree_import(dataset=dataset, source=io.BytesIO(data), format_name=format_name, options=options)
    assert report.committed, [str(issue) for issue in report.errors]
    return "".join(trees_export(dataset=dataset, format_name=format_name, options=options))


def jsonl(objects: list[dict]) -> bytes:
    return "".join(json.dumps(one) + "\n" for one in objects).encode()


def objects(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_potato_items_come_back_as_they_went_in():
    exported = load(jsonl(POTATO_ITEMS), "potato")

    assert objects(exported) == POTATO_ITEMS
    assert load(exported.encode(), "potato") == exported


def test_potato_items_come_back_with_the_configured_keys_and_as_an_array():
    items = [{"cid": item["id"], "conv": item["tree"]} for item in POTATO_ITEMS[1:]]

    exported = load(
        json.dumps(items, indent=2).encode(), "potato", id_key="cid", tree_key="conv", layout="array"
    )

    assert json.loads(exported) == items


def test_potato_items_read_with_text_and_speaker_come_back_with_content_and_role():
    item = {"id": "c", "tree": {"id": "r", "speaker": "human", "text": "Hi", "children": [
        {"id": "a", "speaker": "bot", "text": "Hello"}]}}  # fmt: skip

    assert objects(load(jsonl([item]), "potato")) == [
        {
            "id": "c",
            "tree": {
                "id": "r",
                "role": "user",
                "content": "Hi",
                "children": [{"id": "a", "role": "assistant", "content": "Hello", "children": []}],
            },
        }
    ]


def test_the_real_oasst_trees_come_back_as_the_same_objects(fixture_path):
    data = fixture_path("oasst/en_10_trees.jsonl").read_bytes()

    exported = load(data, "oasst")

    assert objects(exported) == objects(data.decode())
    assert load(exported.encode(), "oasst") == exported


def test_an_oasst_tree_with_every_key_comes_back_as_the_same_object():
    sparse = copy.deepcopy(FULL)
    sparse["message_tree_id"] = "sparse"
    del sparse["tree_state"], sparse["origin"]
    for key in ("deleted", "synthetic", "review_result", "user_id", "created_date"):
        del sparse["prompt"][key]
    del sparse["prompt"]["replies"][1]["replies"]

    exported = load(jsonl([FULL, sparse]), "oasst")

    assert objects(exported) == [FULL, sparse]
    assert load(exported.encode(), "oasst") == exported


def test_flat_messages_come_back_as_they_went_in_parents_first():
    exported = load(jsonl(FLAT_LINES), "flat")

    assert objects(exported) == FLAT_LINES
    assert load(exported.encode(), "flat") == exported


def test_flat_roles_come_back_spelled_as_they_went_in():
    lines = [
        line | {"role": {"user": "prompter", "assistant": "Assistant"}[line["role"]]} for line in FLAT_LINES
    ]

    exported = load(jsonl(lines), "flat")

    assert objects(exported) == lines
    assert load(exported.encode(), "flat") == exported


def test_flat_messages_without_tree_ids_come_back_grouped_under_their_root():
    lines = [{key: value for key, value in line.items() if key != "tree_id"} for line in FLAT_LINES[:4]]

    exported = objects(load(jsonl(lines), "flat"))

    assert exported == [line | {"tree_id": "q"} for line in FLAT_LINES[:4]]


def convert(data: bytes, from_format: str, to_format: str) -> str:
    """Import ``data`` in one format into a new dataset and export it in another."""
    dataset = DatasetFactory()
    report = tree_import(dataset=dataset, source=io.BytesIO(data), format_name=from_format)
    assert report.committed, [str(issue) for issue in report.errors]
    return "".join(trees_export(dataset=dataset, format_name=to_format))


def test_potato_to_oasst_to_potato_keeps_ids_roles_text_and_metadata():
    as_oasst = convert(jsonl(POTATO_ITEMS), "potato", "oasst")
    back = convert(as_oasst.encode(), "oasst", "potato")

    assert [tree["message_tree_id"] for tree in objects(as_oasst)] == ["conv_001", "conv_002"]
    assert objects(as_oasst)[0]["prompt"]["role"] == "prompter"
    assert objects(as_oasst)[0]["prompt"]["replies"][0]["parent_id"] == "root"
    assert objects(back) == POTATO_ITEMS


def test_flat_to_potato_to_flat_keeps_the_messages():
    as_potato = convert(jsonl(FLAT_LINES), "flat", "potato")

    assert objects(convert(as_potato.encode(), "potato", "flat")) == FLAT_LINES


def test_oasst_to_flat_to_oasst_keeps_the_real_trees(fixture_path):
    data = fixture_path("oasst/en_10_trees.jsonl").read_bytes()

    oasst_text = convert(convert(data, "oasst", "flat").encode(), "flat", "oasst")

    originals = objects(data.decode())
    for original, copied in zip(originals, objects(oasst_text), strict=True):
        # The flat file has no place for the tree's state: it comes back as "imported".
        assert copied | {"tree_state": original["tree_state"]} == original


@pytest.mark.parametrize("to_format", ["oasst", "oasst-messages", "potato", "ccpe", "csv"])
def test_a_flat_files_role_spellings_stay_with_flat(to_format):
    lines = [
        line | {"role": {"user": "prompter", "assistant": "Assistant"}[line["role"]]} for line in FLAT_LINES
    ]

    exported = convert(jsonl(lines), "flat", to_format)

    assert "_role" not in exported
    assert "Assistant" not in exported


def test_a_csv_files_speaker_spellings_stay_with_csv():
    data = b"dialog_id,utterance_index,speaker,text\nd1,0,USER,Hi\nd1,1,ASSISTANT,Hello\n"

    as_flat = objects(convert(data, "csv", "flat"))

    assert [(line["role"], sorted(line)) for line in as_flat] == [
        ("user", ["id", "parent_id", "role", "text", "tree_id"]),
        ("assistant", ["id", "parent_id", "role", "text", "tree_id"]),
    ]
