from __future__ import annotations

from django.urls import path

from . import views

app_name = "scripttools"

urlpatterns = [
    path("catalog/script-tools/import/", views.script_tools_import, name="import"),
    path("catalog/sandboxes/<int:pk>/script-tools/new/", views.script_tool_create, name="create"),
    path("catalog/sandboxes/<int:pk>/script-tools.zip", views.script_tools_export, name="export"),
    path("catalog/tools/<int:pk>/script/edit/", views.script_tool_edit, name="edit"),
    path("catalog/tools/<int:pk>/trials/", views.trial_create, name="trial-create"),
    path("catalog/tools/<int:pk>/trials/<uuid:trial_id>/", views.trial_detail, name="trial"),
    path(
        "catalog/tools/<int:pk>/trials/accept-wheels/",
        views.trial_wheels_accept,
        name="trial-accept-wheels",
    ),
    path("catalog/tools/<int:pk>/publish/", views.tool_publish, name="publish"),
    path("v1/key", views.keychain, name="keychain"),
]
