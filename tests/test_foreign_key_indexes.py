"""Every foreign key of our models leads some index, in the migrated database itself.

Deleting a row makes the database check every foreign key that may point at it: without an
index led by that key's column, each check reads the whole referring table (deleting the
messages of 100 trees in a 10,000-tree dataset took 28 s before ``message.parent_id`` had
one). The check reads the constraints the migrations made, so a new foreign key declared with
``db_index=False`` and no index of its own fails here, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import connection
from django.db.models import Model

# Branchpoint's own packages: their apps' models are checked, Django's and third parties' not.
PACKAGES = ("trees", "annotation", "evaluation")


def own_models() -> list[type[Model]]:
    """The concrete models of Branchpoint's own apps."""
    return [
        model
        for config in apps.get_app_configs()
        if config.name.split(".")[0] in PACKAGES
        for model in config.get_models()
        if not model._meta.proxy and model._meta.managed
    ]


def leading_columns(table: str) -> set[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return {
        details["columns"][0]
        for details in constraints.values()
        if details["columns"] and (details["index"] or details["unique"] or details["primary_key"])
    }


def test_the_audit_covers_every_app_of_ours():
    labels = {model._meta.app_label for model in own_models()}
    assert {"trees", "annotation", "collection", "webhooks", "evaluation"} <= labels


@pytest.mark.django_db
@pytest.mark.parametrize("model", own_models(), ids=lambda model: model._meta.label)
def test_every_foreign_key_leads_an_index(model):
    leading = leading_columns(model._meta.db_table)
    unindexed = [
        field.name
        for field in model._meta.concrete_fields
        if field.is_relation and field.column not in leading
    ]
    assert unindexed == [], f"{model._meta.label}: no index starts with {unindexed}"
