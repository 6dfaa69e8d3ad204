"""API of the collection workflow (under /api/v1/): the task loop, tree states, moderation, export."""

from django.urls import path

from annotation import converters
from annotation.collection import api

app_name = "collect-api"

BASE = "projects/<slug:name>/collect"
TASK = f"{BASE}/tasks/<{converters.DBID}:task_id>"
TREE = f"{BASE}/trees/<str:tree_id>"
MESSAGE = f"{TREE}/messages/<str:message_id>"

urlpatterns = [
    path(f"{BASE}/available", api.AvailableApi.as_view(), name="available"),
    path(f"{BASE}/tasks/next", api.TaskNextApi.as_view(), name="task-next"),
    path(TASK, api.TaskDetailApi.as_view(), name="task-detail"),
    path(f"{TASK}/ack", api.TaskAckApi.as_view(), name="task-ack"),
    path(f"{TASK}/nack", api.TaskNackApi.as_view(), name="task-nack"),
    path(f"{TASK}/submit", api.TaskSubmitApi.as_view(), name="task-submit"),
    path(f"{BASE}/export", api.ExportApi.as_view(), name="export"),
    path(TREE, api.TreeDetailApi.as_view(), name="tree-detail"),
    path(f"{TREE}/halt", api.TreeHaltApi.as_view(), name="tree-halt"),
    path(f"{TREE}/resume", api.TreeResumeApi.as_view(), name="tree-resume"),
    path(f"{MESSAGE}/delete", api.MessageDeleteApi.as_view(), name="message-delete"),
    path(f"{MESSAGE}/report", api.MessageReportApi.as_view(), name="message-report"),
    path(
        f"{BASE}/deletions/<{converters.DBID}:deletion_id>/undo",
        api.DeletionUndoApi.as_view(),
        name="deletion-undo",
    ),
]
