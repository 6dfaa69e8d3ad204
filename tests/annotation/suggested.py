"""A project with a judge's suggestions, for the suggestion tests (API, pages, browser, exports).

Plain functions, not fixtures. The judge is made as the admin makes one
(``evaluation.llm.judges.judge_create``, with an endpoint nothing calls); its answers are
written as the judge runner stores them: submitted annotations of its account.
"""

from __future__ import annotations

import itertools
from typing import Any

from annotation.models import Annotation, Project
from evaluation.llm.judges import judge_create
from evaluation.llm.models import Judge
from evaluation.llm.services import endpoint_create
from tests.annotation.annotator_items import project_over
from tests.factories import AnnotationFactory

SCHEMES = (
    "annotation_schemes:\n"
    "  - {annotation_type: radio, name: sentiment, description: 'How does the user feel?',"
    " labels: [positive, negative]}\n"
    "  - {annotation_type: likert, name: quality, description: 'How good is the reply?', size: 5,"
    " min_label: Poor, max_label: Excellent}\n"
)


def config_with(show: str | None, judge: str = "judge:rater") -> str:
    """The schemes, with suggestions from ``judge`` shown ``show`` (none when None)."""
    return SCHEMES if show is None else SCHEMES + f"suggestions: {{from: '{judge}', show: {show}}}\n"


def conversation(item_id: str, size: int = 2) -> dict[str, Any]:
    """A chain of ``size`` messages, user first."""
    nodes = [
        {"id": f"m{index}", "role": "user" if index % 2 == 0 else "assistant", "content": f"message {index}"}
        for index in range(size)
    ]
    for parent, child in itertools.pairwise(nodes):
        parent["children"] = [child]
    return {"id": item_id, "tree": nodes[0]}


def judge_made(name: str = "rater") -> Judge:
    endpoint = endpoint_create(
        name=f"{name}-endpoint", base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-x"
    )
    return judge_create(name=name, kind="rubric", endpoint=endpoint)


def judge_answers(judge: Judge, project: Project, tree_id: int, answers: dict[str, Any]) -> None:
    """The judge's submitted answers to an item, as the judge runner stores them."""
    for scheme, payload in answers.items():
        AnnotationFactory(
            project=project,
            tree_id=tree_id,
            user=judge.user,
            scheme=scheme,
            payload=payload,
            status=Annotation.Status.SUBMITTED,
            source=Annotation.Source.MODEL,
        )


def suggested_project(
    name: str, show: str | None, annotators: list[Any], items: int = 1, **roles: Any
) -> Project:
    return project_over(
        name, config_with(show), [conversation(f"c{i}") for i in range(items)], annotators, **roles
    )
