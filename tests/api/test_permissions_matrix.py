"""Who may call what: every operation of the schema, for every persona, with the status it
must answer — and no answer shows anyone another project's trees or another annotator's
answers.

Personas (tests/api/world.py): a superuser; alpha's manager, annotator and reviewer;
beta's annotator; delta's manager, whose project shares beta's dataset; anonymous; a
revoked token. Each request runs in a savepoint rolled
back after it, so every persona meets the same world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator

from tests.api.conftest import token_client
from tests.api.world import (
    ALPHA_MARK,
    ANNOTATOR,
    ANONYMOUS,
    BETA_MARK,
    MANAGER,
    OTHER_MARK,
    OUTSIDER,
    PERSONAS,
    REVIEWER,
    REVOKED,
    SHARER,
    SUPERUSER,
    World,
)

pytestmark = pytest.mark.django_db

SHORT = {
    "S": SUPERUSER,
    "M": MANAGER,
    "A": ANNOTATOR,
    "R": REVIEWER,
    "B": OUTSIDER,
    "D": SHARER,
    "N": ANONYMOUS,
}

# What each persona must never read, wherever it looks.
FORBIDDEN = {
    SUPERUSER: (),
    MANAGER: (BETA_MARK,),
    REVIEWER: (BETA_MARK,),
    ANNOTATOR: (BETA_MARK, OTHER_MARK),
    OUTSIDER: (ALPHA_MARK, OTHER_MARK),
    SHARER: (ALPHA_MARK, OTHER_MARK),
    ANONYMOUS: (ALPHA_MARK, BETA_MARK, OTHER_MARK),
    REVOKED: (ALPHA_MARK, BETA_MARK, OTHER_MARK),
}


def expect(**statuses: int) -> dict[str, int]:
    """Statuses by persona initial (S, M, A, R, B, D; N for anonymous): without a token or with a
    revoked one, every operation is a 401 unless said otherwise. Dana (D) has no role in alpha,
    as Bob: she answers as he does unless said otherwise."""
    expected = {ANONYMOUS: 401, REVOKED: 401}
    expected.update({SHORT[key]: status for key, status in statuses.items()})
    expected.setdefault(SHARER, expected[OUTSIDER])
    assert set(expected) == set(PERSONAS), f"missing personas: {set(PERSONAS) - set(expected)}"
    return expected


EVERYONE = expect(S=200, M=200, A=200, R=200, B=200)
ALPHA_READERS = expect(S=200, M=200, A=404, R=200, B=404)
BETA_READERS = expect(S=200, M=404, A=404, R=404, B=404, D=200)
ALPHA_MEMBERS = expect(S=200, M=200, A=200, R=200, B=404)
BETA_MEMBERS = expect(S=200, M=404, A=404, R=404, B=200, D=404)
STAFF_ONLY = expect(S=201, M=403, A=403, R=403, B=403)
ANNOTATOR_ONLY = expect(S=403, M=403, A=200, R=403, B=404)
MODERATORS = expect(S=200, M=200, A=403, R=200, B=404)
REVIEWERS = expect(S=200, M=200, A=403, R=200, B=404)
MANAGERS_WRITE = expect(S=201, M=201, A=403, R=403, B=404)
MANAGERS = expect(S=200, M=200, A=403, R=403, B=404)
MANAGERS_ACCEPTED = expect(S=202, M=202, A=403, R=403, B=404)
JOB_SEERS = expect(S=200, M=200, A=404, R=404, B=404)


@dataclass(frozen=True)
class Case:
    method: str
    template: str  # the operation's path in the schema
    expected: dict[str, int]
    params: dict[str, str] = field(default_factory=dict)  # world attribute paths for the template
    body: Any = None
    query: str = ""

    def url(self, world: World) -> str:
        values = {key: str(_resolve(world, spec)) for key, spec in self.params.items()}
        return self.template.format(**values) + (f"?{self.query}" if self.query else "")

    @property
    def id(self) -> str:
        where = ",".join(f"{k}={v}" for k, v in self.params.items() if v not in ("alpha", "alpha-collect"))
        return f"{self.method} {self.template}" + (f" [{where}]" if where else "")


def _resolve(world: World, spec: str) -> Any:
    if not spec.startswith("@"):
        return spec
    value: Any = world
    for part in spec[1:].split("."):
        value = getattr(value, part)
    return value


V1 = "/api/v1"
ALPHA = {"name": "alpha"}
COLLECT = {"name": "alpha-collect"}
ITEM = ALPHA | {"tree_id": "@held.tree_id"}
REVIEWED = ALPHA | {"tree_id": "@alpha_tree.pk"}  # Olga submitted it (at version 2)
ANSWERS = {"annotations": {"quality": {"rating": 4}}, "version": 1}
TASK = COLLECT | {"task_id": "@task.pk"}
TREE = COLLECT | {"tree_id": "@collected"}
MESSAGE = TREE | {"message_id": "@message"}
RUBRIC = ALPHA | {"rubric": "@rubric"}
NEW_ITEM = {
    "format": "potato",
    "items": [{"id": "pushed-1", "tree": {"id": "root", "role": "user", "content": "Hi"}}],
}
RUBRIC_YAML = (
    "name: tone\ncriteria:\n  - {key: kind, question: 'Kind?', weight: 1}\noutcomes:\n  - {name: ok}\n"
)
WEBHOOK = ALPHA | {"webhook_id": "@webhook_id"}
JOB = {"job_id": "@job_id"}
WEBHOOK_BODY = {"url": "https://hooks.example.com/in", "secret": "s" * 20, "events": ["review.decided"]}
GOLD = {"answers": {"quality": {"rating": 4}}, "explanation": "A fair answer."}
RECORDS = {"records": [{"id": "alpha-1", "user": "olga", "annotations": {"quality": {"rating": 5}}}]}

CASES = [
    Case("GET", f"{V1}/me", EVERYONE),
    Case("GET", f"{V1}/datasets", EVERYONE),
    Case("POST", f"{V1}/datasets", STAFF_ONLY, body={"name": "fresh"}),
    Case("GET", f"{V1}/datasets/{{name}}", ALPHA_READERS, {"name": "alpha-trees"}),
    Case("GET", f"{V1}/datasets/{{name}}", BETA_READERS, {"name": "beta-trees"}),
    Case(
        "POST",
        f"{V1}/datasets/{{name}}/import",
        expect(S=200, M=200, A=404, R=403, B=404),
        {"name": "alpha-trees"},
        body=NEW_ITEM,
    ),
    # Dana manages delta, over beta's dataset, but not beta: her new trees would be Bob's items.
    Case(
        "POST",
        f"{V1}/datasets/{{name}}/import",
        expect(S=200, M=404, A=404, R=404, B=404, D=403),
        {"name": "beta-trees"},
        body=NEW_ITEM,
    ),
    Case(
        "GET", f"{V1}/datasets/{{name}}/export", ALPHA_READERS, {"name": "alpha-trees"}, query="format=potato"
    ),
    Case("GET", f"{V1}/datasets/{{name}}/export", BETA_READERS, {"name": "beta-trees"}, query="format=oasst"),
    Case("GET", f"{V1}/trees", EVERYONE),
    Case("GET", f"{V1}/trees/{{tree_id}}", ALPHA_READERS, {"tree_id": "@alpha_tree.pk"}),
    Case("GET", f"{V1}/trees/{{tree_id}}", BETA_READERS, {"tree_id": "@beta_tree.pk"}),
    Case("GET", f"{V1}/projects", EVERYONE),
    Case(
        "POST",
        f"{V1}/projects",
        STAFF_ONLY,
        body={
            "name": "gamma",
            "dataset": "alpha-trees",
            "config_yaml": "annotation_schemes: [{annotation_type: text, name: t, description: T}]\n",
        },
    ),
    Case("GET", f"{V1}/projects/{{name}}", ALPHA_MEMBERS, ALPHA),
    Case(
        "GET", f"{V1}/projects/{{name}}", expect(S=200, M=404, A=404, R=404, B=200, D=404), {"name": "beta"}
    ),
    Case("GET", f"{V1}/projects/{{name}}/members", REVIEWERS, ALPHA),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/members",
        MANAGERS_WRITE,
        ALPHA,
        body={"username": "bob", "role": "reviewer"},
    ),
    Case(
        "DELETE",
        f"{V1}/projects/{{name}}/members/{{membership_id}}",
        expect(S=204, M=204, A=403, R=403, B=404),
        ALPHA | {"membership_id": "@olga_membership_id"},
    ),
    Case("POST", f"{V1}/projects/{{name}}/items/next", ANNOTATOR_ONLY, ALPHA),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/items/next",
        expect(S=403, M=404, A=404, R=404, B=200, D=404),
        {"name": "beta"},
    ),
    Case("GET", f"{V1}/projects/{{name}}/items/mine", ALPHA_MEMBERS, ALPHA),
    Case(
        "GET", f"{V1}/projects/{{name}}/items/mine", BETA_MEMBERS, {"name": "beta"}, query="status=sent_back"
    ),
    Case("GET", f"{V1}/projects/{{name}}/items/{{tree_id}}", ANNOTATOR_ONLY, ITEM),
    Case("PUT", f"{V1}/projects/{{name}}/items/{{tree_id}}/draft", ANNOTATOR_ONLY, ITEM, body=ANSWERS),
    Case("POST", f"{V1}/projects/{{name}}/items/{{tree_id}}/submit", ANNOTATOR_ONLY, ITEM, body=ANSWERS),
    Case("POST", f"{V1}/projects/{{name}}/items/{{tree_id}}/skip", ANNOTATOR_ONLY, ITEM, body={"version": 1}),
    # Olga submitted Alice's held item: its adjudication is for the reviewers and managers.
    Case("GET", f"{V1}/projects/{{name}}/items/{{tree_id}}/final", REVIEWERS, ITEM),
    Case(
        "PUT",
        f"{V1}/projects/{{name}}/items/{{tree_id}}/final",
        REVIEWERS,
        ITEM,
        body={"version": 0, "take": "olga"},
    ),
    Case("GET", f"{V1}/annotations", EVERYONE),
    Case("GET", f"{V1}/annotations", EVERYONE, query="project=alpha&scheme=note"),
    Case("GET", f"{V1}/annotations/{{annotation_id}}", ALPHA_READERS, {"annotation_id": "@other_answer_id"}),
    Case("GET", f"{V1}/projects/{{name}}/export", REVIEWERS, ALPHA, query="format=potato&status=all"),
    Case(
        "GET",
        f"{V1}/projects/{{name}}/export",
        expect(S=200, M=404, A=404, R=404, B=403, D=404),
        {"name": "beta"},
        query="format=sft",
    ),
    Case("POST", f"{V1}/projects/{{name}}/import", MANAGERS, ALPHA, body=RECORDS),
    Case("GET", f"{V1}/projects/{{name}}/review", REVIEWERS, ALPHA),
    Case("GET", f"{V1}/projects/{{name}}/review/{{tree_id}}", REVIEWERS, REVIEWED),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/review/{{tree_id}}/decisions",
        expect(S=201, M=201, A=403, R=201, B=404),
        REVIEWED,
        body={"annotator": "olga", "decision": "accepted", "version": 2},
    ),
    Case("GET", f"{V1}/projects/{{name}}/gold", REVIEWERS, ALPHA),
    Case("PUT", f"{V1}/projects/{{name}}/gold/{{tree_id}}", MANAGERS, REVIEWED, body=GOLD),
    Case(
        "DELETE",
        f"{V1}/projects/{{name}}/gold/{{tree_id}}",
        expect(S=204, M=204, A=403, R=403, B=404),
        REVIEWED,
    ),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/gold/import",
        MANAGERS,
        ALPHA,
        body={"records": [{"id": "alpha-2", "annotations": {"quality": 4}}]},
    ),
    Case("GET", f"{V1}/projects/{{name}}/quality", REVIEWERS, ALPHA),
    Case("GET", f"{V1}/projects/{{name}}/training", ALPHA_MEMBERS, ALPHA),
    Case("GET", f"{V1}/projects/{{name}}/webhooks", MANAGERS, ALPHA),
    Case("POST", f"{V1}/projects/{{name}}/webhooks", MANAGERS_WRITE, ALPHA, body=WEBHOOK_BODY),
    Case("GET", f"{V1}/projects/{{name}}/webhooks/{{webhook_id}}", MANAGERS, WEBHOOK),
    Case(
        "PATCH", f"{V1}/projects/{{name}}/webhooks/{{webhook_id}}", MANAGERS, WEBHOOK, body={"active": False}
    ),
    Case(
        "DELETE",
        f"{V1}/projects/{{name}}/webhooks/{{webhook_id}}",
        expect(S=204, M=204, A=403, R=403, B=404),
        WEBHOOK,
    ),
    Case("GET", f"{V1}/projects/{{name}}/webhooks/{{webhook_id}}/deliveries", MANAGERS, WEBHOOK),
    Case("GET", f"{V1}/projects/{{name}}/collect/available", ANNOTATOR_ONLY, COLLECT),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/tasks/next",
        expect(S=403, M=403, A=201, R=403, B=404),
        COLLECT,
        body={"type": "initial_prompt"},
    ),
    Case(
        "GET",
        f"{V1}/projects/{{name}}/collect/tasks/{{task_id}}",
        expect(S=404, M=404, A=200, R=404, B=404),
        TASK,
    ),
    Case("POST", f"{V1}/projects/{{name}}/collect/tasks/{{task_id}}/ack", ANNOTATOR_ONLY, TASK),
    Case("POST", f"{V1}/projects/{{name}}/collect/tasks/{{task_id}}/nack", ANNOTATOR_ONLY, TASK, body={}),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/tasks/{{task_id}}/submit",
        ANNOTATOR_ONLY,
        TASK,
        body={"labels": {"spam": 0, "lang_mismatch": 0, "pii": 0, "not_appropriate": 0}},
    ),
    Case("GET", f"{V1}/projects/{{name}}/collect/trees/{{tree_id}}", ALPHA_MEMBERS, TREE),
    Case("POST", f"{V1}/projects/{{name}}/collect/trees/{{tree_id}}/halt", MODERATORS, TREE),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/trees/{{tree_id}}/resume",
        MODERATORS,
        COLLECT | {"tree_id": "@halted"},
    ),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/trees/{{tree_id}}/messages/{{message_id}}/delete",
        expect(S=201, M=201, A=403, R=201, B=404),
        MESSAGE,
        body={"reason": "spam"},
    ),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/trees/{{tree_id}}/messages/{{message_id}}/report",
        expect(S=201, M=201, A=201, R=201, B=404),
        MESSAGE,
        body={"reason": "rude"},
    ),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/collect/deletions/{{deletion_id}}/undo",
        MODERATORS,
        COLLECT | {"deletion_id": "@deletion.pk"},
    ),
    Case("GET", f"{V1}/projects/{{name}}/collect/export", REVIEWERS, COLLECT, query="state=all"),
    Case("GET", f"{V1}/rubrics", expect(S=200, M=200, A=403, R=200, B=403, D=200)),
    Case("POST", f"{V1}/rubrics", expect(S=201, M=403, A=403, R=403, B=403), body={"yaml": RUBRIC_YAML}),
    Case(
        "POST",
        f"{V1}/rubrics",
        expect(S=200, M=200, A=403, R=200, B=403, D=200),
        body={"yaml": RUBRIC_YAML, "dry_run": True},
    ),
    Case(
        "GET",
        f"{V1}/rubrics/{{rubric}}",
        expect(S=200, M=200, A=403, R=200, B=403, D=200),
        {"rubric": "@rubric"},
    ),
    Case("POST", f"{V1}/projects/{{name}}/rubrics/{{rubric}}/evaluate", MANAGERS, RUBRIC),
    Case("GET", f"{V1}/projects/{{name}}/rubrics/{{rubric}}/results", REVIEWERS, RUBRIC),
    Case("GET", f"{V1}/projects/{{name}}/rubrics/{{rubric}}/report", REVIEWERS, RUBRIC),
    Case("GET", f"{V1}/projects/{{name}}/agreement", REVIEWERS, ALPHA),
    Case("GET", f"{V1}/projects/{{name}}/judges/{{judge}}/report", REVIEWERS, ALPHA | {"judge": "@judge"}),
    # Jobs: started by managers (exports: reviewers too); seen by their creator, the managers of
    # their project and staff. Maggie's waiting export job has made no file yet (410).
    Case("POST", f"{V1}/projects/{{name}}/rubrics/{{rubric}}/evaluate-jobs", MANAGERS_ACCEPTED, RUBRIC),
    Case("POST", f"{V1}/projects/{{name}}/agreement-jobs", MANAGERS_ACCEPTED, ALPHA),
    Case(
        "POST",
        f"{V1}/projects/{{name}}/export-jobs",
        expect(S=202, M=202, A=403, R=202, B=404),
        ALPHA,
        body={"format": "potato"},
    ),
    # Model judges: listed for staff and managers; a run started by the project's managers
    # (alpha has no rubric scheme: refused with 400 once permitted).
    Case("GET", f"{V1}/judges", expect(S=200, M=200, A=403, R=403, B=403, D=200)),
    Case(
        "POST",
        f"{V1}/judges/{{judge}}/runs",
        expect(S=400, M=400, A=403, R=403, B=404),
        {"judge": "critic"},
        body={"project": "alpha"},
    ),
    Case("GET", f"{V1}/jobs", EVERYONE),
    Case("GET", f"{V1}/jobs/{{job_id}}", JOB_SEERS, JOB),
    Case("POST", f"{V1}/jobs/{{job_id}}/cancel", JOB_SEERS, JOB),
    Case("GET", f"{V1}/jobs/{{job_id}}/file", expect(S=410, M=410, A=404, R=404, B=404), JOB),
    # The schema and its docs are public; a revoked token is still refused.
    Case("GET", "/api/schema/", expect(S=200, M=200, A=200, R=200, B=200, N=200)),
    Case("GET", "/api/docs/", expect(S=200, M=200, A=200, R=200, B=200, N=200)),
    Case("GET", "/api/redoc/", expect(S=200, M=200, A=200, R=200, B=200, N=200)),
    Case("GET", f"{V1}/no/such/endpoint", expect(S=404, M=404, A=404, R=404, B=404, N=404)),
]


def call(world: World, persona: str, case: Case) -> tuple[int, bytes]:
    """The status and body of ``case`` for ``persona``, in a savepoint rolled back afterwards."""
    client = token_client(world, persona)
    with transaction.atomic():
        method = getattr(client, case.method.lower())
        if case.body is not None:
            response = method(case.url(world), data=case.body, content_type="application/json")
        else:
            response = method(case.url(world))
        content = b"".join(response.streaming_content) if response.streaming else response.content
        transaction.set_rollback(True)
    return response.status_code, content


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_persona_gets_the_expected_status_and_nothing_it_may_not_see(
    shared_world: World, case: Case
) -> None:
    wrong, leaks = [], []
    for persona in PERSONAS:
        status, content = call(shared_world, persona, case)
        if status != case.expected[persona]:
            wrong.append(f"{persona}: {status} (expected {case.expected[persona]}): {content[:200]!r}")
        leaks += [f"{persona} read {mark}" for mark in FORBIDDEN[persona] if mark.encode() in content]
        if status >= 400 and case.template.startswith(V1):
            assert content.startswith(b"{"), f"{persona}: an error that is not JSON: {content[:200]!r}"
    assert not wrong, "\n".join(wrong)
    assert not leaks, "\n".join(leaks)


def test_every_operation_of_the_schema_is_in_the_matrix() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    covered = {(case.method, case.template) for case in CASES}
    assert operations - covered == set()
    assert len(operations) >= 40


def test_the_matrix_counts() -> None:
    """For the record: how many answers (persona by operation) the matrix pins."""
    assert len(CASES) * len(PERSONAS) >= 300
