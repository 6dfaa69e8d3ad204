"""API keys at rest: encrypted with a key derived from ``SECRET_KEY``, read where they are used.

Fernet (AES with an HMAC, from ``cryptography``) under a key derived by HKDF from Django's
``SECRET_KEY`` for this one purpose; keys saved under an earlier ``SECRET_KEY`` still read
while it is listed in ``SECRET_KEY_FALLBACKS``. A key is decrypted only to be sent, and
never returned by a page or the API.
"""

from __future__ import annotations

import base64
import os

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from evaluation.llm.models import ModelEndpoint

_INFO = b"branchpoint model endpoint api keys"


class KeyUnavailable(Exception):
    """The endpoint's key cannot be had: not readable, or its variable is not set."""


def _fernet_for(secret: str) -> Fernet:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def _fernet() -> MultiFernet:
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return MultiFernet([_fernet_for(secret) for secret in secrets])


def key_encrypt(plain: str) -> str:
    """The key as stored: a Fernet token (text)."""
    return _fernet().encrypt(plain.encode()).decode()


def key_decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise KeyUnavailable(
            "the stored API key cannot be read with this SECRET_KEY (was it changed without "
            "keeping the old one in SECRET_KEY_FALLBACKS?): enter the key again"
        ) from None


def endpoint_key(endpoint: ModelEndpoint) -> str:
    """The key to send to ``endpoint``: from its variable, else decrypted; "" when it has none
    (local servers such as Ollama or vLLM without ``--api-key`` take any)."""
    if endpoint.api_key_env:
        value = os.environ.get(endpoint.api_key_env)
        if not value:
            raise KeyUnavailable(
                f"the environment variable {endpoint.api_key_env} is not set in this process"
            )
        return value
    if endpoint.api_key_encrypted:
        return key_decrypt(endpoint.api_key_encrypted)
    return ""


def key_description(endpoint: ModelEndpoint) -> str:
    """How the endpoint gets its key, in words, without the key."""
    if endpoint.api_key_env:
        state = "set" if os.environ.get(endpoint.api_key_env) else "NOT set"
        return f"from the environment variable {endpoint.api_key_env} ({state} in this process)"
    if endpoint.api_key_encrypted:
        when = f", saved {endpoint.api_key_set_at:%Y-%m-%d %H:%M}" if endpoint.api_key_set_at else ""
        return f"stored encrypted{when}"
    return "none (the server takes requests without a key)"


def redacted(text: str, key: str) -> str:
    """``text`` with ``key`` blotted out: servers quote a wrong key in their error messages."""
    if key and len(key) >= 4:
        text = text.replace(key, "[API key]")
    return text
