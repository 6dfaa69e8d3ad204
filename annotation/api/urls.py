"""``/api/v1/``: datasets and trees, projects and members, the annotator's items, annotations,
review, final answers, gold items and quality, webhooks."""

from django.urls import path

from annotation import converters
from annotation.api import (
    annotations,
    datasets,
    finals,
    gold,
    items,
    jobs,
    me,
    my_work,
    projects,
    quality,
    review,
    trees,
    webhooks,
)

app_name = "api"

DATASET = "datasets/<slug:name>"
PROJECT = "projects/<slug:name>"
ITEM = f"{PROJECT}/items/<{converters.DBID}:tree_id>"
WEBHOOK = f"{PROJECT}/webhooks/<{converters.DBID}:webhook_id>"

urlpatterns = [
    path("me", me.MeApi.as_view(), name="me"),
    path("datasets", datasets.DatasetsApi.as_view(), name="datasets"),
    path(DATASET, datasets.DatasetDetailApi.as_view(), name="dataset"),
    path(f"{DATASET}/import", datasets.DatasetImportApi.as_view(), name="dataset-import"),
    path(f"{DATASET}/export", datasets.DatasetExportApi.as_view(), name="dataset-export"),
    path("trees", trees.TreesApi.as_view(), name="trees"),
    path(f"trees/<{converters.DBID}:tree_id>", trees.TreeDetailApi.as_view(), name="tree"),
    path("projects", projects.ProjectsApi.as_view(), name="projects"),
    path(PROJECT, projects.ProjectDetailApi.as_view(), name="project"),
    path(f"{PROJECT}/members", projects.MembersApi.as_view(), name="members"),
    path(
        f"{PROJECT}/members/<{converters.DBID}:membership_id>",
        projects.MemberDetailApi.as_view(),
        name="member",
    ),
    path(f"{PROJECT}/items/next", items.ItemNextApi.as_view(), name="item-next"),
    path(f"{PROJECT}/items/mine", my_work.MyWorkApi.as_view(), name="items-mine"),
    path(ITEM, items.ItemDetailApi.as_view(), name="item-detail"),
    path(f"{ITEM}/draft", items.ItemDraftApi.as_view(), name="item-draft"),
    path(f"{ITEM}/submit", items.ItemSubmitApi.as_view(), name="item-submit"),
    path(f"{ITEM}/skip", items.ItemSkipApi.as_view(), name="item-skip"),
    path(f"{ITEM}/final", finals.ItemFinalApi.as_view(), name="item-final"),
    path(f"{PROJECT}/review", review.ReviewQueueApi.as_view(), name="review-queue"),
    path(f"{PROJECT}/review/<{converters.DBID}:tree_id>", review.ReviewItemApi.as_view(), name="review-item"),
    path(
        f"{PROJECT}/review/<{converters.DBID}:tree_id>/decisions",
        review.ReviewDecisionsApi.as_view(),
        name="review-decisions",
    ),
    path(f"{PROJECT}/gold", gold.GoldItemsApi.as_view(), name="gold-items"),
    path(f"{PROJECT}/gold/import", gold.GoldImportApi.as_view(), name="gold-import"),
    path(f"{PROJECT}/gold/<{converters.DBID}:tree_id>", gold.GoldItemApi.as_view(), name="gold-item"),
    path(f"{PROJECT}/quality", quality.QualityApi.as_view(), name="quality"),
    path(f"{PROJECT}/training", quality.TrainingApi.as_view(), name="training"),
    path(f"{PROJECT}/webhooks", webhooks.WebhooksApi.as_view(), name="webhooks"),
    path(WEBHOOK, webhooks.WebhookDetailApi.as_view(), name="webhook"),
    path(f"{WEBHOOK}/deliveries", webhooks.DeliveriesApi.as_view(), name="webhook-deliveries"),
    path(f"{PROJECT}/export", annotations.ProjectExportApi.as_view(), name="project-export"),
    path(f"{PROJECT}/import", annotations.ProjectImportApi.as_view(), name="project-import"),
    path(f"{PROJECT}/export-jobs", annotations.ProjectExportJobApi.as_view(), name="project-export-jobs"),
    path("annotations", annotations.AnnotationsApi.as_view(), name="annotations"),
    path("jobs", jobs.JobsApi.as_view(), name="jobs"),
    path(f"jobs/<{converters.DBID}:job_id>", jobs.JobDetailApi.as_view(), name="job"),
    path(f"jobs/<{converters.DBID}:job_id>/cancel", jobs.JobCancelApi.as_view(), name="job-cancel"),
    path(f"jobs/<{converters.DBID}:job_id>/file", jobs.JobFileApi.as_view(), name="job-file"),
    path(
        f"annotations/<{converters.DBID}:annotation_id>",
        annotations.AnnotationDetailApi.as_view(),
        name="annotation",
    ),
]
