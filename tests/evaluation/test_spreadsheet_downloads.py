"""The rubric downloads people open in a spreadsheet (report.csv, results.csv) run no
formula, whatever the trees' ids, metadata and model names hold: such cells get a leading
``'`` (trees.formats.spreadsheet). The JSON downloads keep the values exact.

Dana manages the project; the trees came from someone who put formulas in them.
"""

from __future__ import annotations

import copy
import csv
import io
import json
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.models import Rubric
from evaluation.services import project_evaluate
from tests.annotation.annotator_items import person
from tests.evaluation.samples import CONVERSATIONS, scheduling_project

pytestmark = pytest.mark.django_db

FORMULAS = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-1+1", "@SUM(1,1)"]


@pytest.fixture
def dana() -> Any:
    return person("dana")


@pytest.fixture
def project(dana: Any) -> Any:
    """The scheduling sample, each tree's id, variant and model name a formula."""
    items = copy.deepcopy(CONVERSATIONS)
    for index, item in enumerate(items):
        formula = FORMULAS[index % len(FORMULAS)]
        item["id"] = f"{formula}#{index}"
        item["variant"] = formula
        node = item["tree"]
        while node:
            if node["role"] == "assistant":
                node["model_name"] = formula
            node = (node.get("children") or [None])[0]
    project = scheduling_project(items=items, managers=[dana])
    project_evaluate(project=project, rubric=Rubric.objects.get(name="scheduling"))
    return project


def download(user: Any, name: str, fmt: str, **params: str) -> str:
    client = Client()
    client.force_login(user)
    url = reverse(f"evaluation:{name}-download", args=["scheduling", "scheduling", fmt])
    response = client.get(url, params)
    assert response.status_code == 200
    return (b"".join(response.streaming_content) if response.streaming else response.content).decode()


def formula_cells(table: list[list[str]]) -> list[str]:
    return [cell for row in table for cell in row if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]


def test_report_csv_groups_named_by_formulas_are_text(project: Any, dana: Any) -> None:
    table = list(csv.reader(io.StringIO(download(dana, "report", "csv", group="metadata.variant"))))

    assert formula_cells(table) == []
    assert {row[0] for row in table[1:]} == {"", *("'" + formula for formula in FORMULAS)}


def test_results_csv_ids_and_model_names_are_text(project: Any, dana: Any) -> None:
    table = list(csv.DictReader(io.StringIO(download(dana, "results", "csv"))))

    assert formula_cells([list(row.values()) for row in table]) == []
    assert {row["id"][0] for row in table} == {"'"}
    assert {row["model_name"] for row in table} <= {"'" + formula for formula in FORMULAS}


def test_the_json_downloads_keep_the_values_exact(project: Any, dana: Any) -> None:
    report = json.loads(download(dana, "report", "json", group="metadata.variant"))
    results = [json.loads(line) for line in download(dana, "results", "jsonl").splitlines()]

    assert {group["group"] for group in report["groups"]} == set(FORMULAS)
    assert {line["id"].split("#")[0] for line in results} == set(FORMULAS)
