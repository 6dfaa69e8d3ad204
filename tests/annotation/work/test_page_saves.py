"""Drafts from one annotate page arriving out of order (issue 19, "work lost on leaving").

A page left with a save under way sends its last changes at once, based on the same version
as that save; both outlive the page and may reach the server in either order, or together.
Each draft names its page and its number there (``PageSave``). The rules:

- the later draft is kept, whichever arrives first;
- an earlier draft arriving after a later one is refused as stale, and changes nothing;
- a write of anything else since (another tab, a submit, a skip) still makes an old version
  stale: only the page's own earlier draft is passed over;
- two saves at once never fail with an error of the database: on PostgreSQL, with real
  threads, the one that waited reads what the other wrote, and applies or is refused cleanly.
"""

import threading
from functools import partial

import pytest
from django.db import connection

from annotation.models import Assignment, Project
from annotation.work.assignment import item_next
from annotation.work.submissions import (
    PageSave,
    StaleVersion,
    draft_save,
    item_answers,
    item_submit,
)
from tests.factories import ConversationTreeFactory, DatasetFactory, PersonaFactory, ProjectFactory

SURVEY = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - {annotation_type: text, name: notes, description: Notes}
assignment: {annotations_per_item: 1, lease_minutes: 60}
"""
PAGE = "a1b2c3d4e5f6a1b2"


def held(trees: int = 1) -> tuple[Project, object]:
    dataset = DatasetFactory()
    ConversationTreeFactory.create_batch(trees, dataset=dataset)
    project = ProjectFactory(dataset=dataset, config_yaml=SURVEY)
    alice = PersonaFactory(username="alice")
    return project, alice


def draft(assignment: Assignment, answers: dict, *, version: int, page_save: PageSave | None) -> Assignment:
    return draft_save(
        project=assignment.project,
        tree=assignment.tree_id,
        user=assignment.user,
        answers=answers,
        version=version,
        page_save=page_save,
    )


def payloads(assignment: Assignment) -> dict:
    return item_answers(project=assignment.project, tree=assignment.tree_id, user=assignment.user).payloads


EARLIER = {"quality": {"rating": 2}}
LATER = {"quality": {"rating": 4}, "notes": {"text": "rated, then left at once"}}


@pytest.mark.django_db
def test_the_later_draft_is_kept_when_it_arrives_second():
    project, alice = held()
    assignment = item_next(project=project, user=alice)

    draft(assignment, EARLIER, version=1, page_save=PageSave(PAGE, 1))
    saved = draft(assignment, LATER, version=1, page_save=PageSave(PAGE, 2))

    assert saved.version == 3
    assert payloads(assignment) == LATER


@pytest.mark.django_db
def test_the_later_draft_is_kept_when_it_arrives_first_and_the_earlier_is_refused():
    project, alice = held()
    assignment = item_next(project=project, user=alice)

    draft(assignment, LATER, version=1, page_save=PageSave(PAGE, 2))
    with pytest.raises(StaleVersion) as error:
        draft(assignment, EARLIER, version=1, page_save=PageSave(PAGE, 1))

    assert error.value.current == 2
    assert payloads(assignment) == LATER


@pytest.mark.django_db
def test_another_tabs_write_since_still_makes_the_version_stale():
    project, alice = held()
    assignment = item_next(project=project, user=alice)
    draft(assignment, EARLIER, version=1, page_save=PageSave(PAGE, 1))

    draft(assignment, {"quality": {"rating": 5}}, version=2, page_save=PageSave("another-tab-0001", 1))
    with pytest.raises(StaleVersion):
        draft(assignment, LATER, version=1, page_save=PageSave(PAGE, 2))
    assert payloads(assignment) == {"quality": {"rating": 5}}


@pytest.mark.django_db
def test_a_write_without_a_page_since_still_makes_the_version_stale():
    project, alice = held()
    assignment = item_next(project=project, user=alice)
    draft(assignment, EARLIER, version=1, page_save=PageSave(PAGE, 1))
    item_submit(project=project, tree=assignment.tree_id, user=alice, answers={}, version=2)

    with pytest.raises(StaleVersion):
        draft(assignment, LATER, version=1, page_save=PageSave(PAGE, 2))
    assert payloads(assignment) == EARLIER


@pytest.mark.django_db
def test_a_draft_without_a_page_from_an_old_version_is_refused_as_before():
    project, alice = held()
    assignment = item_next(project=project, user=alice)
    draft(assignment, EARLIER, version=1, page_save=PageSave(PAGE, 1))

    with pytest.raises(StaleVersion):
        draft(assignment, LATER, version=1, page_save=None)
    with pytest.raises(StaleVersion):  # nor may a page name a version still to come
        draft(assignment, LATER, version=3, page_save=PageSave(PAGE, 2))


ROUNDS = 12


def at_once(*saves) -> list[object]:
    """Runs each save in a thread of its own, released together; what each returned or raised."""
    start = threading.Barrier(len(saves))
    outcomes: list[object] = [None] * len(saves)

    def run(index: int) -> None:
        try:
            start.wait()
            outcomes[index] = saves[index]()
        except BaseException as error:  # the spec reports whatever it was
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(saves))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    return outcomes


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_pages_two_first_drafts_at_once_keep_the_later_and_never_fail():
    project, alice = held(trees=ROUNDS)
    for round_ in range(ROUNDS):
        assignment = item_next(project=project, user=alice)
        page = f"page-{round_:04d}-robust"
        outcomes = at_once(
            partial(draft, assignment, EARLIER, version=1, page_save=PageSave(page, 1)),
            partial(draft, assignment, LATER, version=1, page_save=PageSave(page, 2)),
        )

        earlier, later = outcomes
        assert isinstance(later, Assignment), later
        assert isinstance(earlier, Assignment | StaleVersion), earlier
        assert payloads(assignment) == LATER
        item_submit(project=project, tree=assignment.tree_id, user=alice, answers={}, version=later.version)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_first_drafts_at_once_from_two_tabs_keep_one_and_refuse_the_other_cleanly():
    project, alice = held(trees=ROUNDS)
    for round_ in range(ROUNDS):
        assignment = item_next(project=project, user=alice)
        outcomes = at_once(
            partial(draft, assignment, EARLIER, version=1, page_save=PageSave(f"tab-one-{round_:04d}", 1)),
            partial(draft, assignment, LATER, version=1, page_save=None),
        )

        kept = [outcome for outcome in outcomes if isinstance(outcome, Assignment)]
        stale = [outcome for outcome in outcomes if isinstance(outcome, StaleVersion)]
        assert (len(kept), len(stale)) == (1, 1), outcomes
        assert payloads(assignment) == (EARLIER if kept[0] is outcomes[0] else LATER)
        item_submit(project=project, tree=assignment.tree_id, user=alice, answers={}, version=2)
