"""The project-wide counts progress shows are kept per process for a moment, and forgotten at
once when this process changes them."""

from collections.abc import Iterator
from typing import Any

import pytest

from annotation import counts
from annotation.counts import project_counts_forget, project_item_counts
from annotation.models import ProjectItem
from tests.factories import DatasetFactory, PotatoTreeFactory, ProjectFactory

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
