"""The annotator's loop over the JSON API (/api/v1/): next item, read it, save
drafts, submit, skip — with every refusal a JSON error that says what to do,
never a server error, and a fixed number of queries whatever the tree's size.

Alice and Bob annotate; Maggie manages the project without annotating it;
Charlie is signed in but not a member. The item is Potato's documented
conversation: root → resp_a → user_2, and root → resp_b.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Annotation, Assignment, Project, ProjectItem
from annotation.work.assignment import item_next
from annotation.work.submissions import item_answers
from tests.annotation.annotator_items import (
    BRANCH_COMPARE,
    RESPONSE_QUALITY,
    SEED_EXPECTED,
    SEED_ITEM,
    bushy_item,
    person,
    project_over,
)
from tests.queries import closing_writes, taken_tree_read

pytestmark = pytest.mark.django_db

# Queries each endpoint costs, whatever the tree's size (see the size tests
# below). Every request starts with three: the session, the user and the throttle's count.
# + the project with the caller's roles; in a savepoint: expired leases (on PostgreSQL in the
# statement that takes the person's lock first), a free item taken (if the
# user holds or lost none, in the same statement), the tree's shape, the shuffled comparison draft,
# the tree (on PostgreSQL in the statement that takes the item), then the assignment and the
# audit entry of the lease; then the item as GET gives it, but for the assignment and tree.
NEXT_ITEM_QUERIES = 14 + taken_tree_read() + closing_writes(2)
# + the project with the caller's roles, the assignment with its tree, the answers, the progress
# (the user's assignments, the project's items), the messages.
GET_ITEM_QUERIES = 9
# + the project with the caller's roles; in a savepoint: the locked assignment with its tree and
# answers, the tree's shape, then the closing writes: one insert (the new answer) and one update
# (the changed one), the assignment, the audit entry.
DRAFT_QUERIES = 8 + closing_writes(4)
# As a draft, plus the item's submitted count and the annotator's (AnnotatorProgress).
SUBMIT_QUERIES = 8 + closing_writes(6)


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


@pytest.fixture
def project(alice: Any, bob: Any, maggie: Any) -> Project:
    return project_over("support", RESPONSE_QUALITY, [SEED_ITEM], [alice, bob], managers=[maggie])


def client_for(user: Any, **options: Any) -> Client:
    client = Client(**options)
    client.force_login(user)
    return client


@pytest.fixture
def as_alice(alice: Any) -> Client:
    return client_for(alice)


def next_url(project: Project) -> str:
    return reverse("api:item-next", kwargs={"name": project.name})


def item_url(project: Project, tree_id: int, action: str = "") -> str:
    name = f"api:item-{action}" if action else "api:item-detail"
    return reverse(name, kwargs={"name": project.name, "tree_id": tree_id})


def put_draft(client: Client, url: str, body: Any) -> Any:
    return client.put(url, data=json.dumps(body), content_type="application/json")


def post_json(client: Client, url: str, body: Any) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json")


def leased(client: Client, project: Project) -> dict[str, Any]:
    response = client.post(next_url(project))
    assert response.status_code == 200, response.content
    return response.json()


def stored(project: Project, user: Any) -> tuple[int, dict[str, Any]]:
    """The item's version and the user's answers as the database has them."""
    assignment = Assignment.objects.get(project=project, user=user)
    return assignment.version, item_answers(project=project, tree=assignment.tree, user=user).payloads


# The loop


def test_next_leases_an_item_and_returns_it_as_get_item_does(as_alice: Client, project: Project) -> None:
    item = leased(as_alice, project)

    tree = project.dataset.trees.get()
    assert item["tree"]["id"] == tree.pk
    assert item["tree"]["external_id"] == "conv_001"
    assert item["tree"]["metadata"] == {}
    assert [(m["id"], m["parent"], m["role"], m["depth"]) for m in item["tree"]["messages"]] == [
        ("root", None, "user", 0),
        ("resp_a", "root", "assistant", 1),
        ("user_2", "resp_a", "user", 2),
        ("resp_b", "root", "assistant", 1),
    ]
    assert item["tree"]["messages"][0]["text"] == "Hello, I need help with my order"
    assert item["assignment"]["status"] == "leased"
    assert item["assignment"]["version"] == 1
    assert item["assignment"]["lease_expires_at"]
    assert item["annotations"] == {}
    assert item["progress"] == {"submitted": 0, "quota": 1, "items": 1, "complete": 0}
    assert as_alice.get(item_url(project, tree.pk)).json() == item


def test_asking_for_the_next_item_again_gives_back_the_one_held(as_alice: Client, project: Project) -> None:
    first = leased(as_alice, project)
    again = leased(as_alice, project)

    assert again["tree"]["id"] == first["tree"]["id"]
    assert Assignment.objects.filter(project=project).count() == 1


def test_a_draft_save_returns_the_next_version_and_keeps_the_answers(
    as_alice: Client, alice: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    answers = {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}}, "selected_path": ["root"]}}

    response = put_draft(
        as_alice,
        item_url(project, item["tree"]["id"], "draft"),
        {"annotations": answers, "version": 1, "time_spent_ms": 1500},
    )

    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2
    assert body["assignment"]["version"] == 2
    assert body["assignment"]["status"] == "leased"
    assert stored(project, alice) == (2, answers)
    assert Annotation.objects.get(user=alice).status == "draft"
    assert Assignment.objects.get(user=alice).time_spent_ms == 1500
    assert as_alice.get(item_url(project, item["tree"]["id"])).json()["annotations"] == answers


def test_submitting_stores_the_documented_output_and_counts_the_item(
    as_alice: Client, alice: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    answers = {
        "response_quality": {
            "node_annotations": {"resp_b": {"rating": 2}, "resp_a": {"rating": 4}},
            "selected_path": ["root", "resp_a", "user_2"],
        }
    }

    response = post_json(
        as_alice, item_url(project, item["tree"]["id"], "submit"), {"annotations": answers, "version": 1}
    )

    assert response.status_code == 200
    assert response.json()["assignment"] == {"status": "submitted", "version": 2, "lease_expires_at": None}
    assert stored(project, alice) == (2, SEED_EXPECTED)
    assert ProjectItem.objects.get(project=project).submitted_count == 1
    assert as_alice.get(item_url(project, item["tree"]["id"])).json()["progress"] == {
        "submitted": 1,
        "quota": 1,
        "items": 1,
        "complete": 1,
    }


def test_when_nothing_is_left_next_says_why_with_a_404(as_alice: Client, project: Project) -> None:
    item = leased(as_alice, project)
    post_json(as_alice, item_url(project, item["tree"]["id"], "submit"), {"annotations": {}, "version": 1})

    response = as_alice.post(next_url(project))

    assert response.status_code == 404
    assert response.json() == {
        "code": "no_items",
        "reason": "done",
        "message": "no items are waiting for you in this project right now",
    }


def test_a_required_answer_missing_at_submission_is_named(alice: Any) -> None:
    config = "annotation_schemes:\n  - {annotation_type: likert, name: overall, description: Overall, size: 5, label_requirement: {required: true}}\n"
    project = project_over("required", config, [SEED_ITEM], [alice])
    client = client_for(alice)
    item = leased(client, project)

    response = post_json(
        client, item_url(project, item["tree"]["id"], "submit"), {"annotations": {}, "version": 1}
    )

    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"code": "required", "path": "overall", "message": "is required before submitting"}
    ]
    assert stored(project, alice) == (1, {})


def test_skipping_gives_the_item_up_for_good(as_alice: Client, alice: Any, project: Project) -> None:
    item = leased(as_alice, project)
    tree_id = item["tree"]["id"]

    response = post_json(as_alice, item_url(project, tree_id, "skip"), {"version": 1})

    assert response.status_code == 200
    assert response.json()["assignment"] == {"status": "skipped", "version": 2, "lease_expires_at": None}
    assert ProjectItem.objects.get(project=project).active_count == 0
    refused = put_draft(as_alice, item_url(project, tree_id, "draft"), {"annotations": {}, "version": 2})
    assert refused.status_code == 409
    assert refused.json() == {"code": "skipped", "message": "you skipped this item"}
    assert as_alice.post(next_url(project)).json()["code"] == "no_items"


# Refusals that change nothing


def test_a_stale_version_is_refused_with_409_and_changes_nothing(
    as_alice: Client, alice: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    url = item_url(project, item["tree"]["id"], "draft")
    first = {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}}}}
    assert put_draft(as_alice, url, {"annotations": first, "version": 1}).status_code == 200

    # Another tab, still at version 1, tries to overwrite the newer answers.
    response = put_draft(
        as_alice,
        url,
        {"annotations": {"response_quality": {"node_annotations": {"resp_a": {"rating": 1}}}}, "version": 1},
    )

    assert response.status_code == 409
    assert response.json() == {
        "code": "stale_version",
        "message": "this item has changed since you loaded it (now version 2); reload it",
        "current_version": 2,
    }
    assert stored(project, alice) == (
        2,
        {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}}, "selected_path": []}},
    )


@pytest.mark.parametrize(
    ("answers", "path", "code"),
    [
        pytest.param(
            {"response_quality": {"node_annotations": {"resp_a": {"rating": 6}}}},
            "response_quality.node_annotations.resp_a.rating",
            "invalid",
            id="rating out of range",
        ),
        pytest.param(
            {"response_quality": {"node_annotations": {"resp_a": {"rating": 4}, "ghost": {"rating": 3}}}},
            "response_quality.node_annotations.ghost",
            "unknown_node",
            id="unknown node",
        ),
        pytest.param(
            {"response_quality": {"selected_path": ["root", "user_2"]}},
            "response_quality.selected_path[1]",
            "broken_path",
            id="path skipping a turn",
        ),
        pytest.param(
            {"response_quality": {"selected_path": ["resp_a", "user_2"]}},
            "response_quality.selected_path[0]",
            "broken_path",
            id="path not from the root",
        ),
        pytest.param(
            {"response_quality": {"node_annotations": {"resp_a": "4"}}},
            "response_quality.node_annotations.resp_a",
            "invalid",
            id="answer of the wrong type",
        ),
        pytest.param({"quality": {"rating": 3}}, "quality", "unknown_scheme", id="unknown scheme"),
    ],
)
def test_a_bad_answer_is_refused_with_400_naming_its_path_and_nothing_is_saved(
    as_alice: Client, alice: Any, project: Project, answers: dict, path: str, code: str
) -> None:
    item = leased(as_alice, project)
    kept = {"response_quality": {"node_annotations": {"resp_b": {"rating": 2}}, "selected_path": ["root"]}}
    url = item_url(project, item["tree"]["id"], "draft")
    assert put_draft(as_alice, url, {"annotations": kept, "version": 1}).status_code == 200

    response = put_draft(as_alice, url, {"annotations": answers, "version": 2})

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert [(error["path"], error["code"]) for error in body["errors"]] == [(path, code)]
    assert body["message"].startswith(f"{path}: ")
    assert stored(project, alice) == (2, kept)


@pytest.fixture
def comparing(alice: Any) -> tuple[Project, Client, dict[str, Any]]:
    """Alice holds the seed item in a project comparing sibling branches."""
    project = project_over("compare", BRANCH_COMPARE, [SEED_ITEM], [alice])
    client = client_for(alice)
    return project, client, leased(client, project)


def test_the_sibling_order_to_compare_is_stored_when_the_item_is_handed_out(
    comparing: tuple[Project, Client, dict[str, Any]],
) -> None:
    _, _, item = comparing

    comparison = item["annotations"]["branch_compare"]["branch_comparisons"]["root"]

    assert sorted(comparison["shown_order"]) == ["resp_a", "resp_b"]
    assert comparison["pairs"] == []


def test_a_labelled_pair_of_siblings_is_saved(
    comparing: tuple[Project, Client, dict[str, Any]], alice: Any
) -> None:
    project, client, item = comparing
    first, second = item["annotations"]["branch_compare"]["branch_comparisons"]["root"]["shown_order"]
    answer = {
        "branch_compare": {
            "branch_comparisons": {
                "root": {
                    "shown_order": [first, second],
                    "pairs": [{"a": first, "b": second, "label": "Better"}],
                }
            }
        }
    }

    response = put_draft(
        client, item_url(project, item["tree"]["id"], "draft"), {"annotations": answer, "version": 1}
    )

    assert response.status_code == 200
    assert stored(project, alice) == (2, answer)


@pytest.mark.parametrize(
    ("comparison", "path", "code"),
    [
        pytest.param(
            lambda order: {
                "shown_order": order,
                "pairs": [{"a": "resp_a", "b": "user_2", "label": "Better"}],
            },
            "branch_compare.branch_comparisons.root.pairs[0]",
            "not_siblings",
            id="pair of non-siblings",
        ),
        pytest.param(
            lambda order: {"shown_order": order[::-1], "pairs": []},
            "branch_compare.branch_comparisons.root.shown_order",
            "order_changed",
            id="changed shown order",
        ),
        pytest.param(
            lambda order: {"shown_order": order, "pairs": [{"a": order[0], "b": order[1], "label": "Best"}]},
            "branch_compare.branch_comparisons.root.pairs[0].label",
            "invalid",
            id="unknown label",
        ),
    ],
)
def test_a_bad_comparison_is_refused_naming_its_path_and_the_stored_order_stays(
    comparing: tuple[Project, Client, dict[str, Any]], alice: Any, comparison: Any, path: str, code: str
) -> None:
    project, client, item = comparing
    before = stored(project, alice)
    order = item["annotations"]["branch_compare"]["branch_comparisons"]["root"]["shown_order"]
    answer = {"branch_compare": {"branch_comparisons": {"root": comparison(order)}}}

    response = put_draft(
        client, item_url(project, item["tree"]["id"], "draft"), {"annotations": answer, "version": 1}
    )

    assert response.status_code == 400
    assert [(error["path"], error["code"]) for error in response.json()["errors"]] == [(path, code)]
    assert stored(project, alice) == before


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"annotations": {}}, [("version", "required")]),
        ({"annotations": {}, "version": "two"}, [("version", "invalid")]),
        ({"annotations": {}, "version": 0}, [("version", "min_value")]),
        ({"annotations": {}, "version": 2**40}, [("version", "max_value")]),
        ({"annotations": [], "version": 1}, [("annotations", "not_a_dict")]),
        ({"annotations": {}, "version": 1, "time_spent_ms": -5}, [("time_spent_ms", "min_value")]),
        ([1, 2], [("", "invalid")]),
    ],
    ids=[
        "no version",
        "version not a number",
        "version 0",
        "version too big",
        "annotations not an object",
        "negative time",
        "body not an object",
    ],
)
def test_a_bad_envelope_is_a_400_naming_the_field(
    as_alice: Client, alice: Any, project: Project, body: Any, errors: list
) -> None:
    item = leased(as_alice, project)

    response = put_draft(as_alice, item_url(project, item["tree"]["id"], "draft"), body)

    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert [(error["path"], error["code"]) for error in response.json()["errors"]] == errors
    assert stored(project, alice) == (1, {})


@pytest.mark.parametrize(
    ("raw", "content_type", "status", "code"),
    [
        (b'{"annotations": {', "application/json", 400, "parse_error"),
        (b'{"version": 1,}', "application/json", 400, "parse_error"),
        (b"[" * 50_000, "application/json", 400, "parse_error"),
        (b'{"version": NaN}', "application/json", 400, "parse_error"),
        (b'{"version": "\xff\xfe"}', "application/json", 400, "parse_error"),
        (b"", "application/json", 400, "invalid"),
        (b"version=1", "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ],
    ids=["cut short", "trailing comma", "nested too deeply", "NaN", "not UTF-8", "empty", "a form"],
)
def test_a_body_that_is_not_json_is_refused_not_a_server_error(
    as_alice: Client, alice: Any, project: Project, raw: bytes, content_type: str, status: int, code: str
) -> None:
    item = leased(as_alice, project)

    response = as_alice.put(
        item_url(project, item["tree"]["id"], "draft"), data=raw, content_type=content_type
    )

    assert response.status_code == status
    assert response.json()["code"] == code
    assert response.json()["message"]
    assert stored(project, alice) == (1, {})


# Who may do what


def test_an_item_held_by_someone_else_is_not_theirs_to_read_or_write(
    as_alice: Client, bob: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    as_bob = client_for(bob)

    for response in (
        as_bob.get(item_url(project, item["tree"]["id"])),
        put_draft(as_bob, item_url(project, item["tree"]["id"], "draft"), {"annotations": {}, "version": 1}),
        post_json(as_bob, item_url(project, item["tree"]["id"], "submit"), {"annotations": {}, "version": 1}),
        post_json(as_bob, item_url(project, item["tree"]["id"], "skip"), {"version": 1}),
    ):
        assert response.status_code == 403
        assert response.json() == {
            "code": "not_assigned",
            "message": "this item is not assigned to you; ask for the next item",
        }


def test_a_submitted_item_cannot_be_skipped(as_alice: Client, project: Project) -> None:
    item = leased(as_alice, project)
    post_json(as_alice, item_url(project, item["tree"]["id"], "submit"), {"annotations": {}, "version": 1})

    response = post_json(as_alice, item_url(project, item["tree"]["id"], "skip"), {"version": 2})

    assert response.status_code == 409
    assert response.json() == {"code": "already_submitted", "message": "you already submitted this item"}


def test_a_manager_who_does_not_annotate_gets_no_items_and_sees_no_ones_answers(
    as_alice: Client, maggie: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    as_maggie = client_for(maggie)

    refused = as_maggie.post(next_url(project))
    assert refused.status_code == 403
    assert refused.json() == {
        "code": "permission_denied",
        "message": "you are not an annotator in this project",
    }
    assert as_maggie.get(item_url(project, item["tree"]["id"])).json()["code"] == "not_assigned"
    assert (
        put_draft(
            as_maggie, item_url(project, item["tree"]["id"], "draft"), {"annotations": {}, "version": 1}
        ).status_code
        == 403
    )


def test_someone_outside_the_project_is_told_it_does_not_exist(
    as_alice: Client, charlie: Any, project: Project
) -> None:
    item = leased(as_alice, project)
    as_charlie = client_for(charlie)
    missing = {"code": "not_found", "message": "no such project"}

    assert as_charlie.post(next_url(project)).json() == missing
    assert as_charlie.get(item_url(project, item["tree"]["id"])).status_code == 404
    response = put_draft(
        as_charlie, item_url(project, item["tree"]["id"], "draft"), {"annotations": {}, "version": 1}
    )
    assert (response.status_code, response.json()) == (404, missing)


def test_anonymous_requests_are_refused(project: Project) -> None:
    tree_id = project.dataset.trees.get().pk
    anonymous = Client()

    for response in (
        anonymous.post(next_url(project)),
        anonymous.get(item_url(project, tree_id)),
        put_draft(anonymous, item_url(project, tree_id, "draft"), {"annotations": {}, "version": 1}),
        post_json(anonymous, item_url(project, tree_id, "submit"), {"annotations": {}, "version": 1}),
        post_json(anonymous, item_url(project, tree_id, "skip"), {"version": 1}),
    ):
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == 'Bearer realm="api"'
        assert response.json() == {
            "code": "not_authenticated",
            "message": "Authentication credentials were not provided.",
        }


def test_writes_need_the_csrf_token_of_the_session(alice: Any, project: Project) -> None:
    client = client_for(alice, enforce_csrf_checks=True)

    response = client.post(next_url(project))

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "CSRF" in response.json()["message"]
    assert not Assignment.objects.exists()


def test_unknown_items_and_endpoints_are_json_404s(as_alice: Client, project: Project) -> None:
    leased(as_alice, project)

    assert as_alice.get(item_url(project, 987654321)).json() == {
        "code": "not_found",
        "message": "no such item in this project",
    }
    assert as_alice.get("/api/v1/projects/support/items/99999999999999999999").json()["code"] == "not_found"
    assert as_alice.get("/api/v1/nothing/here").json() == {"code": "not_found", "message": "no such endpoint"}
    assert as_alice.delete(next_url(project)).json()["code"] == "method_not_allowed"


# Queries


@pytest.fixture(params=[4, 1000], ids=["4 nodes", "1000 nodes"])
def sized(request: pytest.FixtureRequest, alice: Any) -> tuple[Project, Client]:
    """Alice in a project whose one item has 4 or 1,000 messages, comparing branches too."""
    config = (
        "annotation_schemes:\n"
        "  - annotation_type: tree_annotation\n"
        "    name: judged\n"
        "    description: Judge the conversation\n"
        "    node_scheme: {annotation_type: likert, size: 5}\n"
        "    path_selection: {enabled: true}\n"
        "    branch_comparison: {enabled: true}\n"
        "  - {annotation_type: radio, name: verdict, description: Verdict, labels: [good, bad]}\n"
    )
    project = project_over(f"sized-{request.param}", config, [bushy_item("big", request.param)], [alice])
    return project, client_for(alice)


def answers_for(item: dict[str, Any]) -> dict[str, Any]:
    judged = item["annotations"]["judged"]
    judged |= {
        "node_annotations": {"n1": {"rating": 4}, "n2": {"rating": 2}},
        "selected_path": ["root", "n1"],
    }
    return {"judged": judged, "verdict": {"label": "good"}}


def test_next_item_costs_the_same_queries_whatever_the_trees_size(
    sized: tuple[Project, Client], django_assert_num_queries: Any
) -> None:
    project, client = sized

    with django_assert_num_queries(NEXT_ITEM_QUERIES):
        response = client.post(next_url(project))

    assert response.status_code == 200


def test_get_item_costs_the_same_queries_whatever_the_trees_size(
    sized: tuple[Project, Client], django_assert_num_queries: Any
) -> None:
    project, client = sized
    item = leased(client, project)

    with django_assert_num_queries(GET_ITEM_QUERIES):
        response = client.get(item_url(project, item["tree"]["id"]))

    assert len(response.json()["tree"]["messages"]) == len(item["tree"]["messages"])


def test_a_draft_save_costs_the_same_queries_whatever_the_trees_size(
    sized: tuple[Project, Client], django_assert_num_queries: Any
) -> None:
    project, client = sized
    item = leased(client, project)

    with django_assert_num_queries(DRAFT_QUERIES):
        response = put_draft(
            client,
            item_url(project, item["tree"]["id"], "draft"),
            {"annotations": answers_for(item), "version": 1},
        )

    assert response.status_code == 200, response.content


def test_a_submission_costs_the_same_queries_whatever_the_trees_size(
    sized: tuple[Project, Client], django_assert_num_queries: Any
) -> None:
    project, client = sized
    item = leased(client, project)

    with django_assert_num_queries(SUBMIT_QUERIES):
        response = post_json(
            client,
            item_url(project, item["tree"]["id"], "submit"),
            {"annotations": answers_for(item), "version": 1},
        )

    assert response.status_code == 200, response.content


def test_the_item_next_hands_out_is_the_one_the_services_chose(alice: Any, bob: Any) -> None:
    project = project_over(
        "two", RESPONSE_QUALITY, [SEED_ITEM, {**SEED_ITEM, "id": "conv_002"}], [alice, bob]
    )
    bobs = item_next(project=project, user=bob)

    item = leased(client_for(alice), project)

    assert item["tree"]["id"] != bobs.tree_id  # overlap 1: Bob's item is not handed out twice
    assert item["tree"]["external_id"] == "conv_002"
