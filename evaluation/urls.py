"""Pages and API of rubric evaluation and reports."""

urlpatterns: list = []
