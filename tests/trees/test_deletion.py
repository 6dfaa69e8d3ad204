"""Deleting a whole dataset in batches (``trees.deletion.dataset_delete``).

- Everything of the dataset goes: its trees, their messages (replies before their parents or
  after: the self-reference is checked at the batch's end), the dataset row; other datasets
  keep theirs.
- Each batch of trees is a transaction of its own, and progress is reported after each one as
  (messages deleted, messages at the start), ending at (total, total).
- A dataset a project uses is refused before anything is deleted, with the reason.
- A run that stopped part-way is finished by running it again.
"""

from __future__ import annotations

from unittest import mock

import pytest
from django.db.models import QuerySet

from annotation.models import Project
from tests.factories import ChainTreeFactory, DatasetFactory, ProjectFactory
from trees.audit import AuditEntry
from trees.deletion import DatasetInUse, dataset_delete
from trees.models import ConversationTree, Dataset, Message

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    dataset = DatasetFactory(name="chats")
    for _ in range(5):
        ChainTreeFactory(dataset=dataset, chain=4, replies=2)  # 6 messages each
    return dataset


def test_it_deletes_the_dataset_its_trees_and_messages_and_nothing_else(dataset):
    kept = ChainTreeFactory(dataset=DatasetFactory(name="kept"), chain=3)

    assert dataset_delete(dataset=dataset, batch_trees=2) == 30

    assert not Dataset.objects.filter(name="chats").exists()
    assert list(ConversationTree.objects.all()) == [kept]
    assert Message.objects.count() == 3
    entry = AuditEntry.objects.get(action="dataset.delete")
    assert (entry.scope, entry.details) == ("chats", {"messages": 30})


def test_it_reports_progress_after_each_batch(dataset):
    seen = []

    dataset_delete(dataset=dataset, batch_trees=2, progress=lambda done, total: seen.append((done, total)))

    assert seen == [(0, 30), (12, 30), (24, 30), (30, 30)]


def test_each_batch_is_its_own_transaction(dataset):
    """A failure in the third batch keeps the first two deleted and the rest whole."""
    real_delete = QuerySet.delete
    calls = []

    def failing_third(queryset):
        calls.append(queryset.model)
        if calls.count(ConversationTree) == 3:
            raise RuntimeError("the database went away")
        return real_delete(queryset)

    with mock.patch("django.db.models.QuerySet.delete", failing_third), pytest.raises(RuntimeError):
        dataset_delete(dataset=dataset, batch_trees=2)

    assert ConversationTree.objects.filter(dataset=dataset).count() == 1
    assert Message.objects.filter(tree__dataset=dataset).count() == 6

    assert dataset_delete(dataset=dataset, batch_trees=2) == 6
    assert not Dataset.objects.filter(pk=dataset.pk).exists()


def test_a_dataset_a_project_uses_is_refused_whole(dataset):
    ProjectFactory(name="ratings", dataset=dataset)

    with pytest.raises(DatasetInUse, match="'chats' is used by 1 project:"):
        dataset_delete(dataset=dataset)

    assert Message.objects.filter(tree__dataset=dataset).count() == 30
    assert Project.objects.filter(name="ratings").exists()
