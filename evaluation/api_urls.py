"""API of rubric evaluation and reports (under /api/v1/)."""

urlpatterns: list = []
