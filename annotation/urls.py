"""The annotator's and the reviewer's pages, each group's views under one prefix."""

from django.urls import path

from annotation import converters
from annotation.exports import views as exports
from annotation.projects import views as projects
from annotation.quality import views as quality
from annotation.review import adjudication_views as adjudication
from annotation.review import views as review
from annotation.work import views as work

app_name = "annotation"

ITEM = f"projects/<slug:name>/items/<{converters.DBID}:tree_id>/"

urlpatterns = [
    path("projects/", projects.project_list, name="projects"),
    path("projects/<slug:name>/", work.project_detail, name="project"),
    path("projects/<slug:name>/mine/", work.my_work_page, name="my-work"),
    path(ITEM, work.item_annotate, name="item"),
    path("projects/<slug:name>/review/", review.review_list, name="review"),
    path(
        f"projects/<slug:name>/review/<{converters.DBID}:tree_id>/",
        review.review_item_page,
        name="review-item",
    ),
    path(
        f"projects/<slug:name>/review/<{converters.DBID}:tree_id>/gold/",
        review.review_gold,
        name="review-gold",
    ),
    path("projects/<slug:name>/adjudicate/", adjudication.adjudication_list, name="adjudication"),
    path(
        f"projects/<slug:name>/adjudicate/<{converters.DBID}:tree_id>/",
        adjudication.adjudication_page,
        name="adjudicate-item",
    ),
    path("projects/<slug:name>/export/", exports.project_export, name="export"),
    path("projects/<slug:name>/quality/", quality.project_quality, name="quality"),
]
