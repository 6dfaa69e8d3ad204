"""Two reviewers adjudicating one item at once, on PostgreSQL: the item's row lock makes them
take turns, so the later save is kept only if it saw the current version — otherwise it is
refused (StaleVersion, the API's 409) and the earlier answer stands."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from annotation.models import FinalAnswer, FinalAnswerRevision
from annotation.review.finals import final_save
from annotation.work.submissions import StaleVersion
from tests.annotation.review.adjudicated import adjudicated_project, all_submit, people

ROUNDS = 5


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_of_two_reviewers_saving_the_same_version_one_wins_and_the_other_is_told_to_reload():
    who = people()
    project = adjudicated_project(who)
    tree_id = all_submit(project, who)
    for round_ in range(ROUNDS):
        seen = round_  # both loaded the item at the same version
        start = threading.Barrier(2)
        outcomes: dict[str, str] = {}

        def adjudicate(
            name: str,
            annotator: str,
            seen: int = seen,
            start: threading.Barrier = start,
            outcomes: dict = outcomes,
        ) -> None:
            try:
                start.wait()
                final_save(project=project, tree_id=tree_id, by=who[name], version=seen, take=annotator)
                outcomes[name] = "saved"
            except StaleVersion as stale:
                outcomes[name] = f"stale at {stale.current}"
            finally:
                connection.close()

        threads = [
            threading.Thread(target=adjudicate, args=("rita", "alice")),
            threading.Thread(target=adjudicate, args=("maggie", "bob")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        assert sorted(outcomes.values()) == ["saved", f"stale at {round_ + 1}"]
        winner = next(name for name, outcome in outcomes.items() if outcome == "saved")
        final = FinalAnswer.objects.get(project=project, tree_id=tree_id)
        assert final.version == round_ + 1
        assert final.decided_by == who[winner]
    assert FinalAnswerRevision.objects.count() == ROUNDS
