"""The annotator's pages: signing in, their projects with progress, a
project's start page, and the annotate page as the server draws it (the
browser tests drive its script).

Alice and Bob annotate; Maggie manages without annotating; Charlie is
signed in but in no project.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Membership, Project
from annotation.projects.services import membership_add
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_skip, item_submit
from tests.annotation.annotator_items import (
    RESPONSE_QUALITY,
    SEED_ITEM,
    bushy_item,
    person,
    project_over,
)
from tests.factories import UserFactory
from tests.queries import closing_writes, taken_tree_read

pytestmark = pytest.mark.django_db

# The session and the user, then: the projects with the user's submitted
# counts, their items counted by submissions, the user's roles in them.
PROJECT_LIST_QUERIES = 6
# The session and the user, the project with the user's roles, the assignment with its
# tree, the answers, the progress (the user's assignments, the project's items), the messages,
# the items either side in My work (Previous and Next).
ANNOTATE_PAGE_QUERIES = 9
# The session and the user, the project with the user's roles; the hand-out in its transaction
# (its start and end, the expired leases with the person's lock on PostgreSQL, the taking of an
# item and its tree: one statement on PostgreSQL, two on SQLite; the new lease and its log entry:
# one statement on PostgreSQL, two on SQLite); then the page as above but for the assignment and
# the answers, which the new lease knows.
HAND_OUT_PAGE_QUERIES = 11 + taken_tree_read() + closing_writes(2)
HELPFUL = "annotation_schemes:\n  - {annotation_type: likert, name: helpful, description: Helpful, size: 5}\n"


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def bob() -> Any:
    return person("bob")


@pytest.fixture
def maggie() -> Any:
    return person("maggie")


@pytest.fixture
def charlie() -> Any:
    return person("charlie")


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def project(alice: Any, bob: Any, maggie: Any) -> Project:
    return project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice, bob], managers=[maggie])


def item_page(project: Project, tree_id: int) -> str:
    return reverse("annotation:item", kwargs={"name": project.name, "tree_id": tree_id})


class Scripts(HTMLParser):
    """The attributes of every script element of a page."""

    def __init__(self, html: str):
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))


def page_data(response: Any) -> dict[str, Any]:
    """The json_script block the page script starts from."""
    html = response.content.decode()
    start = html.index('<script id="annotate-data" type="application/json">') + len(
        '<script id="annotate-data" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


# Signing in and out


def test_the_root_sends_visitors_to_sign_in_and_annotators_to_their_projects(alice: Any) -> None:
    assert Client().get("/").headers["Location"] == reverse("login")
    assert client_for(alice).get("/").headers["Location"] == reverse("annotation:projects")


def test_signing_in_leads_to_the_projects_and_signing_out_back_to_the_login(db: Any) -> None:
    UserFactory(username="dora").save()  # with the factory's password, hashed for real
    client = Client()

    page = client.get(reverse("login"))
    assert page.status_code == 200
    signed_in = client.post(
        reverse("login"), {"username": "dora", "password": "correct-horse-battery"}, follow=True
    )
    assert signed_in.redirect_chain[-1][0] == reverse("annotation:projects")
    assert signed_in.context["user"].username == "dora"

    signed_out = client.post(reverse("logout"), follow=True)
    assert signed_out.redirect_chain[-1][0] == reverse("login")
    assert not signed_out.context["user"].is_authenticated


def test_pages_ask_anonymous_visitors_to_sign_in(project: Project) -> None:
    for url in (
        reverse("annotation:projects"),
        reverse("annotation:project", args=["support"]),
        item_page(project, 1),
    ):
        response = Client().get(url)
        assert response.status_code == 302
        assert response.headers["Location"].startswith(reverse("login") + "?next=")


# The project list


def test_the_project_list_shows_each_project_with_the_annotators_and_the_overall_progress(
    alice: Any, bob: Any
) -> None:
    project = project_over(
        "support", RESPONSE_QUALITY, [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}], [alice, bob]
    )
    project_over("elsewhere", RESPONSE_QUALITY, [SEED_ITEM], [bob])
    held = item_next(project=project, user=alice)
    item_submit(project=project, tree=held.tree, user=alice, answers={}, version=held.version)

    response = client_for(alice).get(reverse("annotation:projects"))

    [row] = response.context["rows"]
    assert row.project.name == "support"
    assert row.progress.as_dict() == {"submitted": 1, "quota": 2, "complete": 1, "items": 2}
    assert row.can_annotate
    html = response.content.decode()
    assert "1 of 2 submitted" in html
    assert "1 of 2 items complete" in html
    assert "elsewhere" not in html


def test_the_quota_is_the_per_user_limit_when_there_is_one(alice: Any) -> None:
    config = RESPONSE_QUALITY + "\nassignment: {max_items_per_user: 2}\n"
    project_over("limited", config, [{**SEED_ITEM, "id": f"conv_{n}"} for n in range(5)], [alice])

    [row] = client_for(alice).get(reverse("annotation:projects")).context["rows"]

    assert (row.progress.submitted, row.progress.quota, row.progress.items) == (0, 2, 5)


def test_the_project_list_costs_the_same_queries_for_any_number_of_projects(
    alice: Any, django_assert_num_queries: Any
) -> None:
    client = client_for(alice)
    project_over("first", RESPONSE_QUALITY, [SEED_ITEM], [alice])
    with django_assert_num_queries(PROJECT_LIST_QUERIES):
        client.get(reverse("annotation:projects"))

    for index in range(4):
        project_over(f"more-{index}", RESPONSE_QUALITY, [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}], [alice])
    with django_assert_num_queries(PROJECT_LIST_QUERIES):
        response = client.get(reverse("annotation:projects"))
    assert len(response.context["rows"]) == 5


# The project page: start, continue, nothing left


def test_starting_leases_an_item_and_answers_with_its_page(alice: Any, project: Project) -> None:
    """No redirect round trip: the answer is the item's annotate page, which names its own
    address for the script to show (a reload then asks for the item, not for another lease)."""
    client = client_for(alice)
    assert "Start annotating" in client.get(reverse("annotation:project", args=["support"])).content.decode()

    response = client.post(reverse("annotation:project", args=["support"]))

    tree = project.dataset.trees.get()
    assert response.status_code == 200
    assert response.templates[0].name == "annotation/annotate.html"
    data = page_data(response)
    assert data["urls"]["page"] == item_page(project, tree.pk)
    assert data["item"]["tree"]["id"] == tree.pk
    assert data["item"]["assignment"]["status"] == "leased"
    # The same page as a GET of its address gives.
    assert page_data(client.get(item_page(project, tree.pk))) == data
    assert (
        "Continue where you left off"
        in client.get(reverse("annotation:project", args=["support"])).content.decode()
    )


def test_continuing_gives_back_the_held_item_with_its_draft(alice: Any) -> None:
    project_over("rated", HELPFUL, [SEED_ITEM], [alice])
    client = client_for(alice)
    held = page_data(client.post(reverse("annotation:project", args=["rated"])))
    saved = client.put(
        held["urls"]["draft"],
        {"annotations": {"helpful": {"rating": 4}}, "version": held["item"]["assignment"]["version"]},
        content_type="application/json",
    )
    assert saved.status_code == 200, saved.content

    again = page_data(client.post(reverse("annotation:project", args=["rated"])))

    assert again["urls"]["page"] == held["urls"]["page"]
    assert again["item"]["annotations"] == {"helpful": {"rating": 4}}


@pytest.mark.parametrize("size", [4, 1000])
def test_the_hand_out_answers_with_the_page_in_the_same_queries_whatever_the_trees_size(
    alice: Any, size: int, django_assert_num_queries: Any
) -> None:
    project = project_over(f"sized-{size}", RESPONSE_QUALITY, [bushy_item("big", size)], [alice])
    client = client_for(alice)

    with django_assert_num_queries(HAND_OUT_PAGE_QUERIES):
        response = client.post(reverse("annotation:project", args=[project.name]))

    assert len(page_data(response)["item"]["tree"]["messages"]) == size


def test_when_nothing_is_left_the_page_says_so(alice: Any, project: Project) -> None:
    held = item_next(project=project, user=alice)
    item_submit(project=project, tree=held.tree, user=alice, answers={}, version=held.version)

    response = client_for(alice).post(reverse("annotation:project", args=["support"]))

    assert response.status_code == 200
    assert response.templates[0].name == "annotation/nothing_left.html"
    assert response.context["reason"] == "done"
    assert "No items are waiting for you in this project right now." in response.content.decode()


def test_a_manager_who_does_not_annotate_is_told_so_and_cannot_start(maggie: Any, project: Project) -> None:
    client = client_for(maggie)

    page = client.get(reverse("annotation:project", args=["support"]))
    refused = client.post(reverse("annotation:project", args=["support"]))

    assert "You are not an annotator in this project" in page.content.decode()
    assert refused.status_code == 403


def test_projects_outside_someones_memberships_do_not_exist_for_them(charlie: Any, project: Project) -> None:
    client = client_for(charlie)

    assert client.get(reverse("annotation:project", args=["support"])).status_code == 404
    assert client.post(reverse("annotation:project", args=["support"])).status_code == 404
    assert client.get(item_page(project, project.dataset.trees.get().pk)).status_code == 404
    assert client.get(reverse("annotation:projects")).context["rows"] == []


# The annotate page


def test_the_annotate_page_carries_the_whole_tree_in_preorder_as_get_item_gives_it(
    alice: Any, project: Project
) -> None:
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    data = page_data(client.get(item_page(project, held.tree_id)))

    assert [(m["id"], m["parent"], m["role"], m["depth"]) for m in data["item"]["tree"]["messages"]] == [
        ("root", None, "user", 0),
        ("resp_a", "root", "assistant", 1),
        ("user_2", "resp_a", "user", 2),
        ("resp_b", "root", "assistant", 1),
    ]
    # The seed gives messages as {role, content}: their text is there.
    assert [m["text"] for m in data["item"]["tree"]["messages"]] == [
        "Hello, I need help with my order",
        "I'd be happy to help! Can you provide your order number?",
        "It's ORDER-12345",
        "Sure, what seems to be the problem?",
    ]
    api = client.get(reverse("api:item-detail", kwargs={"name": "support", "tree_id": held.tree_id})).json()
    assert data["item"] == api


def test_the_annotate_page_never_lets_message_text_out_as_markup_and_runs_only_its_script_file(
    alice: Any,
) -> None:
    text = "</script><script>alert('x')</script><img src=x onerror=alert(1)>"
    hostile = {"id": "xss", "tree": {"id": "root", "role": "user", "content": text}}
    project = project_over("hostile", RESPONSE_QUALITY, [hostile], [alice])
    held = item_next(project=project, user=alice)

    response = client_for(alice).get(item_page(project, held.tree_id))

    html = response.content.decode()
    assert "<script>alert" not in html
    assert "<img" not in html
    assert page_data(response)["item"]["tree"]["messages"][0]["text"] == text
    assert page_data(response)["item"]["tree"]["messages"][0]["html"] == (
        "<p>&lt;/script&gt;&lt;script&gt;alert('x')&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</p>\n"
    )
    assert Scripts(html).scripts == [
        {"id": "annotate-data", "type": "application/json"},
        {"type": "module", "src": "/static/annotation/annotate.js"},
    ]
    assert " on" + "click=" not in html
    assert "style=" not in html


def test_the_page_data_holds_the_annotators_own_answers_and_the_api_urls(alice: Any, bob: Any) -> None:
    config = RESPONSE_QUALITY + "\nassignment: {annotations_per_item: 2}\n"
    project = project_over("overlap", config, [SEED_ITEM], [alice, bob])
    alices, bobs = item_next(project=project, user=alice), item_next(project=project, user=bob)
    assert alices.tree_id == bobs.tree_id
    bobs_answer = {"response_quality": {"node_annotations": {"resp_a": {"rating": 1}}, "selected_path": []}}
    item_submit(project=project, tree=bobs.tree, user=bob, answers=bobs_answer, version=bobs.version)

    data = page_data(client_for(alice).get(item_page(project, alices.tree_id)))

    assert data["item"]["annotations"] == {}
    assert data["item"]["assignment"]["version"] == 1
    assert (data["item"]["tree"]["id"], data["item"]["tree"]["external_id"]) == (alices.tree_id, "conv_001")
    assert data["editable"] is True
    assert [scheme["name"] for scheme in data["schemes"]] == ["response_quality"]
    assert data["schemes"][0]["node_scheme"]["size"] == 5
    assert data["urls"] == {
        "page": item_page(Project.objects.get(name="overlap"), alices.tree_id),
        **{
            action: reverse(f"api:item-{action}", kwargs={"name": "overlap", "tree_id": alices.tree_id})
            for action in ("draft", "submit", "skip")
        },
    }


def test_an_item_held_by_someone_else_is_refused(alice: Any, bob: Any, maggie: Any, project: Project) -> None:
    held = item_next(project=project, user=alice)

    for user in (bob, maggie):
        response = client_for(user).get(item_page(project, held.tree_id))
        assert response.status_code == 403
        assert "This item is not assigned to you." in response.content.decode()


def test_a_skipped_item_is_shown_read_only(alice: Any, project: Project) -> None:
    held = item_next(project=project, user=alice)
    item_skip(project=project, tree=held.tree, user=alice, version=held.version)

    response = client_for(alice).get(item_page(project, held.tree_id))

    html = response.content.decode()
    assert page_data(response)["editable"] is False
    assert "data-readonly" in html
    assert "data-submit" not in html


def test_submitted_work_opens_read_only_with_edit_and_work_sent_back_opens_editable(
    alice: Any, project: Project
) -> None:
    rita = person("rita")
    membership_add(project=project, user=rita, role=Membership.Role.REVIEWER)
    held = item_next(project=project, user=alice)
    page = item_page(project, held.tree_id)
    assert page_data(client_for(alice).get(page))["read_only"] is False  # a draft is edited as it is
    submitted = item_submit(project=project, tree=held.tree, user=alice, answers={}, version=held.version)

    response = client_for(alice).get(page)

    html = response.content.decode()
    assert (page_data(response)["editable"], page_data(response)["read_only"]) == (True, True)
    assert "data-read-only" in html and "data-edit" in html
    assert "All changes saved" not in html  # nothing is being edited yet

    review_decide(
        reviewer=rita, assignment=submitted, decision="rejected", comment="Again.", version=submitted.version
    )
    response = client_for(alice).get(page)
    assert page_data(response)["read_only"] is False
    assert "data-edit" not in response.content.decode()


@pytest.mark.parametrize("size", [4, 1000])
def test_the_annotate_page_costs_the_same_queries_whatever_the_trees_size(
    alice: Any, size: int, django_assert_num_queries: Any
) -> None:
    project = project_over(f"sized-{size}", RESPONSE_QUALITY, [bushy_item("big", size)], [alice])
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    with django_assert_num_queries(ANNOTATE_PAGE_QUERIES):
        response = client.get(item_page(project, held.tree_id))

    assert len(page_data(response)["item"]["tree"]["messages"]) == size
