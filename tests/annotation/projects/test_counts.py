"""The project-wide counts progress shows are kept per process for a moment: this process's
own submissions count themselves in, its other changes have them counted afresh."""

from collections.abc import Iterator
from typing import Any

import pytest

from annotation.models import ProjectItem
from annotation.projects import counts
from annotation.projects.counts import project_counts_forget, project_item_counts
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.factories import DatasetFactory, PersonaFactory, PotatoTreeFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def keeping(settings: Any) -> Iterator[None]:
    settings.PROGRESS_COUNTS_SECONDS = 60
    counts._kept.clear()
    yield
    counts._kept.clear()


def project_of(trees: int) -> Any:
    dataset = DatasetFactory()
    for _ in range(trees):
        PotatoTreeFactory(dataset=dataset)
    return ProjectFactory(dataset=dataset)


def test_kept_counts_cost_no_statement_until_forgotten(keeping, django_assert_num_queries):
    project = project_of(3)
    assert project_item_counts(project, 1).items == 3
    ProjectItem.objects.filter(project=project).update(submitted_count=1)

    with django_assert_num_queries(0):
        assert project_item_counts(project, 1).complete == 0  # kept: another worker's change waits

    project_counts_forget(project.pk)
    with django_assert_num_queries(1):
        assert project_item_counts(project, 1).complete == 3


def test_counts_are_kept_per_overlap_and_not_at_all_when_turned_off(settings, django_assert_num_queries):
    settings.PROGRESS_COUNTS_SECONDS = 0
    project = project_of(2)
    project_item_counts(project, 1)
    with django_assert_num_queries(1):
        project_item_counts(project, 1)


def test_this_process_s_submissions_count_themselves_into_the_kept_counts(keeping, django_assert_num_queries):
    dataset = DatasetFactory()
    for _ in range(2):
        PotatoTreeFactory(dataset=dataset)
    project = ProjectFactory(
        dataset=dataset,
        config_yaml="annotation_schemes:\n  - {annotation_type: likert, name: quality, description: Quality, size: 5}\n"
        "assignment: {annotations_per_item: 2}\n",
    )
    alice, bob = PersonaFactory(username="alice"), PersonaFactory(username="bob")
    assert project_item_counts(project, 2).complete == 0

    def take_and_submit(user: Any) -> None:
        assignment = item_next(project=project, user=user)
        item_submit(
            project=project, tree=assignment.tree, user=user, answers={"quality": {"rating": 3}}, version=1
        )

    take_and_submit(alice)
    with django_assert_num_queries(0):
        assert project_item_counts(project, 2).complete == 0  # one of two submissions
    take_and_submit(bob)
    with django_assert_num_queries(0):
        assert project_item_counts(project, 2) == counts.ItemCounts(items=2, complete=1, handed=2)
