from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0015_suggestion_shown"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["project", "user", "updated_at", "id"], name="assignment_my_work"),
        ),
    ]
