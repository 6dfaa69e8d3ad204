"""The ``quality:`` section of a project's YAML, and Potato's gold and training sections read as it."""

from __future__ import annotations

import pytest

from annotation.problems import ProblemsError
from annotation.projects.config import parse_config
from annotation.projects.quality_config import QualityConfig, TrainingConfig

SCHEMES = (
    "annotation_schemes:\n"
    "  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative]}\n"
    "  - {annotation_type: text, name: notes, description: Notes}\n"
)


def problems_of(text: str) -> list[str]:
    with pytest.raises(ProblemsError) as error:
        parse_config(SCHEMES + text)
    return [str(problem) for problem in error.value.problems]


def test_without_a_quality_section_there_are_no_gold_checks_and_no_training():
    quality = parse_config(SCHEMES).quality
    assert quality == QualityConfig()
    assert not quality.enabled


def test_our_quality_keys_are_read():
    config = parse_config(
        SCHEMES + "quality:\n"
        "  gold_rate: 0.2\n"
        "  min_accuracy: 0.8\n"
        "  min_gold_answers: 3\n"
        "  schemes: [sentiment]\n"
        "  training: {items: 4, pass_accuracy: 0.75, attempts: null}\n"
    )
    assert config.quality == QualityConfig(
        gold_rate=0.2,
        min_accuracy=0.8,
        min_gold_answers=3,
        schemes=("sentiment",),
        training=TrainingConfig(items=4, pass_accuracy=0.75, attempts=None),
    )
    assert config.as_json()["quality"]["training"] == {"items": 4, "pass_accuracy": 0.75, "attempts": None}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "quality: {gold_rate: 1}\n",
            "quality.gold_rate: must be a number from 0 up to (not including) 1, got 1",
        ),
        (
            "quality: {gold_rate: -0.1}\n",
            "quality.gold_rate: must be a number from 0 up to (not including) 1, got -0.1",
        ),
        (
            "quality: {min_accuracy: high}\n",
            "quality.min_accuracy: must be a number from 0 to 1, got a string",
        ),
        ("quality: {min_gold_answers: 0}\n", "quality.min_gold_answers: must be an integer ≥ 1"),
        (
            "quality: {schemes: [sentiment, tone]}\n",
            'quality.schemes[1]: no scheme named "tone" (expected one of sentiment, notes)',
        ),
        ("quality: {training: {items: -1}}\n", "quality.training.items: must be an integer ≥ 0"),
        (
            "quality: {training: {pass_accuracy: 2}}\n",
            "quality.training.pass_accuracy: must be a number from 0 to 1, got 2",
        ),
        (
            "quality: {training: {attempts: 0}}\n",
            "quality.training.attempts: must be an integer ≥ 1 (or null for no limit)",
        ),
        ("quality: {training: 3}\n", "quality.training: must be a mapping like {items: 3}, got a number"),
        ("quality: [gold]\n", "quality: must be a mapping, got a list"),
        ("quality: {gold_rat: 0.1}\n", 'quality.gold_rat: unknown key (did you mean "gold_rate"?)'),
        ("quality: {training: {item: 3}}\n", 'quality.training.item: unknown key (did you mean "items"?)'),
    ],
)
def test_bad_quality_settings_are_reported_with_their_key_path(text, expected):
    assert problems_of(text) == [expected]


def test_potatos_gold_standards_section_is_read_as_ours_and_noted():
    config = parse_config(
        SCHEMES + "gold_standards:\n"
        "  enabled: true\n"
        "  items_file: gold_standards.json\n"
        "  mode: mixed\n"
        "  frequency: 20\n"
        "  accuracy: {min_threshold: 0.7, evaluation_count: 10}\n"
        "  feedback: {show_correct_answer: false}\n"
    )
    assert (config.quality.gold_rate, config.quality.min_accuracy, config.quality.min_gold_answers) == (
        0.05,
        0.7,
        10,
    )
    assert config.ignored == ["gold_standards.feedback", "gold_standards.items_file"]
    assert "gold_standards.frequency: read as quality.gold_rate 1/20" in config.notes


def test_potatos_training_section_is_read_as_a_round_that_must_all_be_right():
    config = parse_config(
        SCHEMES + "training:\n"
        "  enabled: true\n"
        "  data_file: training_data.json\n"
        "  annotation_schemes: [sentiment]\n"
        "  passing_criteria: {min_correct: 3, require_all_correct: false, max_mistakes: 5}\n"
        "  allow_retry: true\n"
        "  failure_action: repeat_training\n"
    )
    assert config.quality.training == TrainingConfig(items=3, pass_accuracy=1.0, attempts=None)
    assert config.quality.schemes == ("sentiment",)
    assert set(config.ignored) == {
        "training.data_file",
        "training.allow_retry",
        "training.passing_criteria.max_mistakes",
    }
    assert (
        "training: read as quality.training: 3 gold items, all answered right, in any number of attempts"
        in config.notes
    )


def test_potatos_training_that_ends_the_task_on_failure_allows_one_attempt():
    config = parse_config(SCHEMES + "training: {enabled: true, passing_criteria: {min_correct: 2}}\n")
    assert config.quality.training == TrainingConfig(items=2, pass_accuracy=1.0, attempts=1)


def test_a_disabled_potato_training_section_is_no_training():
    assert not parse_config(SCHEMES + "training: {enabled: false}\n").quality.training.enabled


def test_our_quality_keys_win_over_potatos():
    config = parse_config(
        SCHEMES
        + "gold_standards: {frequency: 10}\n"
        + "training: {enabled: true, passing_criteria: {min_correct: 5}}\n"
        + "quality: {gold_rate: 0.25, training: {pass_accuracy: 0.6}}\n"
    )
    assert config.quality.gold_rate == 0.25
    assert config.quality.training == TrainingConfig(items=5, pass_accuracy=0.6, attempts=1)


def test_potatos_sections_report_their_own_mistakes_with_their_paths():
    assert problems_of("gold_standards: {frequency: 1}\n") == [
        "gold_standards.frequency: must be an integer ≥ 2"
    ]
    assert problems_of("training: {enabled: true, failure_action: retry}\n") == [
        "training.failure_action: must be move_to_done or repeat_training, got a string"
    ]
