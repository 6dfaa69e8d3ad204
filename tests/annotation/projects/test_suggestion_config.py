"""The ``suggestions:`` section: a judge's answers shown to annotators before or after they
answer. Every mistake is an error naming its key and what is expected."""

from __future__ import annotations

import pytest

from annotation.problems import ProblemsError
from annotation.projects.config import parse_config

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
