"""API of rubric evaluation, reports and agreement (under /api/v1/; see evaluation/api.py)."""

from django.urls import path

from evaluation import api, judge_api
from evaluation.llm import api as judges_api

app_name = "evaluation-api"

PROJECT_RUBRIC = "projects/<slug:name>/rubrics/<slug:rubric>"

urlpatterns = [
    path("rubrics", api.RubricCreateApi.as_view(), name="rubrics"),
    path("rubrics/<slug:rubric>", api.RubricDetailApi.as_view(), name="rubric"),
    path(f"{PROJECT_RUBRIC}/evaluate", api.EvaluateApi.as_view(), name="evaluate"),
    path(f"{PROJECT_RUBRIC}/evaluate-jobs", api.EvaluateJobApi.as_view(), name="evaluate-jobs"),
    path(f"{PROJECT_RUBRIC}/results", api.ResultsApi.as_view(), name="results"),
    path(f"{PROJECT_RUBRIC}/report", api.ReportApi.as_view(), name="report"),
    path("projects/<slug:name>/agreement", api.AgreementApi.as_view(), name="agreement"),
    path("projects/<slug:name>/agreement-jobs", api.AgreementJobApi.as_view(), name="agreement-jobs"),
    path("judges", judges_api.JudgeListApi.as_view(), name="judges"),
    path("judges/<slug:judge>/runs", judges_api.JudgeRunApi.as_view(), name="judge-runs"),
    path(
        "projects/<slug:name>/judges/<slug:judge>/report",
        judge_api.JudgeReportApi.as_view(),
        name="judge-report",
    ),
]
