"""``manage.py agreement PROJECT``: the project's agreement as a table, or as JSON for machines,
the same figures the page and the API show; unknown names are refused with exit code 2.

Ann, Ben and Cleo rate four items and compare their replies (imported, as from another tool).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evaluation.agreement.project import agreement_current
from tests.annotation.annotator_items import project_over
from tests.evaluation.agreement.test_project_agreement import imported, two_replies

pytestmark = pytest.mark.django_db

CONFIG = """
annotation_schemes:
  - {annotation_type: likert, name: quality, description: Quality, size: 5}
  - annotation_type: tree_annotation
    name: compare
    description: Compare
    branch_comparison: {enabled: true}
  - {annotation_type: text, name: note, description: Note}
"""
RATINGS = {"ann": [1, 2, 4, 5], "ben": [1, 3, 4, 5], "cleo": [2, 2, 4, 4]}
VERDICTS = {"ann": "Better", "ben": "Better", "cleo": "Better"}


@pytest.fixture
def project():
    project = project_over("rated", CONFIG, [two_replies(f"item-{index}") for index in range(4)])
    imported(
        project,
        [
            {
                "id": f"item-{index}",
                "user": name,
                "annotations": {
                    "quality": {"rating": rating},
                    "compare": {
                        "branch_comparisons": {
                            "q": {
                                "shown_order": ["r1", "r2"],
                                "pairs": [{"a": "r1", "b": "r2", "label": VERDICTS[name]}],
                            }
                        }
                    },
                    "note": {"text": "fine"},
                },
            }
            for name, ratings in RATINGS.items()
            for index, rating in enumerate(ratings)
        ],
    )
    return project


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("agreement", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def failure(*args: str) -> CommandError:
    with pytest.raises(CommandError) as caught:
        call_command("agreement", *args, stdout=io.StringIO(), stderr=io.StringIO())
    return caught.value


def test_json_gives_each_measure_value_or_null_with_reason_counts_and_each_pairs_kappa(project):
    figures = json.loads(run("rated", "--json"))

    assert figures == agreement_current(project).figures
    assert [scheme["scheme"] for scheme in figures["schemes"]] == ["quality", "compare", "note"]
    (rating,) = figures["schemes"][0]["fields"]
    assert (rating["n_items"], rating["n_annotators"]) == (4, 3)
    assert [(p["a"], p["b"], p["measure"]) for p in rating["pairs"]] == [
        ("ann", "ben", "Cohen's kappa (quadratic weights)"),
        ("ann", "cleo", "Cohen's kappa (quadratic weights)"),
        ("ben", "cleo", "Cohen's kappa (quadratic weights)"),
    ]
    assert all(isinstance(pair["value"], float) for pair in rating["pairs"])
    # Everyone said Better: no variation, so the chance-corrected measures have no value, and say why.
    (comparison,) = figures["schemes"][1]["fields"]
    fleiss = next(m for m in comparison["measures"] if m["measure"] == "Fleiss' kappa")
    assert fleiss["value"] is None
    assert fleiss["undefined_reason"] == "every rating is 'Better': no variation, so chance agreement is 1"
    assert figures["schemes"][2]["note"] == "free text: no agreement measure"


def test_the_table_lists_each_field_its_measures_and_the_pairs(project):
    figures = agreement_current(project).figures
    alpha = figures["schemes"][0]["fields"][0]["measures"][0]["shown"]
    kappa = figures["schemes"][0]["fields"][0]["pairs"][0]["shown"]

    lines = run("rated").splitlines()

    assert lines[0].startswith("Agreement in rated: 36 submitted answers by 3 annotators (computed ")
    assert "quality (likert): 12 answers" in lines
    assert "  rating (ordinal, per item): 4 items, 4 units, 3 annotators" in lines
    assert any(
        line.split() == ["Krippendorff's", "alpha", "(ordinal)", alpha, "4", "units", "3", "annotators"]
        for line in lines
    )
    assert "    Cohen's kappa (quadratic weights) per pair:" in lines
    assert any(line.split()[:5] == ["ann", "and", "ben", kappa, "4"] for line in lines)
    undefined = [line for line in lines if "Fleiss' kappa" in line]
    assert undefined and undefined[0].endswith(
        "(every rating is 'Better': no variation, so chance agreement is 1)"
    )
    assert "  free text: no agreement measure" in lines


def test_scheme_picks_one_scheme(project):
    figures = json.loads(run("rated", "--json", "--scheme", "compare"))

    assert [scheme["scheme"] for scheme in figures["schemes"]] == ["compare"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nowhere"], 'no project named "nowhere"'),
        (
            ["rated", "--scheme", "tone"],
            'project "rated" has no scheme named "tone" (its schemes: quality, compare, note)',
        ),
    ],
)
def test_unknown_projects_and_schemes_are_refused_with_exit_code_2(project, args, message):
    error = failure(*args)

    assert (error.returncode, str(error)) == (2, message)


def test_a_project_name_that_is_not_text_is_refused_with_exit_code_2(project):
    """A byte the locale cannot decode arrives as a lone surrogate, which PostgreSQL cannot be
    sent: looking it up was a traceback there."""
    error = failure("rat\udce9d")

    assert (error.returncode, str(error)) == (
        2,
        "project: contains a lone UTF-16 surrogate (\\udce9), which is not text and cannot be stored",
    )
