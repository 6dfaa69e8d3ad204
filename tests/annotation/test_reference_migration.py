"""Migration 0010 marks a corpus's answers made before it as references.

Before it, the corpus's spans were answers by the account ``ccpe-gold`` with
``source=import``, like any annotator's imported work. Migrating marks exactly
those as ``source=reference``: an annotator's imported answers, and anything
else ``ccpe-gold`` might hold, stay as they were; migrating back undoes it.

The database is put in the state before the migration by migrating back to
``annotation`` 0009 (the migration changes no column, so the rows stay).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Annotation
from tests.factories import AnnotationFactory, ConversationTreeFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("annotation", "0009_username_keys")
MARKING = ("annotation", "0010_annotation_reference_source")


def migrate(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([target])


@pytest.fixture(autouse=True)
def _every_migration_after() -> Iterator[None]:
    """Going back to 0009 also undoes the migrations after 0010 (final answers, webhooks):
    each test leaves the database at every app's latest, as the tests after it expect."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def answers() -> dict[str, Annotation]:
    """The corpus's answer and an annotator's on one item, both imported, and a draft of ccpe-gold's."""
    gold, alice = UserFactory(username="ccpe-gold"), UserFactory(username="alice")
    project = ProjectFactory()
    tree, other = (
        ConversationTreeFactory(dataset=project.dataset),
        ConversationTreeFactory(dataset=project.dataset),
    )

    def answer(user, tree, source):
        return AnnotationFactory(project=project, tree=tree, user=user, scheme="preferences", source=source)

    return {
        "corpus": answer(gold, tree, "import"),
        "alice": answer(alice, tree, "import"),
        "typed by hand": answer(gold, other, "human"),
    }


def sources(answers: dict[str, Annotation]) -> dict[str, str]:
    # Only the column the migration changes: columns added since are not there at 0010.
    return {
        name: Annotation.objects.filter(pk=answer.pk).values_list("source", flat=True).get()
        for name, answer in answers.items()
    }


def test_migrating_marks_the_corpus_answers_as_references_and_nothing_else(answers):
    migrate(BEFORE)

    migrate(MARKING)

    assert sources(answers) == {"corpus": "reference", "alice": "import", "typed by hand": "human"}
    assert list(Annotation.objects.references().values_list("pk", flat=True)) == [answers["corpus"].pk]


def test_migrating_back_makes_them_imports_again(answers):
    migrate(BEFORE)
    migrate(MARKING)

    migrate(BEFORE)

    assert sources(answers) == {"corpus": "import", "alice": "import", "typed by hand": "human"}
    migrate(MARKING)
