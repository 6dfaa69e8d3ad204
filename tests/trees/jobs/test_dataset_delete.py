"""Deleting a large dataset as a job (``trees.tasks.dataset_delete_job``).

- The admin's "Delete ... in a job" action queues one job per dataset, counted in messages;
  a dataset a project uses is refused there, with the reason, and no job is queued.
- The job deletes a batch of trees per transaction, reporting messages deleted, and ends done
  with the count; a run that died part-way is finished by the retry, and a retry that finds
  the dataset already gone is done too.
- A dataset that came into use after the job was queued fails the job with the reason,
  nothing deleted.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from tests.factories import ChainTreeFactory, DatasetFactory, ProjectFactory, StaffFactory
from tests.trees.test_admin import saved
from trees.deletion import dataset_delete
from trees.jobs.models import Job
from trees.jobs.services import job_enqueue, job_execute
from trees.models import ConversationTree, Dataset, Message
from trees.tasks import DATASET_DELETE, dataset_delete_job, dataset_delete_work

pytestmark = pytest.mark.django_db

DATASETS = reverse("admin:trees_dataset_changelist")
DUMMY = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def chats() -> Dataset:
    dataset = DatasetFactory(name="chats")
    for _ in range(5):
        ChainTreeFactory(dataset=dataset, chain=4, replies=2)  # 6 messages each
    return dataset


@pytest.fixture
def queued(settings: Any) -> Any:
    settings.TASKS = DUMMY

    def queue(name: str) -> Job:
        return job_enqueue(kind=DATASET_DELETE, task=dataset_delete_job, dataset_name=name, unit="messages")

    return queue


def test_the_admin_action_queues_a_job_per_dataset_and_refuses_one_in_use(
    client: Client, settings: Any, chats: Dataset
) -> None:
    settings.TASKS = DUMMY
    used = DatasetFactory(name="used")
    ProjectFactory(name="labels", dataset=used)
    client.force_login(saved(StaffFactory(username="root", is_superuser=True)))

    response = client.post(
        DATASETS, {"action": "delete_in_a_job", "_selected_action": [chats.pk, used.pk]}, follow=True
    )

    job = Job.objects.get()
    assert (job.kind, job.dataset_name, job.state, job.total, job.unit) == (
        "dataset.delete",
        "chats",
        "queued",
        30,
        "messages",
    )
    said = [str(message) for message in get_messages(response.wsgi_request)]
    assert f"chats: job {job.pk} deletes it (its progress: {reverse('admin:jobs_job_changelist')})" in said
    assert "used: used by 1 project; delete those first" in said
    assert Dataset.objects.filter(name__in=["chats", "used"]).count() == 2


def test_the_job_deletes_the_dataset_and_reports_the_messages(queued: Any, chats: Dataset) -> None:
    kept = ChainTreeFactory(dataset=DatasetFactory(name="kept"), chain=3)
    job = queued("chats")

    job_execute(job.pk, dataset_delete_work, atomic=False)

    job.refresh_from_db()
    assert (job.state, job.done, job.total) == ("done", 30, 30)
    assert job.result == {"dataset": "chats", "messages": 30}
    assert job.message == "deleted dataset 'chats' and its 30 messages"
    assert not Dataset.objects.filter(name="chats").exists()
    assert list(ConversationTree.objects.all()) == [kept]
    assert Message.objects.count() == 3


def test_a_retry_finishes_what_a_dead_run_left(queued: Any, chats: Dataset) -> None:
    class Died(Exception):
        pass

    def dies_after_the_first_batch(done: int, total: int) -> None:
        if done:
            raise Died

    with pytest.raises(Died):
        dataset_delete(dataset=chats, progress=dies_after_the_first_batch, batch_trees=2)
    assert ConversationTree.objects.filter(dataset=chats).count() == 3
    job = queued("chats")

    job_execute(job.pk, dataset_delete_work, atomic=False)

    job.refresh_from_db()
    assert (job.state, job.result) == ("done", {"dataset": "chats", "messages": 18})
    assert not Dataset.objects.filter(name="chats").exists()


def test_a_retry_that_finds_the_dataset_gone_is_done(queued: Any) -> None:
    job = queued("gone")

    job_execute(job.pk, dataset_delete_work, atomic=False)

    job.refresh_from_db()
    assert (job.state, job.message) == ("done", "dataset 'gone' is gone")


def test_a_dataset_in_use_fails_the_job_with_the_reason_and_keeps_everything(
    queued: Any, chats: Dataset
) -> None:
    job = queued("chats")
    ProjectFactory(name="labels", dataset=chats)

    job_execute(job.pk, dataset_delete_work, atomic=False)

    job.refresh_from_db()
    assert job.state == "failed"
    assert job.message == "dataset 'chats' is used by 1 project: delete those first"
    assert Message.objects.filter(tree__dataset=chats).count() == 30
