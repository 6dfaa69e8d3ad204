"""CCPE projects: the shipped config, the corpus's spans as its reference answers, and
exports that write spans back in the corpus's own format — the reference
exactly as it came in, an annotator's spans beside it in the same shape.

Alice and Bob annotate; ccpe-gold holds what the corpus says, marked as a reference
(``source=reference``): exports leave it out unless asked for it.
"""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.exports import annotations_export
from annotation.models import Annotation, Membership, ProjectItem
from annotation.problems import ProblemsError
from annotation.projects.references import REFERENCE_USERNAME
from annotation.projects.services import membership_add, project_config_update, project_create
from annotation.review.selectors import review_item, review_queue
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import person
from tests.factories import CorpusDatasetFactory, DatasetFactory
from trees.services import tree_import

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
CCPE_CONFIG = (ROOT / "platform" / "configs" / "ccpe.yaml").read_text()
FIXTURES = ROOT / "tests" / "fixtures" / "ccpe"
ORIGINAL_FILE = FIXTURES / "CCPE-8e113.original.json"
HF_FILE = FIXTURES / "CCPE-6faee.hf.json"
ORIGINAL = json.loads(ORIGINAL_FILE.read_text())
HF = json.loads(HF_FILE.read_text())


def ccpe_project(
    name: str = "movies", files: tuple[Path, ...] = (ORIGINAL_FILE, HF_FILE), **roles: Any
) -> Any:
    dataset = CorpusDatasetFactory(name=f"{name}-corpus", files=files)
    project = project_create(name=name, dataset=dataset, config_yaml=CCPE_CONFIG)
    for user in roles.get("annotators", ()):
        membership_add(project=project, user=user, role=Membership.Role.ANNOTATOR)
    return project


def exported(project: Any, format_name: str = "ccpe", **options: Any) -> Any:
    text = "".join(annotations_export(project=project, format_name=format_name, **options))
    if format_name == "ccpe-hf":
        return [json.loads(line) for line in text.splitlines()]
    return json.loads(text)


def gold(project: Any, external_id: str) -> Annotation:
    """The item's reference answer (the corpus's spans)."""
    return Annotation.objects.get(project=project, tree__external_id=external_id, source="reference")


def span(node: str, start: int, end: int, text: str, label: str, entity: str) -> dict[str, Any]:
    return {
        "node": node,
        "start": start,
        "end": end,
        "text": text,
        "label": label,
        "attributes": {"entityType": entity},
    }


# The shipped config and the gold set


def test_the_shipped_config_is_one_span_scheme_with_ccpe_labels_and_entity_types():
    project = ccpe_project()
    [scheme] = project.config["annotation_schemes"]

    assert [label["name"] for label in scheme["labels"]] == [
        "ENTITY_NAME",
        "ENTITY_PREFERENCE",
        "ENTITY_DESCRIPTION",
        "ENTITY_OTHER",
    ]
    assert [attribute["name"] for attribute in scheme["attributes"]] == ["entityType"]
    assert [label["name"] for label in scheme["attributes"][0]["labels"]] == [
        "MOVIE_GENRE_OR_CATEGORY",
        "MOVIE_OR_SERIES",
        "PERSON",
        "SOMETHING_ELSE",
    ]
    assert (scheme["allow_overlap"], scheme["import_spans"]) == (True, "ccpe")


def test_creating_the_project_makes_the_corpus_spans_a_reference_answer_per_item():
    project = ccpe_project()

    answer = gold(project, "CCPE-8e113")
    assert (answer.status, answer.source, answer.scheme) == ("submitted", "reference", "preferences")
    assert answer.is_reference and answer.user.username == REFERENCE_USERNAME
    spans = answer.payload["spans"]
    assert len(spans) == 45  # 44 segments, one of them with two annotations
    assert spans[:2] == [
        span("1", 0, 22, "I like thrillers a lot", "ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY"),
        span("1", 7, 16, "thrillers", "ENTITY_NAME", "MOVIE_GENRE_OR_CATEGORY"),
    ]
    assert [s["label"] for s in spans if s["text"] == "Catch Me If You Can"] == [
        "ENTITY_NAME",
        "ENTITY_PREFERENCE",
    ]
    assert len(gold(project, "CCPE-6faee").payload["spans"]) == 17


def test_the_gold_user_cannot_log_in_and_takes_no_place_in_hand_out():
    alice = person("alice")
    project = ccpe_project(annotators=[alice])

    user = get_user_model().objects.get(username=REFERENCE_USERNAME)
    assert not user.has_usable_password()
    assert not Membership.objects.filter(user=user).exists()
    assert list(
        ProjectItem.objects.filter(project=project).values_list("submitted_count", "active_count")
    ) == [
        (0, 0),
        (0, 0),
    ]
    assert item_next(project=project, user=alice).tree.external_id == "CCPE-8e113"


def test_the_reference_is_not_reviewed_work_in_the_queue_or_side_by_side():
    project = two_annotators_submit_nothing()
    tree_id = ProjectItem.objects.get(project=project).tree_id

    queue = review_queue(project=project, status="all")
    item = review_item(project=project, tree_id=tree_id, viewer=None)

    assert [[entry.username for entry in row.entries] for row in queue.rows] == [["alice", "bob"]]
    assert (queue.annotators, [column.assignment.user.username for column in item.columns]) == (
        ["alice", "bob"],
        ["alice", "bob"],
    )


def test_dialogues_imported_later_get_their_gold_answer_and_earlier_ones_keep_theirs():
    project = ccpe_project(files=(ORIGINAL_FILE,))
    first = gold(project, "CCPE-8e113")

    with HF_FILE.open("rb") as source:
        assert tree_import(dataset=project.dataset, source=source, format_name="ccpe-hf").committed

    assert gold(project, "CCPE-8e113").pk == first.pk
    assert len(gold(project, "CCPE-6faee").payload["spans"]) == 17


def test_dialogues_without_segments_get_an_empty_gold_answer():
    data = b"dialog_id,utterance_index,speaker,text\nnew-1,0,ASSISTANT,What do you watch?\nnew-1,1,USER,Westerns.\n"
    dataset = CorpusDatasetFactory(name="fresh", data=[data], format_name="csv")

    project = project_create(name="fresh", dataset=dataset, config_yaml=CCPE_CONFIG)

    assert gold(project, "new-1").payload == {"spans": []}


def test_a_config_changed_to_import_spans_gets_the_gold_set():
    dataset = CorpusDatasetFactory(name="later", files=[ORIGINAL_FILE])
    plain = CCPE_CONFIG.replace("    import_spans: ccpe\n", "")
    project = project_create(name="later", dataset=dataset, config_yaml=plain)
    assert not Annotation.objects.filter(project=project).exists()

    project_config_update(project=project, config_yaml=CCPE_CONFIG)

    assert len(gold(project, "CCPE-8e113").payload["spans"]) == 45


def test_a_project_importing_ccpe_spans_needs_the_ccpe_labels():
    dataset = DatasetFactory(name="elsewhere")
    config = CCPE_CONFIG.replace('      - {name: ENTITY_OTHER, key_value: "4", color: "#9333ea"}\n', "")

    with pytest.raises(ProblemsError) as error:
        project_create(name="elsewhere", dataset=dataset, config_yaml=config)

    assert [str(problem) for problem in error.value.problems] == [
        "annotation_schemes[0].import_spans: ccpe needs the labels ENTITY_OTHER (CCPE's annotation types)"
    ]


# Exports in the corpus's format


def test_the_reference_export_is_the_corpus_exactly_in_either_layout():
    project = ccpe_project()

    original = exported(project, "ccpe", reference="only", options={"name_annotators": False})
    hf = exported(project, "ccpe-hf", reference="only", options={"name_annotators": False})

    assert original[0] == ORIGINAL[0]
    assert hf[1] == HF


def test_an_annotators_spans_are_exported_in_the_corpus_format_beside_what_they_kept():
    alice = person("alice")
    project = ccpe_project(files=(ORIGINAL_FILE,), annotators=[alice])
    held = item_next(project=project, user=alice)
    spans = [
        # One of the corpus's spans, as the corpus has it ...
        span("1", 7, 16, "thrillers", "ENTITY_NAME", "MOVIE_GENRE_OR_CATEGORY"),
        # ... and three of her own: nested in it, and crossing each other.
        span("1", 2, 16, "like thrillers", "ENTITY_PREFERENCE", "MOVIE_GENRE_OR_CATEGORY"),
        span("1", 7, 22, "thrillers a lot", "ENTITY_DESCRIPTION", "MOVIE_GENRE_OR_CATEGORY"),
        span("2", 0, 9, "thrillers", "ENTITY_NAME", "SOMETHING_ELSE"),
    ]
    item_submit(
        project=project, tree=held.tree, user=alice, answers={"preferences": {"spans": spans}}, version=1
    )

    [dialogue] = exported(project, user=alice, options={"name_annotators": False})

    utterances = dialogue["utterances"]
    assert utterances[1]["segments"] == [
        {
            "startIndex": 7,
            "endIndex": 16,
            "text": "thrillers",
            "annotations": [{"annotationType": "ENTITY_NAME", "entityType": "MOVIE_GENRE_OR_CATEGORY"}],
        },
        {
            "startIndex": 2,
            "endIndex": 16,
            "text": "like thrillers",
            "annotations": [{"annotationType": "ENTITY_PREFERENCE", "entityType": "MOVIE_GENRE_OR_CATEGORY"}],
        },
        {
            "startIndex": 7,
            "endIndex": 22,
            "text": "thrillers a lot",
            "annotations": [
                {"annotationType": "ENTITY_DESCRIPTION", "entityType": "MOVIE_GENRE_OR_CATEGORY"}
            ],
        },
    ]
    assert utterances[2]["segments"] == [
        {
            "startIndex": 0,
            "endIndex": 9,
            "text": "thrillers",
            "annotations": [{"annotationType": "ENTITY_NAME", "entityType": "SOMETHING_ELSE"}],
        }
    ]
    # Utterances she left without spans have no segments key, as in CCPE.
    assert "segments" not in utterances[3]
    assert [u["text"] for u in utterances] == [u["text"] for u in ORIGINAL[0]["utterances"]]


def test_keeping_one_of_two_annotations_of_a_segment_keeps_the_segment_with_that_one():
    alice = person("alice")
    project = ccpe_project(files=(ORIGINAL_FILE,), annotators=[alice])
    held = item_next(project=project, user=alice)
    tree = held.tree
    node = next(m for m in tree.messages.all() if m.text.startswith("Catch Me If You Can"))
    kept = span(node.external_id, 0, 19, "Catch Me If You Can", "ENTITY_PREFERENCE", "MOVIE_OR_SERIES")
    item_submit(project=project, tree=tree, user=alice, answers={"preferences": {"spans": [kept]}}, version=1)

    [dialogue] = exported(project, user=alice, options={"name_annotators": False})

    [utterance] = [u for u in dialogue["utterances"] if u["index"] == int(node.external_id)]
    expected = copy.deepcopy(
        next(u for u in ORIGINAL[0]["utterances"] if u["index"] == int(node.external_id))
    )
    expected["segments"] = [s for s in expected["segments"] if s["text"] == "Catch Me If You Can"]
    expected["segments"][0]["annotations"] = [
        {"annotationType": "ENTITY_PREFERENCE", "entityType": "MOVIE_OR_SERIES"}
    ]
    assert utterance == expected


def two_annotators_submit_nothing() -> Any:
    alice, bob = person("alice"), person("bob")
    project = ccpe_project(files=(ORIGINAL_FILE,), annotators=[alice, bob])
    for user in (alice, bob):
        held = item_next(project=project, user=user)
        item_submit(
            project=project, tree=held.tree, user=user, answers={"preferences": {"spans": []}}, version=1
        )
    return project


def test_an_export_of_everyone_names_each_dialogues_annotator_and_leaves_the_reference_out():
    project = two_annotators_submit_nothing()

    dialogues = exported(project)

    assert [(d["conversationId"], d["annotator"]) for d in dialogues] == [
        ("CCPE-8e113", "alice"),
        ("CCPE-8e113", "bob"),
    ]
    assert all("segments" not in u for u in dialogues[0]["utterances"])


def test_an_export_asked_to_include_the_reference_has_it_beside_the_annotators():
    project = two_annotators_submit_nothing()

    dialogues = exported(project, reference="include")

    assert [(d["conversationId"], d["annotator"]) for d in dialogues] == [
        ("CCPE-8e113", "alice"),
        ("CCPE-8e113", "bob"),
        ("CCPE-8e113", REFERENCE_USERNAME),
    ]
    assert {key: value for key, value in dialogues[2].items() if key != "annotator"} == ORIGINAL[0]


@pytest.mark.parametrize("option", ["--reference-only", "--gold"])
def test_the_command_exports_the_reference_alone_or_one_annotator(tmp_path, option):
    alice = person("alice")
    ccpe_project(annotators=[alice])
    out = tmp_path / "reference.json"

    stdout = io.StringIO()
    call_command("export_annotations", "movies", "--format", "ccpe", option, "-o", str(out), stdout=stdout)

    assert stdout.getvalue() == f"exported 2 dialogues of movies to {out}\n"
    assert json.loads(out.read_text())[0] == ORIGINAL[0]
    hf = tmp_path / "reference.jsonl"
    call_command(
        "export_annotations", "movies", "--format", "ccpe-hf", option, "-o", str(hf), stdout=io.StringIO()
    )
    assert json.loads(hf.read_text().splitlines()[1]) == HF
    mine = tmp_path / "alice.json"
    stdout = io.StringIO()
    call_command(
        "export_annotations",
        "movies",
        "--format",
        "ccpe",
        "--annotator",
        "alice",
        "-o",
        str(mine),
        stdout=stdout,
    )
    assert mine.read_text() == "[]\n"
    assert stdout.getvalue() == f"exported 0 dialogues of movies to {mine}\n"


def test_the_command_includes_the_reference_only_when_asked(tmp_path):
    two_annotators_submit_nothing()
    plain, both = tmp_path / "plain.json", tmp_path / "both.json"

    call_command("export_annotations", "movies", "--format", "ccpe", "-o", str(plain), stdout=io.StringIO())
    call_command(
        "export_annotations",
        "movies",
        "--format",
        "ccpe",
        "--include-reference",
        "-o",
        str(both),
        stdout=io.StringIO(),
    )

    assert [d["annotator"] for d in json.loads(plain.read_text())] == ["alice", "bob"]
    assert [d["annotator"] for d in json.loads(both.read_text())] == ["alice", "bob", REFERENCE_USERNAME]


def test_a_reference_export_without_imported_spans_says_so():
    dataset = DatasetFactory(name="nothing")
    project_create(
        name="plain", dataset=dataset, config_yaml=CCPE_CONFIG.replace("    import_spans: ccpe\n", "")
    )

    with pytest.raises(CommandError) as caught:
        call_command(
            "export_annotations", "plain", "--format", "ccpe", "--reference-only", stdout=io.StringIO()
        )

    assert str(caught.value) == (
        "no reference answers in plain: no spans were imported with a corpus (a span scheme's import_spans)"
    )


def test_a_dialogue_imported_again_with_replace_gets_its_gold_spans_anew():
    project = ccpe_project(files=(ORIGINAL_FILE,))
    before = len(gold(project, "CCPE-8e113").payload["spans"])
    # The same dialogue with the first annotated utterance's segments removed.
    changed = copy.deepcopy(ORIGINAL)
    first = next(u for u in changed[0]["utterances"] if "segments" in u)
    removed = sum(len(segment["annotations"]) for segment in first["segments"])
    del first["segments"]

    report = tree_import(
        dataset=project.dataset,
        source=io.BytesIO(json.dumps(changed).encode()),
        format_name="ccpe",
        replace=True,
    )

    assert report.committed and report.trees_replaced == 1
    assert len(gold(project, "CCPE-8e113").payload["spans"]) == before - removed
