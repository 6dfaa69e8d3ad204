"""The reviewer's pages as the server draws them: the queue, an item's answers side by side,
decisions posted from it, and what the annotator's pages show of a decision (the browser
test drives the whole loop).

Alice and Bob annotate Potato's documented conversation; Rita reviews; Maggie
manages; Mallory is signed in but in no project.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Project, Review
from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, bushy_item, person, project_over

pytestmark = pytest.mark.django_db

CONFIG = """\
annotation_schemes:
  - annotation_type: tree_annotation
    name: response_quality
    description: Rate each response and pick the best path
    node_scheme: {annotation_type: likert, min_label: Poor, max_label: Excellent, size: 5}
    path_selection: {enabled: true}
  - {annotation_type: radio, name: overall, description: Overall, labels: [Helpful, Unhelpful]}
assignment: {annotations_per_item: 3}
"""
ALICE_ANSWERS = {
    "response_quality": {
        "node_annotations": {"resp_a": {"rating": 4}, "resp_b": {"rating": 2}},
        "selected_path": ["root", "resp_a", "user_2"],
    },
    "overall": {"label": "Helpful"},
}
BOB_ANSWERS = {
    "response_quality": {"node_annotations": {"resp_a": {"rating": 5}}, "selected_path": ["root", "resp_b"]},
    "overall": {"label": "Helpful"},
}
# The session and the user, the project with the user's roles; the counts, the page's items, their
# work, the project's annotators.
QUEUE_PAGE_QUERIES = 7
# The session and the user, the project with the user's roles; the tree, its work with the
# annotators, their answers, the decisions, the messages, the next item waiting.
ITEM_PAGE_QUERIES = 9


@pytest.fixture
def people() -> dict[str, Any]:
    return {name: person(name) for name in ("alice", "bob", "rita", "maggie", "mallory")}


@pytest.fixture
def project(people: dict[str, Any]) -> Project:
    return project_over(
        "support",
        CONFIG,
        [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}],
        [people["alice"], people["bob"]],
        reviewers=[people["rita"]],
        managers=[people["maggie"]],
    )


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def submit(project: Project, user: Any, answers: dict[str, Any]) -> Assignment:
    held = item_next(project=project, user=user)
    return item_submit(project=project, tree=held.tree, user=user, answers=answers, version=held.version)


def queue_url(project: Project, **query: str) -> str:
    url = reverse("annotation:review", args=[project.name])
    return url + ("?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else "")


def item_url(project: Project, tree_id: int) -> str:
    return reverse("annotation:review-item", args=[project.name, tree_id])


class Marked(HTMLParser):
    """Elements carrying a ``data-*`` attribute, with their attributes and text."""

    def __init__(self, html: str, attribute: str):
        super().__init__()
        self.attribute = attribute
        self.found: list[tuple[dict[str, str | None], str]] = []
        self.open: list[int] = []
        self.depth = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.handle_data("\n")
        if tag in ("input", "br", "link", "meta", "img"):
            return
        self.depth += 1
        if self.attribute in dict(attrs):
            self.found.append((dict(attrs), ""))
            self.open.append(self.depth)

    def handle_endtag(self, tag: str) -> None:
        if self.open and self.open[-1] == self.depth:
            self.open.pop()
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        for index in range(len(self.found) - len(self.open), len(self.found)):
            attrs, text = self.found[index]
            self.found[index] = (attrs, text + data)


def marked(response: Any, attribute: str) -> list[tuple[dict[str, str | None], str]]:
    return [
        (attrs, " ".join(text.split())) for attrs, text in Marked(response.content.decode(), attribute).found
    ]


# -- who may review -------------------------------------------------------------------------


def test_reviewers_managers_and_admins_may_open_the_review_pages(people, project):
    tree_id = submit(project, people["alice"], ALICE_ANSWERS).tree_id
    admin = person("root", is_superuser=True, is_staff=True)

    for who in (people["rita"], people["maggie"], admin):
        client = client_for(who)
        assert client.get(queue_url(project)).status_code == 200
        assert client.get(item_url(project, tree_id)).status_code == 200


def test_annotators_are_refused_and_strangers_do_not_learn_the_project_exists(people, project):
    tree_id = submit(project, people["alice"], ALICE_ANSWERS).tree_id

    for url in (queue_url(project), item_url(project, tree_id)):
        assert client_for(people["bob"]).get(url).status_code == 403
        assert client_for(people["mallory"]).get(url).status_code == 404
        assert Client().get(url).status_code == 302  # to the login


def test_the_project_page_links_reviewers_to_the_queue_and_offers_them_the_download(people, project):
    page = reverse("annotation:project", args=[project.name])

    for who in ("rita", "maggie"):
        response = client_for(people[who]).get(page)
        [(link, text)] = marked(response, "data-review-link")
        assert (link["href"], text) == (queue_url(project), "Review submitted work")
        assert len(marked(response, "data-export-form")) == 1

    response = client_for(people["alice"]).get(page)
    assert marked(response, "data-review-link") == []
    assert marked(response, "data-export-form") == []


# -- the queue --------------------------------------------------------------------------------


def test_the_queue_lists_items_waiting_for_review_with_each_annotators_state(people, project):
    first = submit(project, people["alice"], ALICE_ANSWERS)
    submit(project, people["bob"], BOB_ANSWERS)
    review_decide(reviewer=people["rita"], assignment=first, decision="accepted", version=first.version)

    response = client_for(people["rita"]).get(queue_url(project))

    queue = response.context["queue"]
    assert [(row.external_id, [(e.username, e.label) for e in row.entries]) for row in queue.rows] == [
        ("conv_001", [("alice", "accepted"), ("bob", "waiting for review")])
    ]
    assert queue.counts == {"pending": 1, "accepted": 1, "rejected": 0, "all": 2}
    filters = {attrs["data-filter"]: text for attrs, text in marked(response, "data-filter")}
    assert filters == {
        "pending": "Waiting for review 1",
        "accepted": "Accepted 1",
        "rejected": "Sent back 0",
        "all": "All submitted or reviewed 2",
    }


def test_the_queue_filters_by_review_status_and_annotator(people, project):
    alices = submit(project, people["alice"], ALICE_ANSWERS)
    submit(project, people["alice"], ALICE_ANSWERS)  # her second item, conv_002
    submit(project, people["bob"], BOB_ANSWERS)
    review_decide(
        reviewer=people["rita"],
        assignment=alices,
        decision="rejected",
        comment="Why 2?",
        version=alices.version,
    )
    client = client_for(people["rita"])

    def items(**query: str) -> list[str]:
        return [row.external_id for row in client.get(queue_url(project, **query)).context["queue"].rows]

    assert items() == ["conv_001", "conv_002"]  # Bob's conv_001 waits, and Alice's conv_002
    assert items(annotator="alice") == ["conv_002"]
    assert items(status="rejected") == ["conv_001"]
    assert items(status="rejected", annotator="bob") == []
    assert items(status="accepted") == []
    assert items(status="all", annotator="alice") == ["conv_001", "conv_002"]
    # A filter that does not read is dropped, not an error.
    assert items(status="whatever") == ["conv_001", "conv_002"]


def test_the_queue_says_when_nothing_is_waiting(people, project):
    response = client_for(people["rita"]).get(queue_url(project))

    assert [text for _, text in marked(response, "data-queue-empty")] == ["Nothing is waiting for review."]


def test_the_queue_costs_the_same_queries_for_any_number_of_items(people, django_assert_num_queries):
    small = project_over("small", CONFIG, [SEED_ITEM], [people["alice"]], reviewers=[people["rita"]])
    submit(small, people["alice"], ALICE_ANSWERS)
    items = [{**SEED_ITEM, "id": f"conv_{n:03d}"} for n in range(12)]
    annotators = [person(f"annotator{n}") for n in range(3)]
    large = project_over("large", CONFIG, items, annotators, reviewers=[people["rita"]])
    for user in annotators:
        for _ in range(12):
            submit(large, user, ALICE_ANSWERS)
    client = client_for(people["rita"])

    for project in (small, large):
        with django_assert_num_queries(QUEUE_PAGE_QUERIES):
            response = client.get(queue_url(project))
        assert response.status_code == 200
    assert len(response.context["queue"].rows) == 12


# -- one item, side by side ---------------------------------------------------------------------


def test_an_item_shows_each_annotators_answers_side_by_side_in_words(people, project):
    tree_id = submit(project, people["alice"], ALICE_ANSWERS).tree_id
    submit(project, people["bob"], BOB_ANSWERS)

    response = client_for(people["rita"]).get(item_url(project, tree_id))

    item = response.context["item"]
    assert [column.username for column in item.columns] == ["alice", "bob"]
    answers, tree = item.sections
    assert [(row.label, row.cells, row.differ) for row in answers.rows] == [
        ("overall", ["Helpful", "Helpful"], False)
    ]
    assert tree.title == "response_quality"
    assert [(row.label, row.cells) for row in tree.rows] == [
        ("selected path", ["root → resp_a → user_2", "root → resp_b"]),
        ("root", ["path step 1", "path step 1"]),
        ("resp_a", ["4 of 5; path step 2", "5 of 5 (Excellent)"]),
        ("user_2", ["path step 3", ""]),
        ("resp_b", ["2 of 5", "path step 2"]),
    ]
    assert [row.label for row in tree.rows if not row.differ] == ["root"]
    # The messages are the tree's, in its order, indented by depth.
    rows = marked(response, "data-node")
    assert [attrs["data-row"] for attrs, _ in rows] == ["root", "resp_a", "user_2", "resp_b"]
    assert rows[1][1].startswith("assistant resp_a I'd be happy to help!")
    cards = marked(response, "data-column")
    assert [attrs["data-column"] for attrs, _ in cards] == ["alice", "bob"]


def test_an_item_shows_the_decisions_so_far_and_who_still_has_it_in_hand(people, project):
    alices = submit(project, people["alice"], ALICE_ANSWERS)
    item_next(project=project, user=people["bob"])  # Bob has it, not submitted
    review_decide(
        reviewer=people["maggie"],
        assignment=alices,
        decision="accepted",
        comment="Fine.",
        version=alices.version,
    )

    response = client_for(people["rita"]).get(item_url(project, alices.tree_id))

    [column] = response.context["item"].columns
    assert [(r.decision, r.reviewer.username, r.comment) for r in column.reviews] == [
        ("accepted", "maggie", "Fine.")
    ]
    assert response.context["item"].in_progress == 1
    assert [text for _, text in marked(response, "data-in-progress")] == [
        "1 more annotator has this item and has not submitted it."
    ]


def test_an_item_links_to_the_next_one_waiting_for_review(people, project):
    first = submit(project, people["alice"], ALICE_ANSWERS)
    second = submit(project, people["alice"], ALICE_ANSWERS)
    client = client_for(people["rita"])

    [(link, _)] = marked(client.get(item_url(project, first.tree_id)), "data-next")
    assert link["href"] == item_url(project, second.tree_id)
    # From the last one it wraps around to the first.
    [(link, _)] = marked(client.get(item_url(project, second.tree_id)), "data-next")
    assert link["href"] == item_url(project, first.tree_id)


def test_an_item_of_another_project_or_none_at_all_is_not_found(people, project):
    other = project_over("other", CONFIG, [SEED_ITEM], [people["alice"]], reviewers=[people["rita"]])
    tree_id = submit(other, people["alice"], ALICE_ANSWERS).tree_id

    assert client_for(people["rita"]).get(item_url(project, tree_id)).status_code == 404
    assert client_for(people["rita"]).get(item_url(project, 999_999)).status_code == 404


def test_the_item_page_costs_the_same_queries_whatever_the_tree_and_the_annotators(
    people, django_assert_num_queries
):
    annotators = [person(f"annotator{n}") for n in range(3)]
    small = project_over("small", CONFIG, [SEED_ITEM], annotators[:1], reviewers=[people["rita"]])
    small_tree = submit(small, annotators[0], ALICE_ANSWERS).tree_id
    big = project_over("big", CONFIG, [bushy_item("big", 300)], annotators, reviewers=[people["rita"]])
    for user in annotators:
        big_tree = submit(big, user, {"overall": {"label": "Unhelpful"}}).tree_id
    first = Assignment.objects.filter(project=big).order_by("pk").first()
    review_decide(reviewer=people["rita"], assignment=first, decision="accepted", version=first.version)
    client = client_for(people["rita"])

    for project, tree_id in ((small, small_tree), (big, big_tree)):
        with django_assert_num_queries(ITEM_PAGE_QUERIES):
            response = client.get(item_url(project, tree_id))
        assert response.status_code == 200
    assert len(response.context["item"].columns) == 3


# -- deciding from the page --------------------------------------------------------------------


def decide(
    client: Client, project: Project, work: Assignment, decision: str, comment: str = "", **extra: Any
):
    data = {"assignment": work.pk, "version": work.version, "decision": decision, "comment": comment} | extra
    return client.post(item_url(project, work.tree_id), data)


def test_rejecting_from_the_page_sends_the_work_back_and_says_so(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    client = client_for(people["rita"])

    response = decide(client, project, work, "rejected", "resp_b deserves more than 2.")

    assert response.status_code == 302
    assert response.headers["Location"] == item_url(project, work.tree_id)
    work.refresh_from_db()
    assert (work.status, work.review_status) == ("leased", "rejected")
    page = client.get(response.headers["Location"])
    assert [str(message) for message in page.context["messages"]] == [
        "Sent conv_001 back to alice with your comment."
    ]
    [column] = page.context["item"].columns
    assert column.label == "sent back to the annotator"
    assert marked(page, "data-decision-form") == []  # nothing to decide until she resubmits


def test_accepting_from_the_page(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)

    response = decide(client_for(people["rita"]), project, work, "accepted")

    assert response.status_code == 302
    assert Review.objects.get().decision == "accepted"


def test_a_refused_rejection_is_shown_on_its_column_with_nothing_lost(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    submit(project, people["bob"], BOB_ANSWERS)

    response = decide(client_for(people["rita"]), project, work, "rejected", "   ")

    assert response.status_code == 400
    [(_, text)] = marked(response, "data-problem")
    assert text == "Say what to fix: a rejection needs a comment for the annotator."
    work.refresh_from_db()
    assert (work.status, work.review_status) == ("submitted", "")


def test_a_decision_on_changed_work_is_refused_and_the_comment_kept(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    seen = work.version
    item_submit(project=project, tree=work.tree, user=people["alice"], answers={}, version=seen)

    response = decide(
        client_for(people["rita"]), project, work, "rejected", "resp_b is better than 2.", version=seen
    )

    assert response.status_code == 409
    [(_, text)] = marked(response, "data-problem")
    assert text.startswith(
        f"This work changed while you were looking at it (it is now at version {seen + 1})"
    )
    [(_, comment)] = marked(response, "data-comment")
    assert comment == "resp_b is better than 2."
    assert not Review.objects.exists()


def test_work_of_another_item_cannot_be_decided_on_from_this_one(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    other = submit(project, people["alice"], ALICE_ANSWERS)
    client = client_for(people["rita"])

    response = client.post(
        item_url(project, other.tree_id),
        {"assignment": work.pk, "version": work.version, "decision": "accepted"},
    )

    assert response.status_code == 404
    assert decide(client, project, work, "perhaps").status_code == 400
    assert not Review.objects.exists()


def test_annotators_cannot_post_decisions(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)

    assert decide(client_for(people["bob"]), project, work, "accepted").status_code == 403
    assert not Review.objects.exists()


def test_a_reviewer_who_also_annotated_sees_no_form_on_their_own_work(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    project.memberships.create(user=people["rita"], role="annotator")
    own = submit(project, people["rita"], BOB_ANSWERS)

    response = client_for(people["rita"]).get(item_url(project, work.tree_id))

    forms = [attrs for attrs, _ in marked(response, "data-column")]
    assert [form["data-column"] for form in forms] == ["alice", "rita"]
    assert len(marked(response, "data-decision-form")) == 1
    assert [text for _, text in marked(response, "data-own-work")] == [
        "Your own work: another reviewer decides on it."
    ]
    assert decide(client_for(people["rita"]), project, own, "accepted").status_code == 400


# -- what the annotator sees ---------------------------------------------------------------------


def test_the_annotate_page_shows_the_reviewers_comment_on_work_sent_back(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    review_decide(
        reviewer=people["rita"],
        assignment=work,
        decision="rejected",
        comment="resp_b deserves more than 2.\nLook again.",
        version=work.version,
    )

    response = client_for(people["alice"]).get(reverse("annotation:item", args=[project.name, work.tree_id]))

    [(_, comment)] = marked(response, "data-review-comment")
    assert comment == "resp_b deserves more than 2. Look again."
    [(_, notice)] = marked(response, "data-returned")
    assert notice.startswith("rita sent this item back to you")


def test_the_annotate_page_says_when_work_was_accepted_and_nothing_when_unreviewed(people, project):
    work = submit(project, people["alice"], ALICE_ANSWERS)
    page = reverse("annotation:item", args=[project.name, work.tree_id])
    client = client_for(people["alice"])
    assert marked(client.get(page), "data-accepted") == []

    review_decide(reviewer=people["rita"], assignment=work, decision="accepted", version=work.version)

    response = client.get(page)
    assert len(marked(response, "data-accepted")) == 1
    assert marked(response, "data-returned") == []
