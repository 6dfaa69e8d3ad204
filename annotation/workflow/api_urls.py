"""API of the collection workflow (under /api/v1/)."""

urlpatterns: list = []
