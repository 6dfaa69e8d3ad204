from django.apps import AppConfig

# What this app's services write to the audit log (trees.audit), with the labels the admin shows.
AUDIT_ACTIONS = {
    "rubric.create": "created a rubric",
    "rubric.version": "saved a new version of a rubric",
    "rubric.delete": "deleted a rubric",
    "evaluation.run": "ran a rubric's automatic checks",
    "evaluation.combine": "updated the judges' results",
    "evaluation.result_delete": "deleted an evaluation result",
}


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        # Adds the ``rubric`` type to annotation's scheme registry (annotation never imports evaluation).
        from evaluation import schemes  # noqa: F401
        from evaluation.links import rubric_reports_link  # noqa: F401 - registers the project link
        from trees.audit import actions_register

        actions_register(AUDIT_ACTIONS)
