from django.apps import AppConfig

# What this app's services write to the audit log (trees.audit), with the labels the admin shows.
AUDIT_ACTIONS = {
    "endpoint.create": "added a model endpoint",
    "endpoint.update": "changed a model endpoint",
    "endpoint.delete": "deleted a model endpoint",
    "judge.create": "added a model judge",
    "judge.update": "changed a model judge",
    "judge.delete": "deleted a model judge",
}


class LlmConfig(AppConfig):
    """Models in the loop: a Django app of its own inside ``evaluation`` (see the package's docstring)."""

    name = "evaluation.llm"
    label = "llm"
    verbose_name = "Models in the loop"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from trees.audit import actions_register

        actions_register(AUDIT_ACTIONS)
