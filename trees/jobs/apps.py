from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "trees.jobs"
    label = "jobs"
    verbose_name = "Jobs"
    default_auto_field = "django.db.models.BigAutoField"
