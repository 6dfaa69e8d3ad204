"""The annotator's pages."""

from django.urls import path

from annotation import converters, views

app_name = "annotation"

urlpatterns = [
    path("projects/", views.project_list, name="projects"),
    path("projects/<slug:name>/", views.project_detail, name="project"),
    path(f"projects/<slug:name>/items/<{converters.DBID}:tree_id>/", views.item_annotate, name="item"),
]
