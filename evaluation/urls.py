"""Pages of evaluation: a project's agreement, a model judge's report, its rubrics, each
rubric's report, the results behind its figures, and its downloads."""

from django.urls import path, re_path

from evaluation import judge_pages, result_pages, views

app_name = "evaluation"

REPORT = r"projects/(?P<name>[-a-zA-Z0-9_]+)/rubrics/(?P<rubric>[-a-zA-Z0-9_]+)"

urlpatterns = [
    path("projects/<slug:name>/agreement/", views.project_agreement, name="agreement"),
    path("projects/<slug:name>/judges/<slug:judge>/", judge_pages.judge_report_page, name="judge-report"),
    path("projects/<slug:name>/rubrics/", views.project_rubrics, name="project-rubrics"),
    path("projects/<slug:name>/rubrics/<slug:rubric>/", views.rubric_report, name="report"),
    path("projects/<slug:name>/rubrics/<slug:rubric>/results/", result_pages.rubric_results, name="results"),
    re_path(rf"^{REPORT}/report\.(?P<fmt>json|csv)$", views.rubric_report_download, name="report-download"),
    re_path(
        rf"^{REPORT}/results\.(?P<fmt>jsonl|csv)$", views.rubric_results_download, name="results-download"
    ),
]
