"""The ``suggestions:`` section: a judge's answers shown to annotators before or after they
answer. Every mistake is an error naming its key and what is expected."""

from __future__ import annotations

import pytest

from annotation.problems import ProblemsError
from annotation.projects.config import parse_config, project_config
from annotation.projects.services import project_config_update
from tests.annotation.suggested import judge_made
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

SCHEMES = (
    "annotation_schemes:\n"
    "  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative]}\n"
)


def problems_of(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        parse_config(text)
    return [str(problem) for problem in error.value.problems]


def test_a_project_without_the_section_has_no_suggestions_and_its_stored_config_is_unchanged():
    config = parse_config(SCHEMES)

    assert not config.suggestions.enabled
    assert "suggestions" not in config.as_json()


@pytest.mark.parametrize("show", ["after", "before"])
def test_a_judge_and_when_to_show_it_are_read_and_stored(show):
    judge_made("rater")
    config = parse_config(SCHEMES + f"suggestions: {{from: 'judge:rater', show: {show}}}\n")

    assert (config.suggestions.source, config.suggestions.show) == ("judge:rater", show)
    assert config.as_json()["suggestions"] == {"from": "judge:rater", "show": show}


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("suggestions: judge:rater", "suggestions: must be a mapping with from (judge:NAME) and show"),
        (
            "suggestions: {show: after}",
            "suggestions.from: is required: the judge whose answers are suggested",
        ),
        ("suggestions: {from: alice, show: after}", 'suggestions.from: "alice" is not a judge\'s account'),
        (
            "suggestions: {from: 'judge:', show: after}",
            'suggestions.from: "judge:" is not a judge\'s account',
        ),
        ("suggestions: {from: 3, show: after}", "suggestions.from: a number is not a judge's account"),
        (
            "suggestions: {from: 'judge:rater'}",
            "suggestions.show: is required: after (shown once the annotator",
        ),
        (
            "suggestions: {from: 'judge:rater', show: during}",
            'suggestions.show: "during" is not one of after, before',
        ),
        ("suggestions: {from: 'judge:rater', show: after, when: now}", "suggestions.when: unknown key"),
    ],
)
def test_each_mistake_names_its_key_and_what_is_expected(section, expected):
    problems = problems_of(SCHEMES + section + "\n")

    assert any(problem.startswith(expected) for problem in problems), problems


def test_every_mistake_of_the_section_is_reported_at_once():
    problems = problems_of(SCHEMES + "suggestions: {from: bob, show: soon}\n")

    assert [problem.split(":")[0] for problem in problems] == ["suggestions.from", "suggestions.show"]


def test_a_collection_project_cannot_have_suggestions():
    problems = problems_of("workflow: {}\nsuggestions: {from: 'judge:rater', show: after}\n")

    assert problems == [
        "suggestions: applies to projects that annotate schemes, not to collection (workflow:) projects"
    ]


def test_a_judge_no_account_has_is_refused_naming_the_judges_there_are():
    judge_made("rater")
    judge_made("grader")

    assert problems_of(SCHEMES + "suggestions: {from: 'judge:ratr', show: after}\n") == [
        'suggestions.from: no judge has the account "judge:ratr" (judges: judge:grader, judge:rater)'
    ]


def test_with_no_judges_yet_the_error_says_to_make_one_first():
    UserFactory(username="alice")

    assert problems_of(SCHEMES + "suggestions: {from: 'judge:rater', show: before}\n") == [
        'suggestions.from: no judge has the account "judge:rater" '
        "(there are no judges yet: make one in the admin first)"
    ]


def test_a_saved_config_whose_judge_is_gone_still_reads_and_suggests_nothing_new():
    judge = judge_made("rater")
    project = ProjectFactory(config_yaml=SCHEMES)
    project_config_update(
        project=project, config_yaml=SCHEMES + "suggestions: {from: 'judge:rater', show: after}\n"
    )
    judge.user.username = "judge:renamed"
    judge.user.save()

    assert project_config(project).suggestions.source == "judge:rater"
