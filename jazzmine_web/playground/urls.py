from __future__ import annotations

from django.urls import path

from . import views

app_name = "playground"

urlpatterns = [
    path("playground/", views.playground, name="index"),
    path("playground/prompt/", views.prompt_panel, name="prompt"),
    path("playground/settings/", views.llm_settings, name="settings"),
    path("playground/sessions/<uuid:session_id>/attempts/", views.attempt_list, name="attempts"),
    path("playground/sessions/<uuid:session_id>/compare/", views.compare, name="compare"),
]
