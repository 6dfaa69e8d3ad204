"""The ranking backlog: real Open-Assistant trees imported into a collect project's
dataset wait in ``backlog_ranking``, are taken up for ranking, and are scored
from the rankings given here.

Dave and Erin rank; Alice writes prompts.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotation.collection.backlog import backlog_activate, backlog_add
from annotation.collection.models import CollectedTree, Task
from annotation.collection.submissions import task_submit
from annotation.collection.tasks import task_next
from tests.annotation.collection.collect import collect_project, person, prompt, review, state
from trees.models import ConversationTree, Message
from trees.services import tree_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    return [person(name) for name in ("alice", "bob", "carol", "dave", "erin")]


def imported(project, fixture_path) -> list[ConversationTree]:
    with fixture_path("oasst/en_10_trees.jsonl").open("rb") as source:
        assert tree_import(dataset=project.dataset, source=source, format_name="oasst").committed
    return list(ConversationTree.objects.filter(dataset=project.dataset).order_by("pk"))


def test_imported_trees_join_the_backlog_and_are_ranked_here(team, fixture_path):
    project = collect_project(team, num_required_rankings=1, p_activate_backlog_tree=0.0)
    trees = imported(project, fixture_path)

    assert backlog_add(project=project) == 10
    assert {tree.state for tree in ConversationTree.objects.filter(dataset=project.dataset)} == {
        "backlog_ranking"
    }
    assert CollectedTree.objects.filter(project=project, lang="en").count() == 10

    assert backlog_activate(project=project) == 1
    first = trees[0]
    assert state(first) == "ranking"
    root = Message.objects.get(tree=first, parent=None)
    task = task_next(project=project, user=team[3], task_type="rank_assistant_replies")
    assert (task.tree_id, task.message_id, len(task.payload["replies"])) == (first.pk, root.pk, 3)
    best_first = sorted(task.payload["replies"])
    task_submit(project=project, task_id=task.pk, user=team[3], data={"ranking": best_first})

    assert state(first) == "ready_for_export"
    ranks = dict(Message.objects.filter(tree=first, parent=root).values_list("external_id", "rank"))
    assert ranks == {reply: rank for rank, reply in enumerate(best_first)}


def test_a_tree_leaving_the_active_states_may_take_one_up(team, fixture_path):
    alice, bob, carol, *_ = team
    project = collect_project(team, p_activate_backlog_tree=1.0)
    trees = imported(project, fixture_path)
    backlog_add(project=project)

    root = prompt(project, alice)
    review(project, [bob, carol], root)  # accepted: its tree waits for the lottery (inactive)

    assert state(trees[0]) == "ranking"
    assert [state(tree) for tree in trees[1:]] == ["backlog_ranking"] * 9


def test_a_backlog_tree_with_nothing_to_rank_is_aborted(team):
    project = collect_project(team)
    lonely = ConversationTree.objects.create(dataset=project.dataset, external_id="lonely")
    Message.objects.create(tree=lonely, external_id="root", role="user", text="Hello?")
    backlog_add(project=project)

    assert backlog_activate(project=project) == 0
    assert state(lonely) == "aborted_low_grade"


def test_the_backlog_from_the_command_line(team, fixture_path, capsys):
    project = collect_project(team, p_activate_backlog_tree=0.0)
    imported(project, fixture_path)

    call_command("collect_backlog", project.name, "--add", "--activate", "2")

    assert capsys.readouterr().out == (
        f"{project.name}: 10 trees added to the ranking backlog\n{project.name}: 2 backlog trees moved to ranking\n"
    )
    assert Task.objects.count() == 0
