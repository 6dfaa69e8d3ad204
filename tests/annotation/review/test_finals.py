"""Adjudication: an item's final answer, made by a reviewer or manager from its annotators' answers.

Alice and Carol agree on everything but the item-level rating; Bob differs on
resp_a's rating, the path and the comparison. Rita (reviewer) and Maggie
(manager) adjudicate; Alice (annotator) and Olga (no member) may not. A save
names the version it saw (0 before the first); fields the annotators disagree
on must be settled; the answer is checked by the schemes; each version is
kept, audited and announced once committed.
"""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation.models import FinalAnswer, FinalAnswerRevision, ProjectItem
from annotation.problems import ProblemsError
from annotation.review.adjudication import adjudication_item, adjudication_queue
from annotation.review.finals import final_save, finals_auto, gold_from_finals
from annotation.review.services import ReviewRefused
from annotation.review.signals import item_finalised
from annotation.work.submissions import StaleVersion
from tests.annotation.annotator_items import person
from tests.annotation.review.adjudicated import ANSWERS, AUTO, adjudicated_project, all_submit, people
from trees.audit import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture
def who():
    return people()


@pytest.fixture
def project(who):
    return adjudicated_project(who)


def problems_of(**kwargs) -> dict[str, str]:
    with pytest.raises(ProblemsError) as refused:
        final_save(**kwargs)
    return {problem.path: problem.code for problem in refused.value.problems}


def without_orders(answers):
    """Answers as compared: a comparison's shown order is the annotator's random one."""
    response = answers["response"]
    comparisons = {
        parent: {key: value for key, value in comparison.items() if key != "shown_order"}
        for parent, comparison in response.get("branch_comparisons", {}).items()
    }
    return {**answers, "response": {**response, "branch_comparisons": comparisons}}


def test_taking_one_annotators_answer_whole_makes_it_the_final_answer(project, who):
    tree_id = all_submit(project, who)

    final = final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="bob")

    assert final.version == 1
    assert without_orders(final.answers) == ANSWERS["bob"]
    assert set(final.provenance.values()) == {"bob"}
    assert final.decided_by == who["rita"]


def test_fields_taken_from_different_annotators_make_one_answer_that_says_where_each_came_from(project, who):
    tree_id = all_submit(project, who)
    choices = {
        "overall": {"from": "carol"},
        "response/node/resp_a": {"from": "bob"},
        "response/path": {"from": "alice"},
        "response/comparison/root": {"from": "bob"},
    }

    final = final_save(project=project, tree_id=tree_id, by=who["maggie"], version=0, choices=choices)

    assert final.answers["overall"] == {"label": "Unhelpful"}
    assert final.answers["response"]["node_annotations"] == {"resp_a": {"rating": 5}, "resp_b": {"rating": 2}}
    assert final.answers["response"]["selected_path"] == ["root", "resp_a", "user_2"]
    assert final.answers["response"]["branch_comparisons"]["root"]["pairs"][0]["label"] == "Worse"
    assert final.provenance == {
        "overall": "carol",
        "response/node/resp_a": "bob",
        "response/path": "alice",
        "response/comparison/root": "bob",
        "response/node/resp_b": "alice",  # everyone agreed: prefilled from the first of them
    }


def test_an_edited_field_is_checked_by_its_scheme_and_marked_edited(project, who):
    tree_id = all_submit(project, who)
    choices = {
        "overall": {"value": {"label": "Helpful"}},
        "response/node/resp_a": {"value": {"rating": 3}},
        "response/path": {"value": ["root", "resp_b"]},
        "response/comparison/root": {"value": {"pairs": [{"a": "resp_a", "b": "resp_b", "label": "Same"}]}},
    }

    final = final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, choices=choices)

    assert final.answers["response"]["node_annotations"]["resp_a"] == {"rating": 3}
    assert final.answers["response"]["branch_comparisons"]["root"]["shown_order"] == ["resp_a", "resp_b"]
    assert final.provenance["response/node/resp_a"] == "edited"
    refused = problems_of(
        project=project,
        tree_id=tree_id,
        by=who["rita"],
        version=1,
        choices={**choices, "response/node/resp_a": {"value": {"rating": 9}}},
    )
    assert "response.node_annotations.resp_a.rating" in refused


def test_fields_the_annotators_disagree_on_must_be_settled_each_named(project, who):
    tree_id = all_submit(project, who)

    refused = problems_of(project=project, tree_id=tree_id, by=who["rita"], version=0, choices={})

    assert refused == {
        "fields.overall": "undecided",
        "fields.response/node/resp_a": "undecided",
        "fields.response/path": "undecided",
        "fields.response/comparison/root": "undecided",
    }
    assert not FinalAnswer.objects.exists()


def test_choices_naming_nobody_or_nothing_are_refused_at_their_field(project, who):
    tree_id = all_submit(project, who)

    refused = problems_of(
        project=project,
        tree_id=tree_id,
        by=who["rita"],
        version=0,
        take="olga",
        choices={"nope": {"from": "alice"}, "overall": {"pick": "alice"}, "response/path": {"from": "olga"}},
    )

    assert refused["take"] == "unknown_annotator"
    assert refused["fields.nope"] == "unknown_scheme"
    assert refused["fields.overall"] == "invalid"
    assert refused["fields.response/path.from"] == "unknown_annotator"


def test_only_reviewers_and_managers_adjudicate(project, who):
    tree_id = all_submit(project, who)

    for name in ("alice", "olga"):
        with pytest.raises(ReviewRefused) as refused:
            final_save(project=project, tree_id=tree_id, by=who[name], version=0, take="bob")
        assert refused.value.code == "forbidden"


def test_a_save_based_on_an_older_version_is_refused_and_history_is_kept(project, who):
    tree_id = all_submit(project, who)
    final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="alice")

    with pytest.raises(StaleVersion) as stale:
        final_save(project=project, tree_id=tree_id, by=who["maggie"], version=0, take="bob")
    assert stale.value.current == 1

    final = final_save(project=project, tree_id=tree_id, by=who["maggie"], version=1, take="bob")
    assert final.version == 2
    assert list(FinalAnswerRevision.objects.values_list("version", "decided_by__username")) == [
        (1, "rita"),
        (2, "maggie"),
    ]
    entries = AuditEntry.objects.filter(action="final.save").order_by("pk")
    assert [(entry.actor_name, entry.details["version"]) for entry in entries] == [("rita", 1), ("maggie", 2)]


def test_a_saved_final_answer_is_announced_once_committed(project, who, django_capture_on_commit_callbacks):
    tree_id = all_submit(project, who)
    heard = []
    item_finalised.connect(
        lambda sender, **kwargs: heard.append((sender, kwargs)), weak=False, dispatch_uid="t"
    )
    try:
        with django_capture_on_commit_callbacks(execute=True):
            final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="alice")
    finally:
        item_finalised.disconnect(dispatch_uid="t")

    assert heard == [
        (project, {"signal": item_finalised, "tree_id": "conv_001", "version": 1, "by": who["rita"]})
    ]


def test_the_page_and_the_api_see_agreement_first_prefilled_and_disagreements_listed_first(project, who):
    tree_id = all_submit(project, who)

    item = adjudication_item(project=project, tree_id=tree_id)

    assert item.annotators == ["alice", "bob", "carol"]
    assert [vote.name for vote in item.disagreements] == [
        "response/node/resp_a",
        "response/path",
        "response/comparison/root",
        "overall",
    ]
    assert item.votes[-1].name == "response/node/resp_b" and item.votes[-1].agreed
    assert item.prefill.fields == {"response/node/resp_b": {"rating": 2}}
    assert item.version == 0


def test_the_automatic_rule_finalises_items_whose_every_field_reaches_the_majority(who):
    project = adjudicated_project(who, extra=AUTO)
    tree_id = all_submit(project, who)  # 2 of 3 agree on every field: 0.67

    assert finals_auto(project=project) == [tree_id]

    final = FinalAnswer.objects.get(project=project, tree_id=tree_id)
    assert final.decided_by is None
    assert set(final.provenance.values()) == {"auto:majority"}
    assert final.answers["overall"] == {"label": "Helpful"}
    assert final.answers["response"]["node_annotations"]["resp_a"] == {"rating": 4}
    assert finals_auto(project=project) == []  # final already: left alone
    assert AuditEntry.objects.filter(action="final.auto").count() == 1


def test_the_automatic_rule_runs_as_an_items_submissions_complete(who, django_capture_on_commit_callbacks):
    project = adjudicated_project(who, extra=AUTO)

    with django_capture_on_commit_callbacks(execute=True):
        tree_id = all_submit(project, who, ("alice", "bob"))
    assert not FinalAnswer.objects.exists()  # two of three submitted: not complete
    with django_capture_on_commit_callbacks(execute=True):
        all_submit(project, who, ("carol",))

    assert FinalAnswer.objects.get(project=project).tree_id == tree_id


def test_items_short_of_the_majority_wait_for_a_person_with_the_majority_prefilled(who):
    project = adjudicated_project(
        who, extra="quality: {adjudication: {auto: majority, min_agreement: 0.9}}\n"
    )
    tree_id = all_submit(project, who)

    assert finals_auto(project=project) == []
    assert [row.tree_id for row in adjudication_queue(project=project)[0]] == [tree_id]
    item = adjudication_item(project=project, tree_id=tree_id)
    assert "overall" in item.prefill.undecided


def test_without_the_rule_nothing_is_final_without_a_person(project, who):
    all_submit(project, who)

    assert finals_auto(project=project) == []


def test_gold_items_are_made_from_final_answers_in_one_action(project, who):
    tree_id = all_submit(project, who)
    final = final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="carol")

    assert gold_from_finals(project=project) == 1

    item = ProjectItem.objects.get(project=project, tree_id=tree_id)
    assert item.is_gold
    assert item.gold_answers == final.answers
    assert adjudication_queue(project=project) == ([], False)


def test_adjudicate_auto_runs_the_rule_over_existing_data_and_refuses_a_project_without_it(who):
    project = adjudicated_project(who, extra=AUTO)
    all_submit(project, who)  # on_commit never ran here: as data from before the rule was set
    out = io.StringIO()

    call_command("adjudicate_auto", project.name, stdout=out)

    assert out.getvalue().strip() == "made 1 item of adjudicated final by the majority rule"
    plain = adjudicated_project(who, name="plain")
    for name in (plain.name, "nope"):
        with pytest.raises(CommandError) as refused:
            call_command("adjudicate_auto", name)
        assert refused.value.returncode == 2


def test_the_admin_makes_gold_from_final_answers_of_the_selected_items(project, who):
    tree_id = all_submit(project, who)
    final_save(project=project, tree_id=tree_id, by=who["rita"], version=0, take="carol")
    root = person("root", is_superuser=True, is_staff=True)
    client = Client()
    client.force_login(root)
    every = [str(pk) for pk in ProjectItem.objects.filter(project=project).values_list("pk", flat=True)]

    response = client.post(
        reverse("admin:annotation_projectitem_changelist"),
        {"action": "gold_from_finals", "_selected_action": every},
        follow=True,
    )

    assert [str(message) for message in response.context["messages"]] == [
        "1 item made gold from their final answers."
    ]
    assert ProjectItem.objects.get(project=project, tree_id=tree_id).is_gold
