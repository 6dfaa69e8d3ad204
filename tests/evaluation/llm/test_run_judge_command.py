"""``manage.py run_judge``: the run here and now, what it did on standard output, each
question that failed on standard error; unknown names and refused runs exit with 2."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Annotation
from evaluation.llm.judges import judge_create
from evaluation.llm.services import endpoint_update
from tests.evaluation.llm.judging_projects import rubric_project, rubric_reply

pytestmark = pytest.mark.django_db(transaction=True)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("run_judge", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_runs_the_judge_and_says_what_it_did(chat_server, endpoint):
    endpoint_update(endpoint=endpoint, changes={"max_concurrency": 1})  # the items in order
    project = rubric_project(items=2)
    judge_create(name="helper", kind="rubric", endpoint=endpoint, max_attempts=1)
    chat_server.script(rubric_reply(), "no idea")

    out, err = run("helper", project.name, "--max-tokens", "1000")

    assert out.startswith("judge helper on rubrics: 2 of 2 items judged (0 partly, 1 failed")
    assert "conv_1/review/conversation: not JSON" in err
    assert Annotation.objects.filter(user__username="judge:helper").count() == 1

    again, _ = run("helper", project.name)
    assert "1 already judged" in again


def test_unknown_names_and_refused_runs_exit_with_2(chat_server, endpoint):
    project = rubric_project(items=1)
    judge_create(name="pairs", kind="comparison", endpoint=endpoint)

    for args, said in (
        (("nobody", project.name), 'no judge named "nobody"'),
        (("pairs", "nowhere"), 'no project named "nowhere"'),
        (("pairs", project.name), "tree_annotation scheme"),
        (("pairs", project.name, "--max-cost", "lots"), "--max-cost: not a number"),
    ):
        with pytest.raises(CommandError, match=said) as raised:
            run(*args)
        assert raised.value.returncode == 2
    assert chat_server.chats == []
