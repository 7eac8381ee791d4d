from __future__ import annotations

from django.urls import path

from . import api, views

app_name = "catalog"

urlpatterns = [
    path("catalog/", views.catalog, name="index"),
    path("catalog/import/", views.import_tools, name="import"),
    path("catalog/sandboxes/new/", views.sandbox_create, name="sandbox-create"),
    path("catalog/sandboxes/<int:pk>/", views.sandbox_detail, name="sandbox"),
    path("catalog/sandboxes/<int:pk>/edit/", views.sandbox_edit, name="sandbox-edit"),
    path(
        "catalog/sandboxes/<int:pk>/accept-dependencies/",
        views.sandbox_accept_dependencies,
        name="sandbox-accept-dependencies",
    ),
    path(
        "catalog/sandboxes/<int:pk>/dependencies/",
        views.sandbox_dependencies,
        name="sandbox-dependencies",
    ),
    path("catalog/sandboxes/<int:pk>/image/", views.sandbox_image_status, name="sandbox-image"),
    path("catalog/sandboxes/<int:pk>/build/", views.sandbox_build, name="sandbox-build"),
    path("catalog/sandboxes/<int:pk>/secrets/", views.sandbox_secret, name="sandbox-secret"),
    path("catalog/sandboxes/<int:pk>/export.py", views.sandbox_export, name="sandbox-export"),
    path("catalog/sandboxes/<int:pk>/tools/new/", views.tool_create, name="tool-create"),
    path("catalog/tools/<int:pk>/", views.tool_detail, name="tool"),
    path("catalog/tools/<int:pk>/edit/", views.tool_edit, name="tool-edit"),
    path("catalog/tools/<int:pk>/delete/", views.tool_delete, name="tool-delete"),
    path("catalog/tools/<int:pk>/accept/", views.tool_accept, name="tool-accept"),
    path(
        "catalog/tools/<int:pk>/versions/<int:number>/diff/",
        views.tool_version_diff,
        name="tool-diff",
    ),
    path(
        "catalog/tools/<int:pk>/versions/<int:number>/rollback/",
        views.tool_rollback,
        name="tool-rollback",
    ),
    path("api/v1/sandboxes/", api.sandbox_list, name="api-sandboxes"),
    path("api/v1/sandboxes/<int:pk>/tools/", api.sandbox_tools, name="api-sandbox-tools"),
    path("api/v1/sandboxes/<int:pk>/prompt/", api.sandbox_prompt, name="api-sandbox-prompt"),
]
