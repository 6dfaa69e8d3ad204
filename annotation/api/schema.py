"""The OpenAPI schema's shared parts: how tokens are sent, and the error responses every
operation can give, in the one shape ``errors.py`` writes.

Views describe their own success responses (and the errors that mean
something particular to them, such as a 409); this hook adds the rest to
every operation, so the schema lists each status a client can meet.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

ERROR = {
    "type": "object",
    "description": "Every error: a machine-readable `code` and a sentence; refused input lists each "
    "problem with its `path` (`annotations.quality.rating`, `items[3].tree.children[1]`).",
    "properties": {
        "code": {"type": "string", "example": "invalid"},
        "message": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "code": {"type": "string"},
                    "path": {"type": "string"},
                    "message": {"type": "string"},
                },
                "required": ["code", "path", "message"],
            },
        },
    },
    "required": ["code", "message"],
}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
ALWAYS = {
    "401": "`not_authenticated` or `authentication_failed` (a bad, revoked or expired token).",
    "403": "`permission_denied`: the caller may not do this here.",
    "404": "`not_found`: no such thing, or one the caller may not see.",
    "429": "`throttled`: too many requests; `Retry-After` says when to try again.",
}
WITH_INPUT = {"400": "`invalid` (with `errors`), `parse_error`: the request is refused, with where and why."}
WITH_BODY = {"413": "`too_large`: the body is over the limit (the message says it)."}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "annotation.api.authentication.BearerTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token from the admin or `manage.py create_token USER`: "
            "`Authorization: Bearer bp_...` (`Token bp_...` is read too).",
        }


def postprocess_error_responses(result: dict[str, Any], generator: Any, **kwargs: Any) -> dict[str, Any]:
    """Add the shared error responses to every operation (those it documents itself stay)."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            errors = dict(ALWAYS)
            if operation.get("parameters") or operation.get("requestBody"):
                errors |= WITH_INPUT
            if operation.get("requestBody"):
                errors |= WITH_BODY
            responses = operation.setdefault("responses", {})
            for code, description in errors.items():
                response = responses.setdefault(code, {"description": description})
                response.setdefault("content", {"application/json": {"schema": ERROR_REF}})
                if code == "429":
                    response.setdefault(
                        "headers",
                        {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}},
                    )
            for code, response in responses.items():
                # Errors a view documents with a description only get the shared shape.
                if code.startswith(("4", "5")) and "content" not in response:
                    response["content"] = {"application/json": {"schema": ERROR_REF}}
    return result
