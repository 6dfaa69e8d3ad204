from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        # Adds the ``rubric`` type to annotation's scheme registry (annotation never imports evaluation).
        from evaluation import schemes  # noqa: F401
        from evaluation.links import rubric_reports_link  # noqa: F401 - registers the project link
