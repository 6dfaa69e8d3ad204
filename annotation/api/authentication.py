"""API tokens on the wire: ``Authorization: Bearer <token>`` (``Token <token>`` is read too).

A request without the header falls through to the session (the pages'
scripts); a request with a bad, revoked or expired token is refused with a
401 rather than served anonymously, so an integration learns at once that its
token stopped working.
"""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from annotation.api.tokens import TokenInvalid, token_authenticate

SCHEMES = (b"bearer", b"token")


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in SCHEMES:
            return None  # no token: the session may still identify the caller
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "the Authorization header must be 'Bearer <token>'", code="authentication_failed"
            )
        try:
            secret = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the token is not valid") from None
        try:
            token = token_authenticate(secret)
        except TokenInvalid as error:
            raise exceptions.AuthenticationFailed(str(error)) from None
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


# The schema's description of this class (an OpenAPI extension registers itself on import).
from annotation.api import schema as _schema  # noqa: E402, F401
