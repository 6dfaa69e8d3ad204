"""Schemathesis against ``/api/schema/``, in process: for every operation, generated requests
(valid and invalid) never get a server error, and every answer matches the schema.

The requests come with the token of a superuser who also manages and annotates alpha
and alpha-collect (tests/api/world.py), so that every operation's own checks run, not
only its permission check. Path parameters are the world's real names and ids about
two times in three and anything the schema allows otherwise. Examples per operation
are bounded and derandomized (the same requests every run); throttling is off.
"""

from __future__ import annotations

import gzip
import json
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
import schemathesis
from django.core import signals
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections, transaction
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from annotation.api.schema import ERROR
from annotation.collection.tasks import task_next
from annotation.models import Assignment, Membership
from annotation.projects.services import membership_add
from annotation.work.assignment import item_next
from tests.api.world import SUPERUSER, World, rows_digest
from trees.models import AuditEntry, Message

pytestmark = pytest.mark.django_db

EXAMPLES = 150
CHECKS = [not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]


def operations() -> list[str]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        f"{method.upper()} {path}"
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    ]


LOOP_WRITES = ("/draft", "/submit", "/skip")


def known_path_parameters(world: World, path: str) -> dict[str, Any]:
    """Real names and ids for the parameters of ``path``: the fuzzer's own item and task."""
    collect = "/collect/" in path
    values: dict[str, Any] = {
        "name": "alpha-collect"
        if collect
        else ("alpha-trees" if path.startswith("/api/v1/datasets") else "alpha"),
        "membership_id": world.olga_membership_id,
        "annotation_id": world.other_answer_id,
        "task_id": world.extra["task"].pk,
        "message_id": world.message,
        "deletion_id": world.deletion.pk,
        "rubric": world.rubric,
        "webhook_id": world.webhook_id,
        "job_id": world.job_id,
        "judge": world.judge,
    }
    if collect:
        values["tree_id"] = world.collected
    elif "/items/" in path:
        values["tree_id"] = world.extra["held"].tree_id
    else:
        values["tree_id"] = world.alpha_tree.pk
    return {key: str(value) for key, value in values.items() if "{" + key + "}" in path}


@pytest.fixture
def fuzzer(world: World, settings: Any) -> str:
    """The superuser's token; they also manage and annotate alpha and alpha-collect, and
    hold an item of alpha and a review task of alpha-collect."""
    settings.API_THROTTLE_RATES = {"user": "off", "anon": "off", "loop": "off"}
    settings.ALLOWED_HOSTS = ["*"]
    root = world.users[SUPERUSER]
    for project in (world.alpha, world.collect):
        membership_add(project=project, user=root, role=Membership.Role.ANNOTATOR)
        membership_add(project=project, user=root, role=Membership.Role.MANAGER)
    world.extra["held"] = item_next(project=world.alpha, user=root)
    prompt = Message.objects.get(tree__collected__project=world.collect, external_id=world.message)
    world.extra["task"] = task_next(
        project=world.collect, user=root, task_type="label_initial_prompt", message=prompt
    )
    return world.tokens[SUPERUSER]


def with_current_version(case: Any, world: World) -> None:
    """Half of the loop's writes name the item's current version, so that their answers are
    checked (a stale version is refused before anything else)."""
    if not (case.path.endswith(LOOP_WRITES) and isinstance(case.body, dict)):
        return
    if isinstance(case.body.get("version"), int) and zlib.crc32(repr(case.body).encode()) % 2 == 0:
        held = world.extra["held"]
        case.body["version"] = Assignment.objects.get(pk=held.pk).version


@pytest.fixture
def app() -> Iterator[WSGIHandler]:
    """Django's WSGI application, keeping the test's database connection between requests
    (as Django's test client does): the test's transaction lives on it."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.mark.parametrize("label", operations())
def test_generated_requests_get_no_server_error_and_answers_match_the_schema(
    label: str, world: World, fuzzer: str, app: WSGIHandler
) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/schema/", app)
    operation = schema.find_operation_by_label(label)
    assert operation is not None, label
    headers = {"Authorization": f"Bearer {fuzzer}"}
    known = known_path_parameters(world, operation.path)
    strategy = st.one_of(
        operation.as_strategy(path_parameters=known, headers=headers),
        operation.as_strategy(path_parameters=known, headers=headers),
        operation.as_strategy(headers=headers),
        operation.as_strategy(
            generation_mode=schemathesis.GenerationMode.NEGATIVE, path_parameters=known, headers=headers
        ),
    )

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def fuzz(case: Any) -> None:
        with_current_version(case, world)
        case.call_and_validate(checks=CHECKS)

    fuzz()


# -- hostile bodies ---------------------------------------------------------------------------
#
# Every write operation of the schema (POST, PUT, PATCH, DELETE) is sent bodies an attacker or
# a careless client would send: malformed, over the size limit, nested past any sensible
# depth, not UTF-8, and — from a body built from the operation's own request schema — with
# text no database can store (a lone UTF-16 surrogate, a NUL) in every string and key. An
# import (multipart) is sent files of each kind too, and a gzip bomb. Each must be refused:
# a 4xx in the API's one JSON error shape, and nothing written — every table's rows as they
# were, no audit entry. An operation whose schema declares no body reads none: a body sent
# to it is ignored, so it answers as it does without one (its own writes are its purpose).
# One world for all (``shared_world``), each operation in a transaction rolled back after it.

LIMITS = {"DATA_UPLOAD_MAX_MEMORY_SIZE": 64 * 1024, "BRANCHPOINT_MAX_UPLOAD_BYTES": 256 * 1024}
READ_BOUNDS = {"BRANCHPOINT_MAX_DECOMPRESSED_BYTES": 1024 * 1024, "BRANCHPOINT_MAX_LINE_BYTES": 64 * 1024}
SURROGATE, NUL = "\ud800", "\x00"


def write_operations() -> list[tuple[str, str, dict[str, Any]]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in ("post", "put", "patch", "delete")
    ]


SCHEMA = SchemaGenerator().get_schema(request=None, public=True)


def example(schema: dict[str, Any], depth: int = 0) -> Any:
    """A plausible value for ``schema``: every property, its default or enum's first value (no
    boolean is true unless by default: ``skip_invalid`` would keep the good part of a file)."""
    if "$ref" in schema:
        return example(SCHEMA["components"]["schemas"][schema["$ref"].rpartition("/")[2]], depth)
    for combined in ("allOf", "oneOf", "anyOf"):
        if schema.get(combined):
            return example(schema[combined][0], depth)
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return next((value for value in schema["enum"] if value is not None), None)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {
            name: example(prop, depth + 1)
            for name, prop in schema.get("properties", {}).items()
            if not prop.get("readOnly") and depth < 6
        }
    if kind == "array":
        return [example(schema.get("items", {}), depth + 1)] if depth < 6 else []
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return 1.5
    if kind == "boolean":
        return False
    return "text"


def tainted(value: Any, bad: str, *, keys: bool = True) -> Any:
    """``value`` with ``bad`` in every string, and in every key unless ``keys`` is false (then in
    the values only, so that the body's fields are still the ones the operation reads; with
    keys, an object gets a key of its own too: a body of numbers still carries the character)."""
    if isinstance(value, str):
        return value + bad
    if isinstance(value, list):
        return [tainted(item, bad, keys=keys) for item in value] or [bad]
    if isinstance(value, dict):
        if not keys:
            return {key: tainted(item, bad, keys=False) for key, item in value.items()}
        return {key + bad: tainted(item, bad) for key, item in value.items()} | {f"key{bad}": bad}
    return value


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def json_bodies(operation: dict[str, Any], version: int | None = None) -> dict[str, bytes]:
    """The hostile bodies; ``version``, when given, is the held item's current one, so that
    the loop's writes read on past their version check."""
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    body = example(schema) if schema else {}
    if isinstance(body, dict) and "version" in body and version is not None:
        body["version"] = version
    return {
        "malformed": json.dumps(body).encode()[:-1] or b"{",
        "not utf-8": json.dumps(body).encode().replace(b"}", b', "caf\xe9": "\xff"}', 1)
        if isinstance(body, dict)
        else b'["\xff"]',
        "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
        "nested 150 deep": json.dumps(nested(150)).encode(),
        "over the size limit": json.dumps({"pad": "x" * LIMITS["BRANCHPOINT_MAX_UPLOAD_BYTES"]}).encode(),
        "a lone surrogate in each string and key": json.dumps(tainted(body, SURROGATE)).encode(),
        "a NUL in each string and key": json.dumps(tainted(body, NUL)).encode(),
    } | {
        f"{name} in each value": json.dumps(values).encode()
        for name, bad in (("a lone surrogate", SURROGATE), ("a NUL", NUL))
        if (values := tainted(body, bad, keys=False)) != body  # a body with strings to taint
    }


def bomb(size: int) -> bytes:
    """A gzip file of ``size`` zero bytes in little memory: one compressed megabyte of zeros,
    repeated (full flushes make the pieces independent)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    piece = packer.compress(bytes(1 << 20)) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.flush()
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    # The trailer's CRC is never reached: the reader stops at its limit.
    return header + piece * (size >> 20) + end + struct.pack("<II", 0, size & 0xFFFFFFFF)


def upload_files() -> dict[str, bytes]:
    item = {"id": "fuzz-1", "tree": {"id": "r", "role": "user", "content": "hello"}}
    line = json.dumps(item)
    return {
        "a lone surrogate": line.replace("hello", "\\ud800").encode(),
        "a NUL": line.replace("hello", "\\u0000").encode(),
        "a gzip bomb": bomb(1 << 30),
        "damaged gzip": gzip.compress(line.encode())[:-12] + b"garbage!",
        "not utf-8": line.replace("hello", "caf\xe9").encode("latin-1"),
        "nested 150 deep": json.dumps({**item, "meta": nested(150)}).encode(),
        "a line over the limit": json.dumps(
            {**item, "pad": "x" * READ_BOUNDS["BRANCHPOINT_MAX_LINE_BYTES"]}
        ).encode(),
        "over the size limit": b"\n".join(
            [line.encode()] * (LIMITS["BRANCHPOINT_MAX_UPLOAD_BYTES"] // len(line) + 1)
        ),
    }


def form_fields(operation: dict[str, Any]) -> dict[str, Any]:
    schema = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    fields = example(schema)
    return {
        key: value for key, value in fields.items() if isinstance(value, str | int | bool) and key != "file"
    }


@pytest.fixture(scope="module")
def hostile_world(shared_world: World, django_db_blocker: Any) -> World:
    """The shared world, with Root managing and annotating alpha and alpha-collect, holding an
    item of alpha and a review task of alpha-collect (as for the schemathesis run)."""
    with django_db_blocker.unblock():
        root = shared_world.users[SUPERUSER]
        for project in (shared_world.alpha, shared_world.collect):
            membership_add(project=project, user=root, role=Membership.Role.ANNOTATOR)
            membership_add(project=project, user=root, role=Membership.Role.MANAGER)
        shared_world.extra["held"] = item_next(project=shared_world.alpha, user=root)
        prompt = Message.objects.get(
            tree__collected__project=shared_world.collect, external_id=shared_world.message
        )
        shared_world.extra["task"] = task_next(
            project=shared_world.collect, user=root, task_type="label_initial_prompt", message=prompt
        )
    return shared_world


def isolated(send: Any, *args: Any, **kwargs: Any) -> Any:
    """``send``'s answer, with whatever the request wrote rolled back."""
    with transaction.atomic():
        response = send(*args, **kwargs)
        transaction.set_rollback(True)
    return response


def refused(response: Any, label: str) -> None:
    assert 400 <= response.status_code < 500, (label, response.status_code, response.content[:300])
    assert response["Content-Type"] == "application/json", (label, response.content[:300])
    jsonschema.validate(response.json(), ERROR)


@pytest.mark.parametrize(
    ("method", "path", "operation"),
    write_operations(),
    ids=[f"{m.upper()} {p}" for m, p, _ in write_operations()],
)
def test_hostile_bodies_are_refused_in_json_and_write_nothing(
    hostile_world: World, settings: Any, method: str, path: str, operation: dict[str, Any]
) -> None:
    settings.API_THROTTLE_RATES = {"user": "off", "anon": "off", "loop": "off"}
    for name, value in (LIMITS | READ_BOUNDS).items():
        setattr(settings, name, value)
    client = Client(raise_request_exception=False, **hostile_world.headers(SUPERUSER))
    url = path.format(**known_path_parameters(hostile_world, path))
    send = getattr(client, method)
    content = operation.get("requestBody", {}).get("content", {})

    if not content:
        # It reads no body: each request, rolled back after, answers as the one without a body.
        expected = isolated(send, url)
        for label, body in json_bodies(operation).items():
            response = isolated(send, url, data=body, content_type="application/json")
            assert response.status_code < 500, (label, response.content[:300])
            answer = (response.status_code, response.get("Content-Type"))
            assert answer == (expected.status_code, expected.get("Content-Type")), label
        return

    before, entries = rows_digest(), AuditEntry.objects.count()
    version = Assignment.objects.get(pk=hostile_world.extra["held"].pk).version
    for label, body in json_bodies(operation, version).items():
        refused(send(url, data=body, content_type="application/json"), label)
    if "multipart/form-data" in content:
        fields = form_fields(operation)
        for label, data in upload_files().items():
            upload = SimpleUploadedFile("upload.jsonl", data)
            refused(send(url, data={**fields, "file": upload}), f"file with {label}")
        for bad in (SURROGATE, NUL):
            # As a client sends them: bytes (a surrogate as UTF-8 would spell it, were it text).
            raw = {
                key.encode("utf-8", "surrogatepass"): str(value).encode("utf-8", "surrogatepass")
                for key, value in tainted(fields, bad).items()
            }
            upload = SimpleUploadedFile("upload.jsonl", b"")
            refused(send(url, data={**raw, "file": upload}), f"fields with {bad!r}")

    assert AuditEntry.objects.count() == entries
    assert rows_digest() == before
