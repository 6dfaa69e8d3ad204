from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from evaluation.llm.models import ModelEndpoint
from evaluation.llm.services import endpoint_create
from tests.evaluation.llm.chat_server import ChatServer

API_KEY = "sk-test-0123456789abcdefSECRET"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    yield server
    server.close()


@pytest.fixture
def endpoint(chat_server: ChatServer, db: Any) -> ModelEndpoint:
    """An endpoint at the specs' server, with a stored key, quick retries and no pace."""
    return endpoint_create(
        name="local",
        base_url=chat_server.url,
        model="test-model",
        api_key=API_KEY,
        timeout_seconds=5,
        max_retries=2,
    )
