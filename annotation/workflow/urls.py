"""Pages and API of the collection workflow."""

urlpatterns: list = []
