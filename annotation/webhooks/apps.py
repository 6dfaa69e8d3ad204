from django.apps import AppConfig

# What this app's services write to the audit log (trees.audit), with the labels the admin shows.
AUDIT_ACTIONS = {
    "webhook.create": "added a webhook",
    "webhook.update": "changed a webhook",
    "webhook.delete": "deleted a webhook",
    "webhook.replay": "replayed webhook deliveries",
}


class WebhooksConfig(AppConfig):
    """Webhooks: a Django app of its own inside ``annotation`` (see the package's docstring)."""

    name = "annotation.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotation.webhooks import events  # noqa: F401 - connects the receivers
        from trees.audit import actions_register

        actions_register(AUDIT_ACTIONS)
