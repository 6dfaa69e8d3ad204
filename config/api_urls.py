"""Everything under /api/v1/: each app's endpoints, then a JSON 404 for the rest."""

from django.urls import include, path, re_path

from annotation.api.errors import EndpointNotFoundApi

urlpatterns = [
    path("", include("annotation.api.urls")),
    path("", include("annotation.collection.api_urls")),
    path("", include("evaluation.api_urls")),
    re_path(r"", EndpointNotFoundApi.as_view()),
]
