"""My work: an annotator's own items in a project, and the annotate page's Previous / Next.

The rules:

- My work lists every item the annotator was handed in the project, newest
  activity first (the annotator's lease, saves, submission or skip, and a
  reviewer sending the item back, which hands it to them again), and nobody else's: its external id, where it stands (draft,
  submitted, sent back with the reviewer's comment, accepted, skipped, lease
  ran out), its kind (a gold check only once submitted, training) with the
  score, and when it last changed. Each row opens the item's annotate page.
- It filters by status with a GET form (a filter that does not read is
  dropped), 50 items a page, in a constant number of queries.
- On the annotate page, Previous leads to the item touched before this one
  in My work and Next to the one after; past the newest, Next asks for a new
  item as Start annotating does, unless this newest item is still held.
- My work is linked from the project page, the projects list, the annotate
  page and the "nothing left" page.

Alice annotates, Bob annotates beside her, Rita reviews.
"""

from __future__ import annotations

from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Project
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.my_work import MY_WORK_PAGE_SIZE, my_work, my_work_neighbours, work_state
from annotation.work.submissions import draft_save, item_skip, item_submit
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.factories import AssignmentFactory, ConversationTreeFactory

pytestmark = pytest.mark.django_db

# The session and the user, the project with the user's roles, then the counts by status
# and the page's items with their rejections' comments.
MY_WORK_PAGE_QUERIES = 5


def items(count: int) -> list[dict[str, Any]]:
    return [{**SEED_ITEM, "id": f"conv_{n:03d}"} for n in range(count)]


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def my_work_url(project: Project, **query: Any) -> str:
    url = reverse("annotation:my-work", kwargs={"name": project.name})
    return url + ("?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else "")


def item_url(project: Project, tree_id: int) -> str:
    return reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})


def submit_next(project: Project, user: Any) -> Assignment:
    held = item_next(project=project, user=user)
    item_submit(project=project, tree=held.tree, user=user, answers={}, version=held.version)
    held.refresh_from_db()
    return held


class Links(HTMLParser):
    """The attributes of a page's links, buttons and forms, by their data- marker."""

    def __init__(self, html: str):
        super().__init__()
        self.marked: dict[str, dict[str, str | None]] = {}
        self.forms: list[dict[str, str | None]] = []
        self._form: dict[str, str | None] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "form":
            self._form = attributes
        for name in attributes:
            if name.startswith("data-") and tag in ("a", "button"):
                self.marked[name] = attributes | {"tag": tag, "form_action": (self._form or {}).get("action")}

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def bob() -> Any:
    return person("bob")


@pytest.fixture
def rita() -> Any:
    return person("rita")


@pytest.fixture
def project(alice: Any, bob: Any, rita: Any) -> Project:
    return project_over("support", RESPONSE_QUALITY, items(6), [alice, bob], reviewers=[rita])


@pytest.fixture
def worked(project: Project, alice: Any, bob: Any, rita: Any) -> dict[str, Assignment]:
    """Alice's items, in the order she was handed them: two submitted (Rita accepts the first
    and sends the second back), one skipped, one held as a draft. Bob submits one too."""
    accepted = submit_next(project, alice)
    rejected = submit_next(project, alice)
    skipped = item_next(project=project, user=alice)
    item_skip(project=project, tree=skipped.tree, user=alice, version=skipped.version)
    draft = item_next(project=project, user=alice)
    submit_next(project, bob)
    review_decide(reviewer=rita, assignment=accepted, decision="accepted", version=accepted.version)
    review_decide(
        reviewer=rita,
        assignment=rejected,
        decision="rejected",
        comment="Rate the second reply too.",
        version=rejected.version,
    )
    return {"accepted": accepted, "rejected": rejected, "skipped": skipped, "draft": draft}


# Where an item stands


@pytest.mark.parametrize(
    ("status", "review_status", "state"),
    [
        ("leased", "", "draft"),
        ("leased", "rejected", "sent_back"),
        ("submitted", "", "submitted"),
        ("submitted", "accepted", "accepted"),
        ("skipped", "", "skipped"),
        ("skipped", "rejected", "skipped"),
        ("expired", "", "expired"),
    ],
)
def test_each_item_has_one_state_from_its_status_and_review(
    status: str, review_status: str, state: str
) -> None:
    assert work_state(status, review_status) == state


# The list


def test_my_work_lists_the_annotators_items_newest_activity_first_with_where_each_stands(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    work = my_work(project=project, user=alice)

    # Sending work back hands it to Alice again, after all her own changes; accepting it does not.
    assert [(row.tree_id, row.state) for row in work.rows] == [
        (worked["rejected"].tree_id, "sent_back"),
        (worked["draft"].tree_id, "draft"),
        (worked["skipped"].tree_id, "skipped"),
        (worked["accepted"].tree_id, "accepted"),
    ]
    sent_back = work.rows[0]
    assert (sent_back.reviewer, sent_back.comment, sent_back.state_label) == (
        "rita",
        "Rate the second reply too.",
        "sent back",
    )
    assert all(row.comment == "" for row in work.rows[1:])
    assert work.counts == {
        "all": 4,
        "draft": 1,
        "sent_back": 1,
        "submitted": 0,
        "accepted": 1,
        "skipped": 1,
        "expired": 0,
    }


def test_work_sent_back_and_submitted_again_is_submitted_without_the_old_comment(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    rejected = Assignment.objects.get(pk=worked["rejected"].pk)
    item_submit(project=project, tree=rejected.tree_id, user=alice, answers={}, version=rejected.version)

    [row] = my_work(project=project, user=alice, status="submitted").rows

    assert (row.tree_id, row.state, row.comment, row.reviewer) == (rejected.tree_id, "submitted", "", "")


def test_a_gold_check_shows_as_one_only_once_submitted_and_training_with_its_score(
    project: Project, alice: Any
) -> None:
    trees = list(project.dataset.trees.order_by("pk"))
    AssignmentFactory(project=project, user=alice, tree=trees[0], kind="gold", status="leased")
    AssignmentFactory(project=project, user=alice, tree=trees[1], kind="gold", gold_score=0.5)
    AssignmentFactory(project=project, user=alice, tree=trees[2], kind="training", gold_score=0.75)

    rows = {row.tree_id: row for row in my_work(project=project, user=alice).rows}

    assert (rows[trees[0].pk].kind, rows[trees[0].pk].score) == ("work", None)
    assert (rows[trees[1].pk].kind, rows[trees[1].pk].score) == ("gold", 0.5)
    assert (rows[trees[2].pk].kind, rows[trees[2].pk].score) == ("training", 0.75)


def test_an_unknown_status_is_refused_by_the_selector(project: Project, alice: Any) -> None:
    with pytest.raises(ValueError, match='unknown status "lost"'):
        my_work(project=project, user=alice, status="lost")


# The page


def test_the_page_shows_each_item_linked_to_its_annotate_page_and_the_comment_of_work_sent_back(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    response = client_for(alice).get(my_work_url(project))

    assert response.status_code == 200
    html = response.content.decode()
    for assignment in worked.values():
        assert f'href="{item_url(project, assignment.tree_id)}"' in html
    sent_back = worked["rejected"].tree.external_id
    row = html.split(f'<tr data-item="{sent_back}" data-state="sent_back" class="is-sent-back">', 1)[1]
    assert "rita: “Rate the second reply too.”" in row.split("</tr>", 1)[0]
    # Bob's work is his own.
    assert html.count("<tr data-item=") == 4


def test_the_page_filters_by_status_and_drops_a_filter_that_does_not_read(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    client = client_for(alice)

    sent_back = client.get(my_work_url(project, status="sent_back")).context["work"]
    garbled = client.get(my_work_url(project, status="lost", page="x")).context["work"]
    empty = client.get(my_work_url(project, status="expired"))

    assert [row.tree_id for row in sent_back.rows] == [worked["rejected"].tree_id]
    assert (garbled.status, len(garbled.rows)) == ("all", 4)
    assert "None of your items here is lease ran out." in empty.content.decode()


def test_the_page_shows_fifty_items_a_page(alice: Any) -> None:
    project = project_over("many", RESPONSE_QUALITY, items(1), [alice])
    start = timezone.now()
    for index in range(MY_WORK_PAGE_SIZE + 1):
        tree = ConversationTreeFactory(dataset=project.dataset, external_id=f"item-{index:03d}")
        AssignmentFactory(project=project, user=alice, tree=tree, updated_at=start + timedelta(seconds=index))
    client = client_for(alice)

    first = client.get(my_work_url(project)).context["work"]
    second = client.get(my_work_url(project, page=2)).context["work"]

    assert len(first.rows) == MY_WORK_PAGE_SIZE
    assert first.rows[0].external_id == f"item-{MY_WORK_PAGE_SIZE:03d}"
    assert [row.external_id for row in second.rows] == ["item-000"]
    assert client.get(my_work_url(project, page=9)).context["work"].page.number == 2  # past the end: the last
    assert 'rel="next"' in client.get(my_work_url(project)).content.decode()


def test_the_page_costs_the_same_queries_whatever_the_number_of_items(
    alice: Any, rita: Any, django_assert_num_queries: Any
) -> None:
    project = project_over("sized", RESPONSE_QUALITY, items(8), [alice], reviewers=[rita])
    client = client_for(alice)
    rejected = submit_next(project, alice)
    review_decide(
        reviewer=rita, assignment=rejected, decision="rejected", comment="No.", version=rejected.version
    )
    with django_assert_num_queries(MY_WORK_PAGE_QUERIES):
        client.get(my_work_url(project))

    # Each item sent back and submitted again (the first one too), the last one sent back twice.
    for _ in range(6):
        done = submit_next(project, alice)
        review_decide(
            reviewer=rita, assignment=done, decision="rejected", comment="Again.", version=done.version
        )
        item_submit(project=project, tree=done.tree_id, user=alice, answers={}, version=done.version)
        done.refresh_from_db()
    review_decide(reviewer=rita, assignment=done, decision="rejected", comment="Last.", version=done.version)
    with django_assert_num_queries(MY_WORK_PAGE_QUERIES):
        response = client.get(my_work_url(project))
    rows = response.context["work"].rows
    assert len(rows) == 6
    assert (rows[0].state, rows[0].comment) == ("sent_back", "Last.")


def test_a_collection_projects_my_work_is_its_task_picker(alice: Any) -> None:
    from tests.annotation.collection.collect import collect_project

    project = collect_project(members=[alice])

    response = client_for(alice).get(my_work_url(project))

    assert response.headers["Location"] == reverse("collection:picker", kwargs={"name": project.name})


def test_my_work_is_linked_from_the_projects_list_the_project_page_and_nothing_left(
    project: Project, alice: Any
) -> None:
    client = client_for(alice)
    for _ in range(6):
        submit_next(project, alice)
    link = f'href="{my_work_url(project)}"'

    assert link in client.get(reverse("annotation:projects")).content.decode()
    assert link in client.get(reverse("annotation:project", args=[project.name])).content.decode()
    nothing_left = client.post(reverse("annotation:project", args=[project.name]))
    assert nothing_left.templates[0].name == "annotation/nothing_left.html"
    assert link in nothing_left.content.decode()


# Previous and Next


def test_previous_and_next_are_the_items_either_side_in_my_work(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    order = [row.tree_id for row in my_work(project=project, user=alice).rows]  # newest first
    for index, tree_id in enumerate(order):
        assignment = Assignment.objects.get(project=project, user=alice, tree_id=tree_id)
        neighbours = my_work_neighbours(assignment=assignment)
        assert neighbours.previous == (order[index + 1] if index + 1 < len(order) else None)
        assert neighbours.next == (order[index - 1] if index else None)


def test_items_changed_at_the_same_moment_keep_an_order_with_none_skipped(
    project: Project, alice: Any
) -> None:
    moment = timezone.now()
    trees = list(project.dataset.trees.order_by("pk"))[:3]
    made = [AssignmentFactory(project=project, user=alice, tree=tree, updated_at=moment) for tree in trees]

    assert my_work_neighbours(assignment=made[1]).previous == trees[0].pk
    assert my_work_neighbours(assignment=made[1]).next == trees[2].pk
    assert [row.tree_id for row in my_work(project=project, user=alice).rows] == [
        t.pk for t in reversed(trees)
    ]


def test_the_annotate_page_links_previous_my_work_and_next(
    project: Project, alice: Any, worked: dict[str, Assignment]
) -> None:
    client = client_for(alice)
    # Newest first: rejected, draft, skipped, accepted.
    page = Links(client.get(item_url(project, worked["draft"].tree_id)).content.decode())

    assert page.marked["data-walk-previous"]["href"] == item_url(project, worked["skipped"].tree_id)
    assert page.marked["data-walk-previous"]["aria-keyshortcuts"] == "["
    assert page.marked["data-walk-next"]["href"] == item_url(project, worked["rejected"].tree_id)
    assert page.marked["data-walk-next"]["aria-keyshortcuts"] == "]"
    assert page.marked["data-my-work-link"]["href"] == my_work_url(project)

    oldest = Links(client.get(item_url(project, worked["accepted"].tree_id)).content.decode())
    assert oldest.marked["data-walk-previous"]["tag"] == "button"
    assert "disabled" in oldest.marked["data-walk-previous"]


def test_past_the_newest_item_next_asks_for_a_new_one_unless_the_newest_is_still_held(
    project: Project, alice: Any
) -> None:
    client = client_for(alice)
    done = submit_next(project, alice)

    submitted = Links(client.get(item_url(project, done.tree_id)).content.decode()).marked["data-walk-next"]
    assert (submitted["tag"], submitted["form_action"]) == (
        "button",
        reverse("annotation:project", args=[project.name]),
    )

    held = item_next(project=project, user=alice)
    draft_save(project=project, tree=held.tree_id, user=alice, answers={}, version=held.version)
    newest = Links(client.get(item_url(project, held.tree_id)).content.decode()).marked["data-walk-next"]
    assert "disabled" in newest
    assert newest["data-walk-end"] == "This is your newest item: submit or skip it to get another."
