from django.apps import AppConfig


class WorkflowConfig(AppConfig):
    """The collection workflow (Open-Assistant's tasks and tree states).

    A Django app of its own inside ``annotation`` so that its tables and
    migrations stay apart from the annotation ones it builds on.
    """

    name = "annotation.workflow"
    label = "workflow"
    verbose_name = "Tree collection"
