from django.apps import AppConfig

# What this app's services write to the audit log (trees.audit), with the labels the admin shows.
AUDIT_ACTIONS = {
    "project.create": "created a project",
    "project.update": "changed a project",
    "project.config_update": "changed a project's configuration",
    "project.delete": "deleted a project",
    "membership.add": "added a member",
    "membership.remove": "removed a member",
    "annotations.import": "imported annotations",
    "annotations.export": "exported annotations",
    "assignment.lease": "took an item",
    "annotation.create": "started annotating an item",
    "annotation.update": "saved a draft",
    "annotation.submit": "submitted an item",
    "annotation.skip": "skipped an item",
    "annotation.review": "reviewed an item",
    "final.save": "adjudicated an item's final answer",
    "final.auto": "made an item's final answer by the automatic rule",
    "gold.set": "set an item's expected answers",
    "gold.mark": "made an item gold",
    "gold.unmark": "made an item ordinary again",
    "gold.import": "imported gold answers",
    "token.create": "made an API token",
    "token.revoke": "revoked an API token",
    "token.delete": "deleted an API token",
    "login.unlock": "unlocked a login",
}


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from annotation import receivers  # noqa: F401 - connects the signal receivers
        from trees.audit import actions_register

        actions_register(AUDIT_ACTIONS)
