from csp.constants import NONCE
from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from annotation.projects import views as annotation_views
from config.api_schema import SchemaView

admin.site.site_header = "Branchpoint"
admin.site.site_title = "Branchpoint admin"
admin.site.index_title = "Datasets, projects and people"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("config.api_urls")),
    # The OpenAPI 3 schema of /api/v1/ and its docs (Swagger UI, Redoc), served from our static files.
    # Both docs pages run under the site's Content-Security-Policy: Swagger UI's start-up script
    # is a file of its own (the split view); Redoc writes <style> elements, which get a nonce
    # (templates/drf_spectacular/redoc.html), and runs its search in a worker made from a blob.
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path(
        "api/redoc/",
        csp_update({"style-src": [NONCE], "worker-src": ["'self'", "blob:"]})(
            SpectacularRedocView.as_view(url_name="api-schema")
        ),
        name="api-redoc",
    ),
    path("", include("annotation.collection.urls")),
    path("", include("evaluation.urls")),
    path("", include("annotation.urls")),
    path("", annotation_views.home, name="home"),
]

# Errors no view answered: JSON under /api/, the site's pages elsewhere (config/errors.py).
handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"
