from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0013_annotator_progress"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="last_page_save",
            field=models.CharField(blank=True, default="", max_length=48),
        ),
    ]
