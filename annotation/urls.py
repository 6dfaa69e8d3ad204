"""The annotator's and the reviewer's pages."""

from django.urls import path

from annotation import converters, review_views, views

app_name = "annotation"

urlpatterns = [
    path("projects/", views.project_list, name="projects"),
    path("projects/<slug:name>/", views.project_detail, name="project"),
    path(f"projects/<slug:name>/items/<{converters.DBID}:tree_id>/", views.item_annotate, name="item"),
    path("projects/<slug:name>/review/", review_views.review_list, name="review"),
    path(
        f"projects/<slug:name>/review/<{converters.DBID}:tree_id>/",
        review_views.review_item_page,
        name="review-item",
    ),
    path("projects/<slug:name>/export/", views.project_export, name="export"),
    path("projects/<slug:name>/quality/", views.project_quality, name="quality"),
]
