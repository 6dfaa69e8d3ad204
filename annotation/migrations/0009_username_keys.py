"""Username keys (annotation.projects.usernames): one per account, under a unique index.

Existing accounts get theirs here. Where two already look alike (``root`` and ``Root``),
the older keeps the key, the others get none, and the migration says which: rename them
(the admin's user page) and they get their keys on that save. Nothing is refused or
deleted: a deployment with such accounts migrates, and is told. ``manage.py
usernames_check`` lists them again until they are renamed.
"""

import sys

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def keys_make(apps, schema_editor):
    from annotation.projects.usernames import username_keys_make

    users = apps.get_model(*settings.AUTH_USER_MODEL.split("."))._default_manager.all()
    keys = apps.get_model("annotation", "UsernameKey")._default_manager
    clashes = username_keys_make(users, keys)
    if clashes:
        sys.stdout.write(
            "\n  Usernames that look alike (the first keeps its name; rename the others, and they get"
            " their keys):\n"
        )
        for group in clashes:
            sys.stdout.write("    " + ", ".join(f'"{name}"' for name in group) + "\n")


class Migration(migrations.Migration):

    dependencies = [
        ('annotation', '0008_annotation_by_user'),
        ('auth', '0012_alter_user_first_name_max_length'),
    ]

    operations = [
        migrations.CreateModel(
            name='UsernameKey',
            fields=[
                ('user', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='username_key', serialize=False, to=settings.AUTH_USER_MODEL)),
                ('key', models.CharField(max_length=600, unique=True)),
            ],
            options={
                'verbose_name': 'username key',
            },
        ),
        migrations.RunPython(keys_make, migrations.RunPython.noop),
    ]
