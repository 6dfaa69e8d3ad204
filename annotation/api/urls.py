"""``/api/v1/``: the annotator's loop, scoped by project name and tree id."""

from django.urls import path

from annotation import converters
from annotation.api import views

app_name = "api"

ITEM = f"projects/<slug:name>/items/<{converters.DBID}:tree_id>"

urlpatterns = [
    path("projects/<slug:name>/items/next", views.ItemNextApi.as_view(), name="item-next"),
    path(ITEM, views.ItemDetailApi.as_view(), name="item-detail"),
    path(f"{ITEM}/draft", views.ItemDraftApi.as_view(), name="item-draft"),
    path(f"{ITEM}/submit", views.ItemSubmitApi.as_view(), name="item-submit"),
    path(f"{ITEM}/skip", views.ItemSkipApi.as_view(), name="item-skip"),
]
