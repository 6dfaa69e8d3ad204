"""The adjudication pages: the items to adjudicate, and one item's final answer as a form.

Rita (reviewer) opens conv_001: a fieldset per field, disagreements first and
marked, agreed fields prefilled. She saves by field, by whole answer or with an
edit; a field left undecided or an edit that is not JSON is shown at its
field (400); a save on an older version is a 409 with a reload link. Alice
(annotator) is refused. Maggie (manager) makes gold from the finals. The item
page reads a constant number of queries.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import FinalAnswer, ProjectItem
from annotation.review.finals import final_save
from tests.annotation.review.adjudicated import adjudicated_project, all_submit, people

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene():
    who = people()
    project = adjudicated_project(who)
    tree_id = all_submit(project, who)
    return who, project, tree_id


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_url(project, tree_id) -> str:
    return reverse("annotation:adjudicate-item", kwargs={"name": project.name, "tree_id": tree_id})


def form(response) -> dict[str, str]:
    """The form as the page draws it: the checked radios, the edits, the version."""
    rows = response.context["rows"]
    data = {"version": str(response.context["version"])}
    for row in rows:
        checked = [option.value for option in row.options if option.checked]
        if checked:
            data[f"choice-{row.index}"] = checked[0]
        data[f"edit-{row.index}"] = row.edit_text
    return data


def index_of(response, field: str) -> int:
    return next(row.index for row in response.context["rows"] if row.name == field)


def test_the_page_lists_disagreements_first_marked_and_prefills_agreement(scene, django_assert_num_queries):
    who, project, tree_id = scene
    client = client_of(who["rita"])
    client.get(page_url(project, tree_id))  # the session's first read of the user

    # three to know the user and the project, then the tree, the answers, the final, the messages
    with django_assert_num_queries(7):
        response = client.get(page_url(project, tree_id))

    assert response.status_code == 200
    rows = response.context["rows"]
    assert [(row.name, row.agreed) for row in rows] == [
        ("response/node/resp_a", False),
        ("response/path", False),
        ("response/comparison/root", False),
        ("overall", False),
        ("response/node/resp_b", True),
    ]
    assert [option.checked for option in rows[-1].options] == [True, False, False]
    assert rows[0].message == "assistant: I'd be happy to help! Can you provide your order number?"
    assert rows[2].message.startswith("user: ")  # the decision point compared
    assert not any(option.checked for option in rows[0].options)
    html = response.content.decode()
    assert html.count("data-differ") == 4
    assert "4 fields where the annotators disagree" in html


def test_a_reviewer_saves_the_final_answer_field_by_field_with_an_edit(scene):
    who, project, tree_id = scene
    client = client_of(who["rita"])
    data = form(client.get(page_url(project, tree_id)))
    response = client.get(page_url(project, tree_id))
    data[f"choice-{index_of(response, 'response/node/resp_a')}"] = "bob"
    data[f"choice-{index_of(response, 'response/path')}"] = "alice"
    data[f"choice-{index_of(response, 'response/comparison/root')}"] = "carol"
    overall = index_of(response, "overall")
    data[f"choice-{overall}"], data[f"edit-{overall}"] = "__edit__", '{"label": "Unhelpful"}'

    saved = client.post(page_url(project, tree_id), data)

    assert saved.status_code == 302
    final = FinalAnswer.objects.get(project=project)
    assert final.provenance["overall"] == "edited"
    assert final.provenance["response/node/resp_a"] == "bob"
    assert final.answers["response"]["node_annotations"]["resp_a"] == {"rating": 5}
    again = client.get(page_url(project, tree_id))
    assert "Final answer version 1, by rita" in again.content.decode()
    assert [option.value for option in again.context["rows"][0].options if option.checked] == ["bob"]


def test_taking_a_whole_answer_is_one_button(scene):
    who, project, tree_id = scene

    saved = client_of(who["maggie"]).post(page_url(project, tree_id), {"version": "0", "take": "carol"})

    assert saved.status_code == 302
    assert set(FinalAnswer.objects.get(project=project).provenance.values()) == {"carol"}


def test_undecided_fields_and_unreadable_edits_are_shown_at_their_field(scene):
    who, project, tree_id = scene
    client = client_of(who["rita"])
    response = client.get(page_url(project, tree_id))
    data = form(response)
    overall = index_of(response, "overall")
    data[f"choice-{overall}"], data[f"edit-{overall}"] = "__edit__", "Helpful"

    refused = client.post(page_url(project, tree_id), data)

    assert refused.status_code == 400
    problems = {row.name: row.problem for row in refused.context["rows"] if row.problem}
    assert problems == {"overall": "The edited value is not JSON (a string needs its quotes)."}
    data[f"edit-{overall}"] = '{"label": "Helpful"}'
    refused = client.post(page_url(project, tree_id), data)
    problems = {row.name: row.problem for row in refused.context["rows"] if row.problem}
    assert set(problems) == {"response/node/resp_a", "response/path", "response/comparison/root"}
    assert "disagree" in problems["response/path"]
    assert refused.context["rows"][index_of(refused, "overall")].edit_checked  # what was chosen is kept
    assert not FinalAnswer.objects.exists()


def test_a_save_on_an_older_version_is_a_409_with_a_reload_link(scene):
    who, project, tree_id = scene
    final_save(project=project, tree_id=tree_id, by=who["maggie"], version=0, take="bob")

    stale = client_of(who["rita"]).post(page_url(project, tree_id), {"version": "0", "take": "alice"})

    assert stale.status_code == 409
    assert "data-reload" in stale.content.decode()
    assert FinalAnswer.objects.get(project=project).decided_by == who["maggie"]


def test_annotators_are_refused_the_pages(scene):
    who, project, tree_id = scene
    client = client_of(who["alice"])

    assert client.get(page_url(project, tree_id)).status_code == 403
    assert client.post(page_url(project, tree_id), {"version": "0", "take": "alice"}).status_code == 403
    assert client.get(reverse("annotation:adjudication", kwargs={"name": project.name})).status_code == 403


def test_the_queue_lists_items_without_a_final_and_managers_make_gold_from_finals(scene):
    who, project, tree_id = scene
    queue_url = reverse("annotation:adjudication", kwargs={"name": project.name})
    listed = client_of(who["rita"]).get(queue_url)
    assert 'data-item="conv_001"' in listed.content.decode()
    assert "data-gold-from-finals" not in listed.content.decode()  # a reviewer's view
    assert client_of(who["rita"]).post(queue_url).status_code == 403
    final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="alice")

    made = client_of(who["maggie"]).post(queue_url, follow=True)

    assert "Made 1 item gold from their final answers." in made.content.decode()
    assert ProjectItem.objects.get(project=project, tree_id=tree_id).is_gold
