from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView

admin.site.site_header = "Branchpoint"
admin.site.site_title = "Branchpoint admin"
admin.site.index_title = "Datasets, projects and people"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", RedirectView.as_view(url="/admin/", permanent=False)),
]
