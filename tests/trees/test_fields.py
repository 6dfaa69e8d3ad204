"""The JSON column every model uses (``trees.fields.JSONField``): what is stored never breaks a
reader, and a form never stores what cannot be.

SQLite keeps JSON as text, escaping what is not ASCII, so a version before the checks at
the boundaries could store a lone UTF-16 surrogate there: a draft answer saved through the
API, say. From then on that annotator's next item, the answers list, the review page and
the project's export all failed (orjson, and any UTF-8 response, cannot write one).
Stored text is read back with each lone surrogate replaced by U+FFFD: the readers answer,
and the export is whole. PostgreSQL never stored one (it refuses the JSON), so the rows
are made on SQLite only.

The persona world of tests/api/world.py: Alice annotates alpha and holds its first item
(Olga answered it already); Rita reviews alpha; Maggie manages it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse

from annotation.admin.items import GoldItemForm
from annotation.models import Annotation, ProjectItem
from annotation.work.submissions import draft_save
from tests.api.conftest import token_client
from tests.api.world import ANNOTATOR, MANAGER, REVIEWER, World, build_world, session_client
from trees.models import Message

pytestmark = pytest.mark.django_db

BROKEN = "before \ud800 after"
MENDED = "before \ufffd after"


@pytest.fixture
def world(db: Any) -> World:
    return build_world()


@pytest.fixture
def stored(world: World) -> World:
    """Alice's draft and Olga's submitted note each hold a lone surrogate, and so does the
    metadata of a message of the item, as an older version left them on SQLite."""
    if connection.vendor != "sqlite":
        pytest.skip("only SQLite could store a lone surrogate (PostgreSQL refuses the JSON)")
    alice = world.users[ANNOTATOR]
    draft_save(
        project=world.alpha, tree=world.held.tree, user=alice, answers={"note": {"text": "x"}}, version=1
    )
    Annotation.objects.filter(user=alice, scheme="note").update(payload={"text": BROKEN})
    Annotation.objects.filter(pk=world.other_answer_id).update(payload={"text": BROKEN})
    Message.objects.filter(tree=world.held.tree, external_id="a1").update(metadata={"note": BROKEN})
    return world


def test_the_annotators_next_item_answers_with_the_text_mended(stored: World) -> None:
    response = token_client(stored, ANNOTATOR).post(reverse("api:item-next", kwargs={"name": "alpha"}))

    assert response.status_code == 200, response.content
    assert response.json()["annotations"]["note"] == {"text": MENDED}


def test_the_answers_list_answers_with_the_text_mended(stored: World) -> None:
    response = token_client(stored, MANAGER).get(reverse("api:annotations"), {"project": "alpha"})

    assert response.status_code == 200, response.content
    notes = [answer["payload"] for answer in response.json()["results"] if answer["scheme"] == "note"]
    assert {"text": MENDED} in notes


def test_the_review_page_shows_the_text_mended(stored: World) -> None:
    url = reverse("annotation:review-item", args=["alpha", stored.held.tree_id])

    response = session_client(stored.users[REVIEWER]).get(url)

    assert response.status_code == 200
    assert MENDED in response.content.decode()


def test_the_export_is_whole_with_the_text_mended(stored: World) -> None:
    response = token_client(stored, MANAGER).get(
        reverse("api:project-export", kwargs={"name": "alpha"}), {"format": "potato"}
    )

    assert response.status_code == 200
    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    olga = next(record for record in records if record["user"] == "olga")
    assert olga["annotations"]["note"] == {"text": MENDED}
    submitted = Annotation.objects.filter(project=stored.alpha, status=Annotation.Status.SUBMITTED)
    assert len(records) == submitted.values("tree", "user").distinct().count()


def test_the_trees_export_is_whole_with_the_metadata_mended(stored: World) -> None:
    response = token_client(stored, MANAGER).get(
        reverse("api:dataset-export", kwargs={"name": "alpha-trees"}), {"format": "potato"}
    )

    text = b"".join(response.streaming_content).decode()
    assert response.status_code == 200
    assert len(text.splitlines()) == 3
    assert f'"note":"{MENDED}"' in text


# -- forms --------------------------------------------------------------------------------------


def gold_form(world: World, answers: str) -> GoldItemForm:
    item = ProjectItem.objects.get(project=world.alpha, tree=world.held.tree)
    return GoldItemForm(
        data={"is_gold": "on", "gold_answers": answers, "gold_explanation": ""}, instance=item
    )


@pytest.mark.parametrize(
    ("answers", "error"),
    [
        (
            '{"note": {"text": "\\ud800"}}',
            "note.text: contains a lone UTF-16 surrogate (\\ud800), which is not text and cannot be stored",
        ),
        (
            '{"note": {"text": "a\\u0000"}}',
            "note.text: contains a NUL character (\\u0000), which cannot be stored",
        ),
        (
            '{"note": ' + "[" * 101 + "]" * 101 + "}",
            "note"
            + "[0]" * 99
            + ": nests arrays and objects more than 100 levels deep (BRANCHPOINT_MAX_JSON_DEPTH)",
        ),
    ],
    ids=["a lone surrogate", "a NUL", "too deep"],
)
def test_a_json_form_field_refuses_what_cannot_be_stored_with_its_place(
    world: World, answers: str, error: str
) -> None:
    form = gold_form(world, answers)

    assert not form.is_valid()
    assert form.errors["gold_answers"] == [error]


def test_a_json_form_field_takes_what_can_be_stored(world: World) -> None:
    form = gold_form(world, '{"note": {"text": "fine \\ud83d\\ude00"}}')

    assert form.is_valid(), form.errors
    assert form.cleaned_data["gold_answers"] == {"note": {"text": "fine \U0001f600"}}


def test_migrations_see_djangos_own_field() -> None:
    """The column is Django's: swapping the field needs no migration."""
    assert Annotation._meta.get_field("payload").deconstruct()[1] == "django.db.models.JSONField"
