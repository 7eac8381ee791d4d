from __future__ import annotations

from django.urls import path

from . import views

app_name = "runs"

urlpatterns = [
    path("runs/", views.run_list, name="list"),
    path("runs/<uuid:run_id>/", views.run_detail, name="detail"),
    path("runs/<uuid:run_id>/cancel/", views.run_cancel_view, name="cancel"),
    path("runs/<uuid:run_id>/wait/", views.run_wait_view, name="wait"),
]
