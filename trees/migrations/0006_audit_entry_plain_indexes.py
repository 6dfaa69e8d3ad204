"""The audit log's ``action`` and ``scope`` indexes as named ones, without the
``varchar_pattern_ops`` twins ``db_index=True`` made for them on PostgreSQL.

The indexes are renamed, not rebuilt, and only the twins are dropped: the log can be
large, and building an index over it would hold its writes (every service's) meanwhile.
"""

from django.db import migrations, models

import trees.models

TABLE = "trees_auditentry"
# (column, the name ``db_index=True`` gave its index, the new name)
INDEXES = [
    ("action", "trees_auditentry_action_8fbe0018", "audit_entry_action"),
    ("scope", "trees_auditentry_scope_f84fc459", "audit_entry_scope"),
]


def plain_indexes(apps, schema_editor):
    quote = schema_editor.quote_name
    for column, old, new in INDEXES:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP INDEX IF EXISTS {quote(old + '_like')}")
            schema_editor.execute(f"ALTER INDEX {quote(old)} RENAME TO {quote(new)}")
        else:  # SQLite renames no index
            schema_editor.execute(f"DROP INDEX {quote(old)}")
            schema_editor.execute(f"CREATE INDEX {quote(new)} ON {quote(TABLE)} ({quote(column)})")


def twinned_indexes(apps, schema_editor):
    quote = schema_editor.quote_name
    for column, old, new in INDEXES:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"ALTER INDEX {quote(new)} RENAME TO {quote(old)}")
            schema_editor.execute(
                f"CREATE INDEX {quote(old + '_like')} ON {quote(TABLE)} ({quote(column)} varchar_pattern_ops)"
            )
        else:
            schema_editor.execute(f"DROP INDEX {quote(new)}")
            schema_editor.execute(f"CREATE INDEX {quote(old)} ON {quote(TABLE)} ({quote(column)})")


class Migration(migrations.Migration):
    dependencies = [
        ("trees", "0005_message_parent_index"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(plain_indexes, twinned_indexes)],
            state_operations=[
                migrations.AlterField(
                    model_name="auditentry",
                    name="action",
                    field=models.CharField(choices=trees.models.audit_actions, max_length=64),
                ),
                migrations.AlterField(
                    model_name="auditentry",
                    name="scope",
                    field=models.CharField(
                        blank=True, help_text="The project, dataset or person it happened in.", max_length=200
                    ),
                ),
                migrations.AddIndex(
                    model_name="auditentry",
                    index=models.Index(fields=["action"], name="audit_entry_action"),
                ),
                migrations.AddIndex(
                    model_name="auditentry",
                    index=models.Index(fields=["scope"], name="audit_entry_scope"),
                ),
            ],
        ),
    ]
