"""Gold from the review page: a manager makes an annotator's answer the item's gold answer,
with the undo right there.

- The answer is stored as the gold service normalises it (the one the admin, the API and
  ``import_gold`` use), audited, and is in the gold set (the API's list and the admin).
- Every change (marking, replacing another gold answer, removing the gold) can be undone
  from the page, in the browser it was made in, until someone changes the item's gold again.
- Only managers change gold: reviewers see the item's gold but no button, and a post of
  theirs is refused.

Alice and Bob annotate Potato's documented conversation; Rita reviews; Maggie
manages; Mallory is signed in but in no project.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Project, ProjectItem
from annotation.quality.gold import gold_item_set
from annotation.review.services import review_decide
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import SEED_ITEM, bushy_item, person, project_over
from tests.annotation.review.test_review_pages import (
    ALICE_ANSWERS,
    BOB_ANSWERS,
    CONFIG,
    ITEM_PAGE_QUERIES,
    client_for,
    item_url,
    marked,
    submit,
)
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db

# Alice's answers as the gold service keeps them: the scheme's payloads, normalised.
ALICE_GOLD = {
    "overall": {"label": "Helpful"},
    "response_quality": {
        "node_annotations": {"resp_a": {"rating": 4}, "resp_b": {"rating": 2}},
        "selected_path": ["root", "resp_a", "user_2"],
    },
}


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


@pytest.fixture
def work(people: dict[str, Any], project: Project) -> dict[str, Assignment]:
    """Alice's and Bob's submitted work on conv_001."""
    return {
        "alice": submit(project, people["alice"], ALICE_ANSWERS),
        "bob": submit(project, people["bob"], BOB_ANSWERS),
    }


def gold_url(project: Project, tree_id: int) -> str:
    return reverse("annotation:review-gold", args=[project.name, tree_id])


def mark(client: Client, project: Project, work: Assignment, **extra: Any):
    data = {"change": "mark", "assignment": work.pk, "version": work.version} | extra
    return client.post(gold_url(project, work.tree_id), data)


def change(client: Client, project: Project, tree_id: int, what: str):
    return client.post(gold_url(project, tree_id), {"change": what})


def item_of(work: Assignment) -> ProjectItem:
    return ProjectItem.objects.get(project_id=work.project_id, tree_id=work.tree_id)


def texts(response: Any, attribute: str) -> list[str]:
    return [text for _, text in marked(response, attribute)]


# -- marking --------------------------------------------------------------------------------------


def test_a_manager_marks_an_annotators_answer_as_gold_and_it_joins_the_gold_set(people, project, work):
    client = client_for(people["maggie"])

    response = mark(client, project, work["alice"])

    assert response.status_code == 302
    assert response.headers["Location"] == item_url(project, work["alice"].tree_id) + "#gold"
    item = item_of(work["alice"])
    assert (item.is_gold, item.gold_answers) == (True, ALICE_GOLD)
    gold_set = client.get(reverse("api:gold-items", args=[project.name])).json()
    assert [(row["external_id"], row["answers"]) for row in gold_set["results"]] == [("conv_001", ALICE_GOLD)]
    entry = AuditEntry.objects.filter(action="gold.set").get()
    assert (entry.actor_name, entry.target_repr, entry.scope) == ("maggie", "conv_001", "support")
    assert entry.details == {
        "is_gold": True,
        "schemes": ["overall", "response_quality"],
        "origin": "alice's answer",
    }


def test_the_admin_lists_an_item_marked_from_the_review_page_as_gold(people, project, work):
    mark(client_for(people["maggie"]), project, work["alice"])
    root = person("root", is_superuser=True, is_staff=True)

    page = client_for(root).get(reverse("admin:annotation_projectitem_changelist") + "?is_gold__exact=1")

    assert [str(item.tree) for item in page.context["cl"].result_list] == [str(item_of(work["alice"]).tree)]


def test_the_page_confirms_the_change_shows_the_gold_answer_and_offers_the_undo(people, project, work):
    client = client_for(people["maggie"])
    page = client.get(mark(client, project, work["alice"]).headers["Location"])

    assert texts(page, "data-gold-done")[0].startswith("alice's answer is now the gold answer of conv_001.")
    assert texts(page, "data-gold-undo") == ["Undo"]  # nothing was replaced: undo makes it regular work
    assert texts(page, "data-gold-answers") == [
        "response_quality resp_a: 4 of 5; resp_b: 2 of 5; path root → resp_a → user_2 overall Helpful"
    ]
    # Alice's card says hers is the gold answer; Bob's still offers to replace it.
    assert texts(page, "data-gold-same") == ["This is the item's gold answer."]
    assert len(marked(page, "data-gold-form")) == 1
    assert texts(page, "data-gold-mark") == ["Make bob's answer the gold answer"]
    assert texts(page, "data-gold-remove") == ["Remove gold"]


def test_undo_makes_a_newly_marked_item_regular_work_again(people, project, work):
    client = client_for(people["maggie"])
    mark(client, project, work["alice"])

    response = change(client, project, work["alice"].tree_id, "undo")

    assert response.status_code == 302
    item = item_of(work["alice"])
    assert (item.is_gold, item.gold_answers, item.gold_explanation) == (False, {}, "")
    page = client.get(response.headers["Location"])
    assert [str(message) for message in page.context["messages"]] == [
        "Undone: the gold of conv_001 is back as it was."
    ]
    assert marked(page, "data-gold-undo") == []  # undone once
    assert change(client, project, work["alice"].tree_id, "undo").status_code == 409


def test_replacing_a_different_gold_answer_says_so_and_undo_restores_it(people, project, work):
    item = item_of(work["alice"])
    gold_item_set(item=item, answers={"overall": "Unhelpful"}, explanation="It never answers the question.")
    client = client_for(people["maggie"])

    page = client.get(mark(client, project, work["alice"]).headers["Location"])

    assert texts(page, "data-gold-replaced") == ["overall Unhelpful"]
    assert texts(page, "data-gold-undo") == ["Undo: restore them"]
    item.refresh_from_db()
    assert item.gold_answers == ALICE_GOLD
    assert item.gold_explanation == "It never answers the question."  # the manager's text is kept
    assert texts(page, "data-gold-explanation") == [
        "Why (shown after a training item; edit it in the admin): It never answers the question."
    ]

    change(client, project, item.tree_id, "undo")

    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (True, {"overall": {"label": "Unhelpful"}})
    assert item.gold_explanation == "It never answers the question."


def test_removing_the_gold_keeps_the_answers_and_can_be_undone(people, project, work):
    client = client_for(people["maggie"])
    mark(client, project, work["alice"])

    page = client.get(change(client, project, work["alice"].tree_id, "remove").headers["Location"])

    item = item_of(work["alice"])
    assert (item.is_gold, item.gold_answers) == (False, ALICE_GOLD)
    assert texts(page, "data-gold-done")[0].startswith("conv_001 is regular work again")
    assert marked(page, "data-gold-answers") == []
    change(client, project, item.tree_id, "undo")
    item.refresh_from_db()
    assert (item.is_gold, item.gold_answers) == (True, ALICE_GOLD)


def test_the_undo_is_refused_once_someone_else_changed_the_gold(people, project, work):
    client = client_for(people["maggie"])
    mark(client, project, work["alice"])
    gold_item_set(item=item_of(work["alice"]), answers={"overall": "Unhelpful"})  # another manager, the API

    page = client.get(item_url(project, work["alice"].tree_id))
    assert marked(page, "data-gold-undo") == []  # no longer offered
    response = change(client, project, work["alice"].tree_id, "undo")

    assert response.status_code == 409
    assert texts(response, "data-problem") == [
        "Someone changed this item's gold since: nothing was undone. Look at it again."
    ]
    assert item_of(work["alice"]).gold_answers == {"overall": {"label": "Unhelpful"}}


# -- refusals -------------------------------------------------------------------------------------


def test_reviewers_see_the_gold_but_no_button_and_their_posts_are_refused(people, project, work):
    mark(client_for(people["maggie"]), project, work["alice"])
    rita = client_for(people["rita"])

    page = rita.get(item_url(project, work["alice"].tree_id))
    assert texts(page, "data-gold-answers") != []
    assert marked(page, "data-gold-form") == marked(page, "data-gold-remove") == []

    assert mark(rita, project, work["bob"]).status_code == 403
    assert change(rita, project, work["alice"].tree_id, "remove").status_code == 403
    assert item_of(work["alice"]).gold_answers == ALICE_GOLD


def test_annotators_are_refused_strangers_do_not_learn_the_project_exists_and_others_sign_in(
    people, project, work
):
    assert mark(client_for(people["alice"]), project, work["alice"]).status_code == 403
    assert mark(client_for(people["mallory"]), project, work["alice"]).status_code == 404
    anonymous = mark(Client(), project, work["alice"])
    assert anonymous.status_code == 302 and "login" in anonymous.headers["Location"]
    assert not ProjectItem.objects.filter(is_gold=True).exists()


def test_a_page_without_its_csrf_token_is_refused(people, project, work):
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["maggie"])

    assert mark(client, project, work["alice"]).status_code == 403
    assert not item_of(work["alice"]).is_gold


def test_work_changed_since_the_manager_saw_it_is_refused_on_its_card(people, project, work):
    seen = work["alice"].version
    alice = work["alice"]
    item_submit(project=project, tree=alice.tree, user=people["alice"], answers=BOB_ANSWERS, version=seen)

    response = mark(client_for(people["maggie"]), project, alice, version=seen)

    assert response.status_code == 409
    assert texts(response, "data-problem")[0].startswith(
        f"alice's work changed while you were looking at it (it is now at version {seen + 1})"
    )
    assert not item_of(alice).is_gold


def test_work_sent_back_or_of_another_item_cannot_be_marked(people, project, work):
    alice = work["alice"]
    review_decide(
        reviewer=people["rita"],
        assignment=alice,
        decision="rejected",
        comment="Why 2?",
        version=alice.version,
    )
    alice.refresh_from_db()
    client = client_for(people["maggie"])

    response = mark(client, project, alice)
    assert response.status_code == 400
    [(_, problem)] = [
        (attrs, text) for attrs, text in marked(response, "data-column") if "gold answer." in text
    ]
    assert problem.endswith("alice's work: only submitted work can be the gold answer.")  # on her card

    other = submit(project, people["bob"], BOB_ANSWERS)  # conv_002
    data = {"change": "mark", "assignment": work["bob"].pk, "version": work["bob"].version}
    assert client.post(gold_url(project, other.tree_id), data).status_code == 404
    assert client.post(gold_url(project, alice.tree_id), {"change": "mark"}).status_code == 400
    assert not ProjectItem.objects.filter(is_gold=True).exists()


def test_an_answer_the_gold_service_refuses_is_shown_on_its_card(people, project):
    blank = submit(project, people["alice"], {})

    response = mark(client_for(people["maggie"]), project, blank)

    assert response.status_code == 400
    assert texts(response, "data-problem") == [
        "alice's answer cannot be the gold answer: a gold item needs the expected answer of at least one scheme."
    ]


# -- the page's cost ------------------------------------------------------------------------------


def test_a_managers_item_page_with_gold_and_an_undo_costs_the_same_queries(people, django_assert_num_queries):
    annotators = [person(f"annotator{n}") for n in range(3)]
    big = project_over("big", CONFIG, [bushy_item("big", 300)], annotators, managers=[people["maggie"]])
    for user in annotators:
        done = submit(big, user, {"overall": {"label": "Unhelpful"}})
    client = client_for(people["maggie"])
    mark(client, big, done)

    with django_assert_num_queries(ITEM_PAGE_QUERIES):
        page = client.get(item_url(big, done.tree_id))
    assert texts(page, "data-gold-undo") == ["Undo"]
