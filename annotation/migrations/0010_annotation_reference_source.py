"""Reference answers are marked as such: ``Annotation.Source.REFERENCE``.

Before, a corpus's spans (``annotation.projects.references``) were answers by the account
``ccpe-gold`` with ``source=import``, told apart from annotators' work by nothing but the
account's name, so agreement counted them as a third annotator and exports wrote them as
anyone's work. Here they are marked for what they are; from now on the import marks them
itself. The name appears here only: it is the account those answers were made under.
"""

from django.conf import settings
from django.db import migrations, models

# The account annotation.projects.references made the corpus's answers under.
REFERENCE_USERNAME = "ccpe-gold"


def references_mark(apps, schema_editor):
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    Annotation = apps.get_model("annotation", "Annotation")
    username_field = getattr(User, "USERNAME_FIELD", "username")
    owner = User._default_manager.filter(**{username_field: REFERENCE_USERNAME}).first()
    if owner is not None:
        Annotation._default_manager.filter(user=owner, source="import").update(source="reference")


def references_unmark(apps, schema_editor):
    Annotation = apps.get_model("annotation", "Annotation")
    Annotation._default_manager.filter(source="reference").update(source="import")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0009_username_keys'),
    ]

    operations = [
        migrations.AlterField(
            model_name='annotation',
            name='source',
            field=models.CharField(choices=[('human', 'Human'), ('import', 'Import'), ('model', 'Model'), ('reference', 'Reference')], default='human', max_length=16),
        ),
        migrations.RunPython(references_mark, references_unmark),
    ]
