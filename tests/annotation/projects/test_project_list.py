"""The projects list says where each person stands in each project.

- Annotation projects: to do, drafts, sent back, submitted and accepted — a reviewer's
  rejection shows at once as "sent back", highlighted, and leaves "submitted".
- Collection projects: the person's done tasks by type and the trees the project has grown,
  never "0 of 0 submitted".
- The list costs the same queries for any number of projects (one more per kind of project
  present that has a summary of its own).

Alice annotates, Rita reviews.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotation.review.services import review_decide
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from tests.annotation.annotator_items import RESPONSE_QUALITY, SEED_ITEM, person, project_over
from tests.annotation.collection.collect import collect_project, prompt, review

pytestmark = pytest.mark.django_db

# Session, user, projects, the user's assignments by project, items by project, roles.
ANNOTATE_ONLY = 6
# ... and for collection projects: the user's done tasks by type, the trees by state.
WITH_COLLECTION = ANNOTATE_ONLY + 2


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def items(count: int) -> list[dict[str, Any]]:
    return [{**SEED_ITEM, "id": f"conv_{n:03d}"} for n in range(count)]


def submit_next(project: Any, user: Any) -> Any:
    held = item_next(project=project, user=user)
    item_submit(project=project, tree=held.tree, user=user, answers={}, version=held.version)
    held.refresh_from_db()
    return held


def shown_counts(html: str, project: str) -> dict[str, int]:
    import re

    row = html.split(f'data-project="{project}"', 1)[1].split("</tr>", 1)[0]
    return {
        name: int(count) for name, count in re.findall(r'data-count="([a-z-]+)"[^>]*>\s*<strong>(\d+)', row)
    }


def test_annotation_projects_show_to_do_drafts_sent_back_submitted_and_accepted() -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over("support", RESPONSE_QUALITY, items(6), [alice], reviewers=[rita])
    accepted = submit_next(project, alice)
    rejected = submit_next(project, alice)
    submit_next(project, alice)
    item_next(project=project, user=alice)  # held, not submitted: a draft
    review_decide(
        assignment=accepted, reviewer=rita, decision="accepted", comment="", version=accepted.version
    )
    review_decide(
        assignment=rejected,
        reviewer=rita,
        decision="rejected",
        comment="Rate the reply too.",
        version=rejected.version,
    )

    response = client_for(alice).get(reverse("annotation:projects"))

    counts = shown_counts(response.content.decode(), "support")
    assert counts == {"to-do": 2, "drafts": 1, "sent-back": 1, "submitted": 2, "accepted": 1}
    [row] = response.context["rows"]
    assert row.progress.submitted == 2


def test_sent_back_work_is_highlighted_in_the_list() -> None:
    alice, rita = person("alice"), person("rita")
    project = project_over("support", RESPONSE_QUALITY, items(2), [alice], reviewers=[rita])
    project_over("calm", RESPONSE_QUALITY, items(2), [alice])
    done = submit_next(project, alice)
    review_decide(assignment=done, reviewer=rita, decision="rejected", comment="Redo.", version=done.version)

    html = client_for(alice).get(reverse("annotation:projects")).content.decode()

    assert 'data-project="support" class="has-sent-back"' in html
    assert 'data-project="calm">' in html
    assert "1</strong> sent back for changes" in html


def test_collection_projects_show_tasks_done_by_type_and_trees_grown() -> None:
    alice, bob = person("alice"), person("bob")
    project = collect_project([alice, bob], max_active_trees=2, max_initial_prompt_review=1)
    first = prompt(project, alice)
    prompt(project, alice, "What is a monad?")
    review(project, [bob], first)

    html = client_for(alice).get(reverse("annotation:projects")).content.decode()

    counts = shown_counts(html, project.name)
    assert counts == {
        "prompts-written": 2,
        "replies-written": 0,
        "prompts-reviewed": 0,
        "replies-reviewed": 0,
        "rankings": 0,
    }
    assert "2 trees grown, 0 ready for export" in html
    assert "of 0 submitted" not in html
    assert (
        shown_counts(client_for(bob).get(reverse("annotation:projects")).content.decode(), project.name)[
            "prompts-reviewed"
        ]
        == 1
    )


def test_the_list_costs_the_same_queries_for_any_number_of_projects_of_either_kind(
    django_assert_num_queries: Any,
) -> None:
    alice, bob = person("alice"), person("bob")
    project_over("first", RESPONSE_QUALITY, items(1), [alice])
    client = client_for(alice)
    with django_assert_num_queries(ANNOTATE_ONLY):
        client.get(reverse("annotation:projects"))

    grown = collect_project([alice, bob], max_active_trees=2, max_initial_prompt_review=1)
    with django_assert_num_queries(WITH_COLLECTION):
        client.get(reverse("annotation:projects"))

    for index in range(3):
        project_over(f"more-{index}", RESPONSE_QUALITY, items(2), [alice])
        other = collect_project([alice, bob], max_active_trees=2, max_initial_prompt_review=1)
        reply_to = prompt(other, alice)
        review(other, [bob], reply_to)
    prompt(grown, alice)
    with django_assert_num_queries(WITH_COLLECTION):
        response = client.get(reverse("annotation:projects"))
    assert len(response.context["rows"]) == 8
