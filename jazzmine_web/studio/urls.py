from __future__ import annotations

from django.urls import path

from . import views

urlpatterns = [
    path("pygments.css", views.pygments_css, name="pygments-css"),
]
