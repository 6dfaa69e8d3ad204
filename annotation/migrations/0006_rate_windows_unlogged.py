"""Throttle windows in an UNLOGGED table on PostgreSQL.

Every API request counts itself in this table (annotation.api.throttling) in a
statement of its own; a logged table makes each of them wait for a WAL flush.
The counts only need to outlive a window: after a crash PostgreSQL empties an
unlogged table, which resets the limits and loses nothing else.
"""

from django.db import migrations


def set_logging(logged: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("annotation", "RateWindow")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} SET {'LOGGED' if logged else 'UNLOGGED'}")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_open_items"),
    ]

    operations = [
        migrations.RunPython(set_logging(False), set_logging(True)),
    ]
