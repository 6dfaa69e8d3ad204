"""The collection app was called ``workflow`` (its label, its tables) until it was renamed.

A database made before the rename has ``workflow_*`` tables, content types and
audit targets labelled ``workflow``, and ``workflow``'s 0001 recorded as applied.
``migrate`` with the renamed app keeps every row: the tables are renamed in place,
the content types keep their ids (so permissions follow), the audit entries name
their targets by the new label.

The database is put in that state by migrating back to ``collection`` 0001 (which
creates the tables under their old names) and recording the migration as the old
app's, with rows the services wrote.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from annotation.collection.models import CollectedTree, Deletion, Report, Task
from annotation.collection.moderation import message_delete, report_create
from tests.annotation.collection.collect import collect_project, person, prompt, review
from trees.models import AuditEntry

pytestmark = pytest.mark.django_db(transaction=True)

MODELS = {"collectedtree": CollectedTree, "deletion": Deletion, "report": Report, "task": Task}


def _tables() -> set[str]:
    return set(connection.introspection.table_names())


def _rows() -> dict[str, list[int]]:
    return {name: sorted(model.objects.values_list("pk", flat=True)) for name, model in MODELS.items()}


def _back_to_before_the_rename() -> None:
    MigrationExecutor(connection).migrate([("collection", "0001_initial")])
    recorder = MigrationRecorder(connection)
    recorder.migration_qs.filter(app="collection").delete()
    recorder.record_applied("workflow", "0001_initial")


def _migrate() -> list[str]:
    executor = MigrationExecutor(connection)
    targets = executor.loader.graph.leaf_nodes()
    plan = [f"{migration.app_label}.{migration.name}" for migration, _ in executor.migration_plan(targets)]
    executor.migrate(targets)
    return plan


@pytest.fixture
def collected():
    """Rows in every table of the app, written by its services, and a permission on one of them."""
    ann, bob, cid, mod = person("ann"), person("bob"), person("cid"), person("mod")
    project = collect_project([ann, bob, cid])
    message = prompt(project, ann)
    review(project, [bob, cid], message)
    report_create(project=project, message=message, user=bob, reason="spam?")
    message_delete(project=project, message=message, by=mod, reason="PII")
    mod.user_permissions.add(
        Permission.objects.get(content_type__app_label="collection", codename="view_task")
    )
    return mod


def test_migrate_from_before_the_rename_keeps_every_row(collected):
    rows = _rows()
    assert all(rows.values()), rows
    task_type = ContentType.objects.get(app_label="collection", model="task")
    logged = AuditEntry.objects.filter(target_type="collection.task").count()
    assert logged > 0

    _back_to_before_the_rename()
    assert {f"workflow_{name}" for name in MODELS} <= _tables()
    assert not {f"collection_{name}" for name in MODELS} & _tables()
    assert ContentType.objects.filter(app_label="workflow", model="task").exists()
    assert AuditEntry.objects.filter(target_type="workflow.task").count() == logged

    plan = _migrate()  # the rename, then the app's later migrations
    assert plan[0] == "collection.0002_rename_from_workflow"
    assert all(name.startswith("collection.") for name in plan)

    assert {f"collection_{name}" for name in MODELS} <= _tables()
    assert not {f"workflow_{name}" for name in MODELS} & _tables()
    assert _rows() == rows
    assert ContentType.objects.get(app_label="collection", model="task").pk == task_type.pk
    assert not ContentType.objects.filter(app_label="workflow").exists()
    assert AuditEntry.objects.filter(target_type="collection.task").count() == logged
    assert not AuditEntry.objects.filter(target_type__startswith="workflow.").exists()
    collected.refresh_from_db()
    assert type(collected).objects.get(pk=collected.pk).has_perm("collection.view_task")


def test_a_new_database_migrates_straight_to_the_new_names():
    assert {f"collection_{name}" for name in MODELS} <= _tables()
    assert not {f"workflow_{name}" for name in MODELS} & _tables()
    assert _migrate() == []
