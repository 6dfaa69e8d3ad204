"""The app's label and tables move from ``workflow`` to ``collection``.

Tables are renamed in place (no row is copied); the content types keep their
ids under the new label, so permissions, groups and the admin's history keep
pointing at them; audit entries name their targets by the new label.
"""

from django.db import migrations

MODELS = ("collectedtree", "deletion", "report", "task", "moderatedmessage")


def _relabel(apps, old: str, new: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    AuditEntry = apps.get_model("trees", "AuditEntry")
    taken = set(ContentType.objects.filter(app_label=new).values_list("model", flat=True))
    ContentType.objects.filter(app_label=old, model__in=[m for m in MODELS if m not in taken]).update(
        app_label=new
    )
    for model in MODELS:
        AuditEntry.objects.filter(target_type=f"{old}.{model}").update(target_type=f"{new}.{model}")


def forwards(apps, schema_editor) -> None:
    _relabel(apps, "workflow", "collection")


def backwards(apps, schema_editor) -> None:
    _relabel(apps, "collection", "workflow")


class Migration(migrations.Migration):
    dependencies = [
        ("collection", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("trees", "0003_audit_entry"),
    ]

    operations = [
        migrations.AlterModelTable(name="collectedtree", table=None),
        migrations.AlterModelTable(name="deletion", table=None),
        migrations.AlterModelTable(name="report", table=None),
        migrations.AlterModelTable(name="task", table=None),
        migrations.RunPython(forwards, backwards),
    ]
