"""``quality.adjudication``: the automatic rule for final answers, and the agreement it needs."""

from __future__ import annotations

import pytest

from annotation.problems import ProblemsError
from annotation.projects.config import parse_config
from annotation.projects.quality_config import AdjudicationConfig

SCHEMES = "annotation_schemes:\n  - {annotation_type: radio, name: sentiment, description: Sentiment, labels: [positive, negative]}\n"


def test_without_the_key_every_final_answer_is_a_persons():
    adjudication = parse_config(SCHEMES).quality.adjudication

    assert adjudication == AdjudicationConfig(auto=None, min_agreement=0.67)
    assert not adjudication.enabled


def test_the_documented_rule_is_read():
    config = parse_config(SCHEMES + "quality: {adjudication: {auto: majority, min_agreement: 0.75}}\n")

    assert config.quality.adjudication == AdjudicationConfig(auto="majority", min_agreement=0.75)
    assert config.as_json()["quality"]["adjudication"] == {"auto": "majority", "min_agreement": 0.75}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "quality: {adjudication: {auto: vote}}\n",
            'quality.adjudication.auto: must be "majority" or null, got "vote"',
        ),
        (
            "quality: {adjudication: {auto: majority, min_agreement: 0.5}}\n",
            "quality.adjudication.min_agreement: must be more than 0.5 (a majority), got 0.5",
        ),
        (
            "quality: {adjudication: {min_agreement: 2}}\n",
            "quality.adjudication.min_agreement: must be a number from 0 to 1, got 2",
        ),
        (
            "quality: {adjudication: majority}\n",
            "quality.adjudication: must be a mapping like {auto: majority}, got a string",
        ),
    ],
)
def test_a_wrong_rule_is_refused_at_its_key(text, expected):
    with pytest.raises(ProblemsError) as error:
        parse_config(SCHEMES + text)

    assert expected in [str(problem) for problem in error.value.problems]
