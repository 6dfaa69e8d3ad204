"""A judge's suggestions on the annotate page and through the API (the project's
``suggestions:``): shown while answering (``before``) or only once the item is submitted
(``after``), never in a project without them nor on gold checks, marked on each answer.

Alice annotates; the judge ``rater`` answered the items beforehand.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, Assignment
from annotation.work.assignment import item_next
from tests.annotation.annotator_items import person
from tests.annotation.suggested import judge_answers, judge_made, suggested_project
from tests.annotation.work.test_pages import ANNOTATE_PAGE_QUERIES, item_page, page_data

pytestmark = pytest.mark.django_db

JUDGE_SAYS = {"sentiment": {"label": "negative"}, "quality": {"rating": 2}}


@pytest.fixture
def alice() -> Any:
    return person("alice")


@pytest.fixture
def judge() -> Any:
    return judge_made("rater")


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def project_judged(
    show: str | None, alice: Any, judge: Any, items: int = 1, answers: dict | None = None
) -> Any:
    project = suggested_project(f"judged-{show}", show, [alice], items=items)
    for item in project.items.all():
        judge_answers(judge, project, item.tree_id, JUDGE_SAYS if answers is None else answers)
    return project


def api(project: Any, tree_id: int, action: str) -> str:
    return reverse(f"api:item-{action}", kwargs={"name": project.name, "tree_id": tree_id})


def post_json(client: Client, url: str, body: dict[str, Any], method: str = "post") -> Any:
    return getattr(client, method)(url, body, content_type="application/json")


def marks(project: Any, user: Any) -> dict[str, str]:
    return dict(Annotation.objects.filter(project=project, user=user).values_list("scheme", "suggestion"))


# -- what the page shows ------------------------------------------------------------------


def test_before_the_page_shows_the_judges_answers_marked_with_its_name_while_the_annotator_answers(
    alice, judge
):
    project = project_judged("before", alice, judge)
    held = item_next(project=project, user=alice)

    data = page_data(client_for(alice).get(item_page(project, held.tree_id)))

    assert data["suggestions"] == {
        "from": "judge:rater",
        "judge": "rater",
        "show": "before",
        "schemes": [
            {
                "scheme": "sentiment",
                "description": "How does the user feel?",
                "payload": {"label": "negative"},
                "text": "negative",
            },
            {
                "scheme": "quality",
                "description": "How good is the reply?",
                "payload": {"rating": 2},
                "text": "2 of 5",
            },
        ],
    }


def test_after_nothing_of_the_judge_reaches_the_page_until_the_annotator_submits(alice, judge):
    project = project_judged("after", alice, judge)
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    page = client.get(item_page(project, held.tree_id))
    submitted = post_json(
        client,
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "positive"}, "quality": {"rating": 4}},
            "version": held.version,
        },
    )
    again = page_data(client.get(item_page(project, held.tree_id)))

    assert "suggestions" not in page_data(page) and "judge:rater" not in page.content.decode()
    assert submitted.status_code == 200
    assert [(entry["text"], entry["yours"]) for entry in submitted.json()["suggestions"]["schemes"]] == [
        ("negative", "positive"),
        ("2 of 5", "4 of 5"),
    ]
    assert again["suggestions"]["show"] == "after"
    assert [entry["scheme"] for entry in again["suggestions"]["schemes"]] == ["sentiment", "quality"]


def test_an_annotator_of_a_project_without_suggestions_sees_nothing_of_a_judges_answers(alice, judge):
    project = project_judged(None, alice, judge)
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    page = client.get(item_page(project, held.tree_id))
    submitted = post_json(
        client,
        api(project, held.tree_id, "submit"),
        {"annotations": {"sentiment": {"label": "positive"}}, "version": 1},
    )

    assert "suggestions" not in page_data(page)
    assert "judge:rater" not in page.content.decode() and '"rating": 2' not in page.content.decode()
    assert submitted.json()["suggestions"] is None
    assert marks(project, alice) == {"sentiment": ""}


def test_an_item_the_judge_did_not_answer_shows_no_suggestion(alice, judge):
    project = project_judged("before", alice, judge, answers={})
    held = item_next(project=project, user=alice)

    data = page_data(client_for(alice).get(item_page(project, held.tree_id)))

    assert data["suggestions"]["schemes"] == []


def test_gold_checks_never_show_a_suggestion(alice, judge):
    project = project_judged("before", alice, judge)
    held = item_next(project=project, user=alice)
    Assignment.objects.filter(pk=held.pk).update(kind=Assignment.Kind.GOLD)

    data = page_data(client_for(alice).get(item_page(project, held.tree_id)))

    assert "suggestions" not in data


def test_the_judges_answers_are_never_handed_out_as_anyones_work(alice, judge):
    project = project_judged("before", alice, judge)

    held = item_next(project=project, user=alice)
    item = client_for(alice).get(api(project, held.tree_id, "detail")).json()

    assert item["annotations"] == {}
    assert not Assignment.objects.filter(user=judge.user).exists()


# -- what each answer records -------------------------------------------------------------


def test_before_answers_say_a_suggestion_was_visible_and_which_were_copied_from_it(alice, judge):
    project = project_judged("before", alice, judge)
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    response = post_json(
        client,
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "negative"}, "quality": {"rating": 5}},
            "version": held.version,
            "suggestions_taken": ["sentiment"],
        },
    )

    assert response.status_code == 200, response.json()
    assert marks(project, alice) == {"sentiment": "before_taken", "quality": "before"}


def test_after_answers_say_the_suggestion_came_after_until_they_change_once_it_was_seen(alice, judge):
    project = project_judged("after", alice, judge)
    held = item_next(project=project, user=alice)
    client = client_for(alice)

    post_json(
        client,
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "positive"}, "quality": {"rating": 4}},
            "version": held.version,
        },
    )
    first = marks(project, alice)
    # Seen on submitting: the annotator edits one answer (the other is sent unchanged).
    post_json(
        client,
        api(project, held.tree_id, "draft"),
        {
            "annotations": {"sentiment": {"label": "negative"}, "quality": {"rating": 4}},
            "version": held.version + 1,
        },
        method="put",
    )

    assert first == {"sentiment": "after", "quality": "after"}
    assert marks(project, alice) == {"sentiment": "after_seen", "quality": "after"}


def test_copying_is_not_recorded_where_the_suggestion_only_shows_after(alice, judge):
    project = project_judged("after", alice, judge)
    held = item_next(project=project, user=alice)

    post_json(
        client_for(alice),
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "negative"}},
            "version": held.version,
            "suggestions_taken": ["sentiment"],
        },
    )

    assert marks(project, alice) == {"sentiment": "after"}


def test_a_scheme_the_judge_did_not_answer_records_no_suggestion(alice, judge):
    project = project_judged("before", alice, judge, answers={"quality": {"rating": 2}})
    held = item_next(project=project, user=alice)

    post_json(
        client_for(alice),
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "negative"}, "quality": {"rating": 2}},
            "version": held.version,
        },
    )

    assert marks(project, alice) == {"sentiment": "", "quality": "before"}


def test_a_malformed_list_of_copied_schemes_is_refused_naming_it(alice, judge):
    project = project_judged("before", alice, judge)
    held = item_next(project=project, user=alice)

    response = post_json(
        client_for(alice),
        api(project, held.tree_id, "draft"),
        {"annotations": {}, "version": held.version, "suggestions_taken": "sentiment"},
        method="put",
    )

    assert response.status_code == 400
    assert "suggestions_taken" in response.content.decode()


# -- cost -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [2, 300])
def test_the_page_with_suggestions_costs_one_query_more_whatever_the_trees_size(
    alice, judge, size, django_assert_num_queries
):
    from tests.annotation.annotator_items import project_over
    from tests.annotation.suggested import config_with, conversation

    project = project_over(f"big-{size}", config_with("before"), [conversation("c0", size)], [alice])
    held = item_next(project=project, user=alice)
    judge_answers(judge, project, held.tree_id, JUDGE_SAYS)
    client = client_for(alice)

    with django_assert_num_queries(ANNOTATE_PAGE_QUERIES + 1):
        response = client.get(item_page(project, held.tree_id))

    assert len(page_data(response)["suggestions"]["schemes"]) == 2


def test_work_sent_back_keeps_its_after_suggestion_and_a_change_to_it_says_it_was_seen(alice, judge):
    from annotation.models import Membership
    from annotation.projects.services import membership_add
    from annotation.review.services import review_decide

    maggie = person("maggie")
    project = project_judged("after", alice, judge)
    membership_add(project=project, user=maggie, role=Membership.Role.REVIEWER)
    held = item_next(project=project, user=alice)
    client = client_for(alice)
    post_json(
        client,
        api(project, held.tree_id, "submit"),
        {
            "annotations": {"sentiment": {"label": "positive"}, "quality": {"rating": 4}},
            "version": held.version,
        },
    )
    held.refresh_from_db()
    review_decide(
        assignment=held, reviewer=maggie, decision="rejected", comment="Look again", version=held.version
    )
    held.refresh_from_db()

    data = page_data(client.get(item_page(project, held.tree_id)))
    post_json(
        client,
        api(project, held.tree_id, "submit"),
        {"annotations": {"sentiment": {"label": "negative"}}, "version": held.version},
    )

    assert held.status == Assignment.Status.LEASED
    assert [entry["scheme"] for entry in data["suggestions"]["schemes"]] == ["sentiment", "quality"]
    assert marks(project, alice) == {"sentiment": "after_seen", "quality": "after"}


@pytest.mark.parametrize("show", ["before", "after"])
def test_a_write_costs_one_query_more_with_suggestions_whatever_the_trees_size(alice, judge, show):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.work.submissions import draft_save
    from tests.annotation.annotator_items import project_over
    from tests.annotation.suggested import config_with, conversation

    def draft_cost(suggestions: str | None, size: int) -> int:
        project = project_over(
            f"cost-{suggestions}-{size}", config_with(suggestions), [conversation("c0", size)], [alice]
        )
        held = item_next(project=project, user=alice)
        judge_answers(judge, project, held.tree_id, JUDGE_SAYS)
        with CaptureQueriesContext(connection) as queries:
            draft_save(
                project=project,
                tree=held.tree_id,
                user=alice,
                answers={"sentiment": {"label": "negative"}},
                version=held.version,
            )
        return len(queries)

    assert draft_cost(show, 2) == draft_cost(show, 200) == draft_cost(None, 2) + 1


@pytest.mark.parametrize(("show", "shown"), [("before", True), ("after", False), (None, False)])
def test_the_api_gives_the_item_with_the_suggestions_the_page_would_show(alice, judge, show, shown):
    project = project_judged(show, alice, judge)
    client = client_for(alice)

    handed = client.post(reverse("api:item-next", kwargs={"name": project.name})).json()
    again = client.get(api(project, handed["tree"]["id"], "detail")).json()

    for item in (handed, again):
        assert ("suggestions" in item) is shown
        if shown:
            assert item["suggestions"]["judge"] == "rater"
