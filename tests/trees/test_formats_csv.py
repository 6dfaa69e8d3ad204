"""Dialogues as CSV, one row per utterance: each dialogue a linear tree ordered
by its index column, every problem named by its row (the header is row 1)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from trees.formats import dialogue_csv
from trees.formats.records import FormatError, TreeRecord
from trees.models import ConversationTree, Message
from trees.services import dataset_get_or_create, tree_import, trees_export

HEADER = "dialog_id,utterance_index,speaker,text\n"


def read(text: str, **options) -> list[TreeRecord]:
    return list(dialogue_csv.read(io.BytesIO(text.encode()), **options))


def issues(text: str, **options) -> list[str]:
    return [str(issue) for tree in read(text, **options) for issue in tree.issues]


def header_problem(text: str, **options) -> str:
    with pytest.raises(FormatError) as caught:
        read(text, **options)
    return str(caught.value.issue)


def turns(tree: TreeRecord) -> list[tuple]:
    return [(m.external_id, m.parent_id, m.role, m.text) for m in tree.messages]


# Reading


def test_each_dialogue_becomes_a_linear_tree_ordered_by_its_index_column():
    trees = read(
        HEADER + "d1,1,ASSISTANT,Hi! What do you like?\n"
        "d1,0,USER,Hello\n"
        "d1,2,USER,Comedies\n"
        "d2,0,human,Anyone there?\n"
        "d2,1,bot,Yes\n"
    )

    assert [tree.external_id for tree in trees] == ["d1", "d2"]
    assert all(tree.ok for tree in trees)
    assert turns(trees[0]) == [
        ("0", None, "user", "Hello"),
        ("1", "0", "assistant", "Hi! What do you like?"),
        ("2", "1", "user", "Comedies"),
    ]
    assert turns(trees[1]) == [("0", None, "user", "Anyone there?"), ("1", "0", "assistant", "Yes")]
    assert [tree.messages[-1].depth for tree in trees] == [2, 1]


def test_further_columns_go_to_each_message_metadata():
    [tree] = read("dialog_id,utterance_index,speaker,text,timestamp,sentiment\nd1,0,user,Hi,09:00,\n")

    assert tree.messages[0].metadata == {"timestamp": "09:00", "sentiment": ""}


def test_quoted_cells_may_hold_commas_and_line_breaks():
    [tree] = read(HEADER + 'd1,0,user,"Well, I like\n""Zodiac"", mostly"\nd1,1,assistant,Why?\n')

    assert turns(tree) == [
        ("0", None, "user", 'Well, I like\n"Zodiac", mostly'),
        ("1", "0", "assistant", "Why?"),
    ]


def test_columns_and_speakers_are_options():
    text = "conv,turn,who,utterance\nc7,0,Customer,Where is my order?\nc7,1,Agent,On its way.\n"

    [tree] = read(
        text,
        dialog_column="conv",
        index_column="turn",
        speaker_column="who",
        text_column="utterance",
        speakers={"Customer": "user", "Agent": "assistant"},
    )

    assert tree.external_id == "c7"
    assert turns(tree) == [("0", None, "user", "Where is my order?"), ("1", "0", "assistant", "On its way.")]


def test_the_default_speaker_table():
    assert dialogue_csv.speaker_table() == {
        "USER": "user",
        "ASSISTANT": "assistant",
        "user": "user",
        "assistant": "assistant",
        "human": "user",
        "bot": "assistant",
    }


# Every problem names its row


def test_a_missing_column_is_named_with_what_the_header_has():
    assert header_problem("dialog_id,speaker,text\nd1,user,hi\n") == (
        'row 1: missing column "utterance_index" (the header has dialog_id, speaker, text)'
    )
    assert header_problem("dialog_id,speaker\n") == (
        'row 1: missing columns "utterance_index" and "text" (the header has dialog_id, speaker)'
    )


def test_a_column_named_twice_is_refused():
    assert header_problem("dialog_id,utterance_index,speaker,text,text\n") == (
        'row 1: the column "text" appears twice (columns 4 and 5)'
    )


def test_an_index_that_is_not_an_integer():
    assert issues(HEADER + "d1,0,user,a\nd1,1,bot,b\nd1,2,user,c\nd1,3a,bot,d\n") == [
        'row 5: utterance_index: "3a" is not an integer'
    ]


def test_duplicate_indexes_within_a_dialogue_name_both_rows():
    assert issues(HEADER + "d1,0,user,a\nd1,3,bot,b\nd1,3,user,c\nd2,3,user,other dialogue\n") == [
        'row 4: utterance_index: duplicate index 3 in dialogue "d1" (first at row 3)'
    ]


def test_a_speaker_that_is_not_in_the_table():
    assert issues(HEADER + "d1,0,user,a\nd1,1,narrator,Once upon a time\n") == [
        'row 3: speaker: "narrator" is not in the speaker table (USER, ASSISTANT, user, assistant, human, bot)'
    ]


def test_a_dialogue_whose_rows_are_apart_names_both_places():
    trees = read(HEADER + "d1,0,user,a\nd1,1,bot,b\nd2,0,user,c\nd1,2,user,d\n")

    assert [str(issue) for issue in trees[2].issues] == [
        'row 5: dialog_id: dialogue "d1" has rows 2 to 3 and goes on here, after other dialogues: '
        "a dialogue's rows must be together (sort the file by dialogue)"
    ]
    assert trees[0].ok and trees[1].ok


def test_a_row_with_the_wrong_number_of_cells_or_no_dialogue_id():
    assert issues(HEADER + "d1,0,user\n,0,user,hi\n") == [
        "row 2: has 3 cells, but the header has 4 columns",
        "row 3: dialog_id: empty dialogue id",
    ]


# Writing


def test_written_dialogues_read_back_the_same():
    text = (
        "dialog_id,utterance_index,speaker,text,timestamp\n"
        "d1,0,user,Hello,09:00\n"
        'd1,1,assistant,"Hi, you",09:01\n'
        "d2,4,user,Bye,10:00\n"
    )

    assert "".join(dialogue_csv.write(read(text))) == text


def test_a_data_file_keeps_exact_values_even_those_a_spreadsheet_would_run():
    """The dataset CSV round-trips data: unlike the reports, it neutralises nothing
    (docs/security.md, "Downloads opened in spreadsheets")."""
    text = HEADER + 'd1,0,user,=1+1\nd1,1,assistant,-5 degrees\nd1,2,user,@mention\n"=d2",0,user,"+x"\n'

    assert "".join(dialogue_csv.write(read(text))) == text.replace('"=d2"', "=d2").replace('"+x"', "+x")


def test_speakers_are_written_back_as_they_came_in():
    text = HEADER + "d1,0,USER,a\nd1,1,bot,b\nd1,2,user,c\nd1,3,ASSISTANT,d\n"

    assert "".join(dialogue_csv.write(read(text))) == text


def test_a_speaker_spelled_as_its_role_leaves_nothing_in_metadata():
    [tree] = read(HEADER + "d1,0,user,a\nd1,1,assistant,b\n")

    assert [m.metadata for m in tree.messages] == [{}, {}]


def test_messages_from_another_format_are_written_with_their_role_names():
    [tree] = read(HEADER + "d1,0,USER,a\nd1,1,ASSISTANT,b\n")
    for message in tree.messages:
        message.metadata = {}  # as a flat or CCPE import leaves them

    assert "".join(dialogue_csv.write([tree])) == HEADER + "d1,0,user,a\nd1,1,assistant,b\n"


def test_a_speaker_the_default_table_reads_as_another_role_is_not_written():
    [tree] = read(HEADER + "d1,0,USER,a\n")
    tree.messages[0].role = "assistant"  # changed since: "USER" no longer says it

    assert "".join(dialogue_csv.write([tree])) == HEADER + "d1,0,assistant,a\n"


def ccpe_as_csv(fixture_path) -> str:
    """The real CCPE dialogue as a CSV, speakers spelled as the corpus spells them."""
    [conversation] = json.loads(fixture_path("ccpe/CCPE-8e113.original.json").read_text())
    buffer = io.StringIO()
    rows = csv.writer(buffer, lineterminator="\n")
    rows.writerow(["dialog_id", "utterance_index", "speaker", "text"])
    for utterance in conversation["utterances"]:
        rows.writerow(
            [conversation["conversationId"], utterance["index"], utterance["speaker"], utterance["text"]]
        )
    return buffer.getvalue()


def test_the_real_ccpe_dialogue_as_csv_comes_back_row_for_row(fixture_path):
    text = ccpe_as_csv(fixture_path)

    trees = read(text)

    assert {m.role for m in trees[0].messages} == {"user", "assistant"}
    assert "".join(dialogue_csv.write(trees)) == text


# Through the service and the commands


@pytest.mark.django_db
def test_an_import_with_a_bad_row_imports_nothing_and_says_which_row():
    dataset = dataset_get_or_create("chats")

    report = tree_import(
        dataset=dataset,
        source=io.BytesIO((HEADER + "d1,0,user,a\nd2,0,user,b\nd2,x,bot,c\n").encode()),
        format_name="csv",
    )

    assert not report.committed
    assert [str(error) for error in report.errors] == ['row 4: utterance_index: "x" is not an integer']
    assert report.as_dict()["errors"][0]["row"] == 4
    assert ConversationTree.objects.count() == 0


@pytest.mark.django_db
def test_the_real_ccpe_dialogue_as_csv_comes_back_from_the_database_row_for_row(fixture_path):
    text = ccpe_as_csv(fixture_path)
    dataset = dataset_get_or_create("movies")

    assert tree_import(dataset=dataset, source=io.BytesIO(text.encode()), format_name="csv").committed

    assert "".join(trees_export(dataset=dataset, format_name="csv")) == text
    assert len(list(csv.reader(io.StringIO(text)))) == 1 + 43


@pytest.mark.django_db
def test_an_import_stops_at_a_missing_column():
    report = tree_import(
        dataset=dataset_get_or_create("chats"),
        source=io.BytesIO(b"dialog_id,text\nd1,hi\n"),
        format_name="csv",
    )

    assert [str(error) for error in report.errors] == [
        'row 1: missing columns "utterance_index" and "speaker" (the header has dialog_id, text)'
    ]


@pytest.mark.django_db
def test_the_commands_take_column_and_speaker_options(tmp_path):
    path = tmp_path / "chats.csv"
    path.write_text("conv,turn,who,utterance\nc1,0,Customer,Hi\nc1,1,Agent,Hello\nc1,2,narrator,(pause)\n")
    columns = ["--dialog-column", "conv", "--index-column", "turn", "--speaker-column", "who"]
    columns += ["--text-column", "utterance"]
    out = io.StringIO()

    call_command(
        "import_trees",
        "chats",
        str(path),
        "--format",
        "csv",
        *columns,
        "--speaker",
        "Customer=user",
        "--speaker",
        "Agent=bot",
        "--speaker",
        "narrator=system",
        stdout=out,
    )

    assert out.getvalue() == "imported into chats: 1 tree created, 3 messages\n"
    assert list(Message.objects.order_by("depth").values_list("role", flat=True)) == [
        "user",
        "assistant",
        "system",
    ]
    exported = tmp_path / "out.csv"
    call_command(
        "export_trees", "chats", "--format", "csv", *columns, "-o", str(exported), stdout=io.StringIO()
    )
    assert exported.read_text() == path.read_text()


@pytest.mark.django_db
def test_a_speaker_option_needs_a_known_role(tmp_path):
    path = tmp_path / "chats.csv"
    path.write_text(HEADER)

    with pytest.raises(CommandError) as caught:
        call_command(
            "import_trees", "chats", str(path), "--format", "csv", "--speaker", "narrator=storyteller"
        )

    assert str(caught.value) == (
        '--speaker "narrator=storyteller": unknown role "storyteller" '
        "(expected user, assistant, system (or bot, gpt, human, model, prompter))"
    )
    assert caught.value.returncode == 2
