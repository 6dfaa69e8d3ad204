from django.apps import AppConfig

# What this app's services write to the audit log (trees.audit), with the labels the admin shows;
# every move of a tree is ``tree.<event>`` too (annotation.collection.lifecycle).
AUDIT_ACTIONS = {
    "task.lease": "took a task",
    "task.ack": "opened a task",
    "task.skip": "skipped a task",
    "task.submit": "submitted a task",
    "message.delete": "deleted a message",
    "message.restore": "undid a message's deletion",
    "message.report": "reported a message",
    "backlog.add": "added trees to the ranking backlog",
    "collected.export": "exported collected trees",
}


class CollectionConfig(AppConfig):
    """Tree collection: Open-Assistant's workflow of tasks and tree states.

    A Django app of its own inside ``annotation`` so that its tables and
    migrations stay apart from the annotation ones it builds on. Its label was
    ``workflow`` until the app was renamed; migration 0002 moves what carried
    that label (tables, content types, audit targets) to ``collection``.
    """

    name = "annotation.collection"
    label = "collection"
    verbose_name = "Tree collection"

    def ready(self) -> None:
        from annotation.collection import backlog, lifecycle  # noqa: F401 - backlog listens to tree_finished
        from annotation.collection.selectors import collection_summaries
        from annotation.models import Project
        from annotation.projects.selectors import project_summaries_register
        from trees.audit import actions_register

        project_summaries_register(Project.Mode.COLLECT, collection_summaries)

        actions_register(AUDIT_ACTIONS)
        events = sorted({event for _, event in lifecycle.TRANSITIONS})
        actions_register({f"tree.{event}": f"moved a tree on: {event.replace('_', ' ')}" for event in events})
