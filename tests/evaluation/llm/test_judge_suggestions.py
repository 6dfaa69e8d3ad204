"""A judge run's answers become a project's suggestions, end to end: the judge answers a
rubric through the chat server on 127.0.0.1, and Alice, annotating a project whose config
suggests that judge's answers before she answers, finds them on her annotate page, marked
as the judge's; her answer copied from them is marked so in the export.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotation.exports import annotations_export
from annotation.projects.services import project_config_update
from annotation.work.assignment import item_next
from annotation.work.submissions import item_submit
from evaluation.llm.judges import judge_create
from evaluation.llm.judging import judge_run
from tests.annotation.annotator_items import person
from tests.annotation.work.test_pages import item_page, page_data
from tests.evaluation.llm.judging_projects import rubric_project, rubric_reply

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_judge_runs_answers_are_suggested_to_annotators_and_exported_as_taken(chat_server, endpoint):
    from annotation.models import Membership
    from annotation.projects.services import membership_add

    alice = person("alice")
    project = rubric_project(items=1)
    membership_add(project=project, user=alice, role=Membership.Role.ANNOTATOR)
    judge = judge_create(name="helper", kind="rubric", endpoint=endpoint)
    chat_server.respond = lambda body: rubric_reply(helpful=True, polite=False)
    judge_run(judge=judge, project=project)
    project_config_update(
        project=project,
        config_yaml=project.config_yaml + "suggestions: {from: 'judge:helper', show: before}\n",
    )
    held = item_next(project=project, user=alice)
    client = Client()
    client.force_login(alice)

    data = page_data(client.get(item_page(project, held.tree_id)))
    [suggested] = data["suggestions"]["schemes"]
    item_submit(
        project=project,
        tree=held.tree_id,
        user=alice,
        answers={"review": suggested["payload"]},
        version=held.version,
        suggestions_taken=["review"],
    )
    records = {
        record["user"]: record
        for record in map(json.loads, annotations_export(project=project, format_name="potato"))
    }

    assert data["suggestions"]["judge"] == "helper"
    assert suggested["payload"]["criteria"] == {"helpful": True, "polite": False}
    assert records["alice"]["suggestions"] == {"review": "before_taken"}
    assert records["judge:helper"]["suggestions"] == {"review": "none"}
