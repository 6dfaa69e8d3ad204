"""Fixtures of the API's specs: the persona world (tests/api/world.py) and clients for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from tests.api.world import World, build_world


@pytest.fixture
def world(db: Any) -> World:
    """A fresh world for one test."""
    return build_world()


@pytest.fixture(scope="module")
def shared_world(django_db_setup: Any, django_db_blocker: Any) -> Iterator[World]:
    """One world for a whole module of read-mostly specs (each test still runs in its own
    transaction, rolled back after it, inside this one, which is rolled back at the end)."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield build_world()
        transaction.set_rollback(True)


def token_client(world: World, persona: str) -> Client:
    """A client sending ``persona``'s token (none for the anonymous persona)."""
    return Client(**world.headers(persona))
