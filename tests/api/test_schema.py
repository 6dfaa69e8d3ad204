"""The OpenAPI 3 schema at /api/schema/ and its docs: the schema validates with no warning,
every endpoint under /api/v1/ is in it with the shape of what it takes and what it answers,
and the docs page (Swagger UI, served from our own static files) renders every operation in a
browser that may not reach anything but the server.
"""

from __future__ import annotations

import io
import re
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from playwright.sync_api import Page, Route, expect

METHODS = ("get", "post", "put", "patch", "delete")
# Writes that take no body: the URL says all there is to say.
BODYLESS_WRITES = {
    "items_next",
    "collect_tasks_ack",
    "collect_trees_halt",
    "collect_trees_resume",
    "collect_deletions_undo",
    "rubrics_evaluate",
    "jobs_cancel",
    "rubrics_evaluate_jobs_create",
    "projects_agreement_jobs_create",
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed (components/schemas/...)."""
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def has_shape(schema: dict[str, Any], node: dict[str, Any]) -> bool:
    """Whether ``node`` says something about its content: fields, items, or a type."""
    node = resolved(schema, node)
    return bool(
        node.get("properties") or node.get("items") is not None or node.get("type") or node.get("oneOf")
    )


# Valid


def test_the_schema_validates_without_a_warning(tmp_path: Any) -> None:
    """What ``manage.py spectacular --validate --fail-on-warn`` checks, in process."""
    GENERATOR_STATS.reset()
    target = tmp_path / "schema.yaml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target), stderr=io.StringIO())

    written = yaml.safe_load(target.read_text())
    assert written["openapi"].startswith("3.")
    assert written["info"]["title"] == "Branchpoint API"


# Complete


def api_routes() -> set[tuple[str, str]]:
    """(method, path) of every view under /api/v1/, found from the URL patterns themselves."""
    found: set[tuple[str, str]] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                view = getattr(pattern.callback, "view_class", None)
                if view is None or route == "api/v1/":  # the JSON 404 for every other path
                    continue
                path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
                for method in METHODS:
                    if hasattr(view, method):
                        found.add((method, path))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_endpoint_under_v1_is_in_the_schema(schema: dict[str, Any]) -> None:
    documented = {(method, path) for method, path, _ in operations(schema)}

    routes = api_routes()

    assert routes - documented == set()
    assert len(routes) >= 40


def test_every_operation_has_an_id_a_tag_and_a_summary_of_what_it_does(schema: dict[str, Any]) -> None:
    missing = [
        f"{method.upper()} {path}"
        for method, path, operation in operations(schema)
        if not (operation.get("operationId") and operation.get("tags") and operation.get("description"))
    ]

    assert missing == []
    ids = [operation["operationId"] for _, _, operation in operations(schema)]
    assert len(ids) == len(set(ids))


def test_every_operation_says_what_it_answers(schema: dict[str, Any]) -> None:
    unshaped = []
    for method, path, operation in operations(schema):
        successes = {code: body for code, body in operation["responses"].items() if code.startswith("2")}
        assert successes, f"{method.upper()} {path}: no success response"
        for code, response in successes.items():
            if code == "204":
                assert not response.get("content"), f"{method.upper()} {path}: a 204 with content"
                continue
            for media_type, content in response["content"].items():
                if not has_shape(schema, content.get("schema", {})):
                    unshaped.append(f"{method.upper()} {path} {code} {media_type}")

    assert unshaped == []


def test_every_write_says_what_it_takes(schema: dict[str, Any]) -> None:
    unshaped, bodyless = [], set()
    for method, path, operation in operations(schema):
        body = operation.get("requestBody")
        if method in ("get", "delete"):
            assert body is None, f"{method.upper()} {path} takes a body"
            continue
        if body is None:
            bodyless.add(operation["operationId"])
            continue
        for media_type, content in body["content"].items():
            node = resolved(schema, content.get("schema", {}))
            if not node.get("properties"):
                unshaped.append(f"{method.upper()} {path} {media_type}")

    assert unshaped == []
    assert bodyless == BODYLESS_WRITES


def test_imports_take_a_file_or_a_json_list(schema: dict[str, Any]) -> None:
    for path, listed in (
        ("/api/v1/datasets/{name}/import", "items"),
        ("/api/v1/projects/{name}/import", "records"),
    ):
        content = schema["paths"][path]["post"]["requestBody"]["content"]
        upload = resolved(schema, content["multipart/form-data"]["schema"])
        body = resolved(schema, content["application/json"]["schema"])
        assert upload["properties"]["file"] == {
            "type": "string",
            "format": "binary",
            **upload["properties"]["file"],
        }
        assert body["properties"][listed]["type"] == "array"


def test_every_error_an_operation_can_give_has_the_error_shape(schema: dict[str, Any]) -> None:
    error = {"$ref": "#/components/schemas/Error"}
    for method, path, operation in operations(schema):
        responses = operation["responses"]
        expected = {"401", "403", "404", "429"}
        if operation.get("parameters") or operation.get("requestBody"):
            expected.add("400")
        if operation.get("requestBody"):
            expected.add("413")
        assert expected <= set(responses), f"{method.upper()} {path}: {expected - set(responses)}"
        for code, response in responses.items():
            if code.startswith(("4", "5")):
                assert response["content"]["application/json"]["schema"] == error, (
                    f"{method.upper()} {path} {code}"
                )
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"code", "message"}


def test_the_stale_version_of_the_loop_is_a_documented_409(schema: dict[str, Any]) -> None:
    for action, method in (("draft", "put"), ("submit", "post"), ("skip", "post")):
        responses = schema["paths"][f"/api/v1/projects/{{name}}/items/{{tree_id}}/{action}"][method][
            "responses"
        ]
        assert "stale_version" in responses["409"]["description"]


def test_tokens_are_the_documented_way_in(schema: dict[str, Any]) -> None:
    scheme = schema["components"]["securitySchemes"]["tokenAuth"]

    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert all({"tokenAuth": []} in operation["security"] for _, _, operation in operations(schema))


def test_the_trees_filters_and_pages_are_documented(schema: dict[str, Any]) -> None:
    parameters = {
        parameter["name"]: parameter["schema"]
        for parameter in schema["paths"]["/api/v1/trees"]["get"]["parameters"]
    }

    assert {
        "dataset",
        "project",
        "state",
        "metadata_key",
        "metadata_value",
        "has_annotations",
        "cursor",
        "page_size",
    } <= set(parameters)
    assert parameters["has_annotations"]["type"] == "boolean"
    assert "growing" in parameters["state"]["enum"]


# The docs, offline


URL = re.compile(r"""(?:https?:)?//[^\s"'<>)]+""")


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_the_docs_pages_name_no_address_but_the_servers_own(page: str, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["docs.example.org"]

    response = Client().get(page, HTTP_HOST="docs.example.org")

    assert response.status_code == 200
    html = response.content.decode()
    outside = [url for url in URL.findall(html) if urlsplit(url).netloc not in ("", "docs.example.org")]
    assert outside == []
    assert "/static/drf_spectacular_sidecar/" in html


def only(here: str, blocked: list[str], forward_to: str | None = None) -> Any:
    """A route handler that lets requests to ``here`` through (to ``forward_to`` when given)
    and aborts the rest, noting them in ``blocked``."""

    def handle(route: Route) -> None:
        url = urlsplit(route.request.url)
        if url.netloc != here:
            blocked.append(route.request.url)
            route.abort()
        elif forward_to is None:
            route.continue_()
        else:
            route.fulfill(
                response=route.fetch(url=forward_to + url.path + (f"?{url.query}" if url.query else ""))
            )

    return handle


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_docs_render_every_operation_in_a_browser_that_cannot_leave_the_server(
    live_server: Any, page: Page, schema: dict[str, Any]
) -> None:
    """Served under a name that is not localhost (Swagger UI skips some requests on localhost):
    docs.test, whose requests the browser forwards to the live server; any other is aborted."""
    blocked: list[str] = []
    page.route("**/*", only("docs.test", blocked, forward_to=live_server.url))

    page.goto("http://docs.test/api/docs/")

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Branchpoint API")
    expect(page.locator(".swagger-ui .opblock")).to_have_count(len(operations(schema)))
    expect(page.locator('.opblock-summary-path[data-path="/api/v1/trees/{tree_id}"]')).to_have_count(1)
    page.wait_for_load_state("networkidle")
    assert blocked == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "accept", "kind"),
    [
        ("", "", "application/vnd.oai.openapi"),
        ("?format=json", "", "application/vnd.oai.openapi+json"),
        ("?format=yaml", "", "application/vnd.oai.openapi"),
        ("", "application/json", "application/json"),
    ],
)
def test_the_schema_comes_as_yaml_or_as_json_by_format_or_accept(
    client: Client, query: str, accept: str, kind: str
) -> None:
    headers = {"HTTP_ACCEPT": accept} if accept else {}
    response = client.get("/api/schema/" + query, **headers)
    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == kind
    read = yaml.safe_load(response.content)  # JSON is YAML too
    assert read["openapi"].startswith("3.") and "/api/v1/me" in read["paths"]
    if "json" in kind:
        assert response.content.lstrip().startswith(b"{")


@pytest.mark.django_db
def test_the_schema_refuses_a_format_it_does_not_have(client: Client) -> None:
    response = client.get("/api/schema/?format=xml")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
