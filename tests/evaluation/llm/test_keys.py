"""API keys at rest: encrypted under a key derived from SECRET_KEY, readable again only
under that SECRET_KEY or one kept in SECRET_KEY_FALLBACKS."""

from __future__ import annotations

import pytest

from evaluation.llm.keys import KeyUnavailable, endpoint_key, key_decrypt, key_encrypt
from evaluation.llm.services import endpoint_create

SECRET = "sk-live-abcdefghijklmnop"


def test_a_key_is_stored_encrypted_and_read_back(db):
    endpoint = endpoint_create(
        name="hosted", base_url="https://api.example.com/v1", model="m", api_key=SECRET
    )
    endpoint.refresh_from_db()

    assert SECRET not in endpoint.api_key_encrypted
    assert endpoint_key(endpoint) == SECRET
    assert endpoint.api_key_set_at is not None


def test_the_same_key_encrypts_differently_each_time():
    assert key_encrypt(SECRET) != key_encrypt(SECRET)


def test_a_changed_secret_key_cannot_read_it_unless_the_old_one_is_a_fallback(settings):
    stored = key_encrypt(SECRET)
    old = settings.SECRET_KEY

    settings.SECRET_KEY = "a-new-secret-key"
    with pytest.raises(KeyUnavailable, match="enter the key again"):
        key_decrypt(stored)

    settings.SECRET_KEY_FALLBACKS = [old]
    assert key_decrypt(stored) == SECRET


def test_an_endpoint_without_a_key_sends_none(db):
    endpoint = endpoint_create(name="ollama", base_url="http://127.0.0.1:11434/v1", model="llama3.2")
    assert endpoint_key(endpoint) == ""
