"""Pages of the collection workflow: the task picker and the task pages."""

from django.urls import path

from annotation import converters
from annotation.collection import views

app_name = "collection"

TASK = f"collect/<slug:name>/tasks/<{converters.DBID}:task_id>/"

urlpatterns = [
    path("collect/<slug:name>/", views.picker, name="picker"),
    path("collect/<slug:name>/next", views.next_task, name="next"),
    path(TASK, views.task_page, name="task"),
    path(f"{TASK}skip", views.skip_task, name="skip"),
    path(f"{TASK}report", views.report_message, name="report"),
]
