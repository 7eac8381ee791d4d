from __future__ import annotations

from django.urls import path

from . import api, views

app_name = "reviews"

urlpatterns = [
    path("reviews/", views.queue, name="queue"),
    path("reviews/audit/", views.audit, name="audit"),
    path("reviews/webhooks/", views.webhook_settings, name="webhooks"),
    path("reviews/sandboxes/<int:pk>/policy/", views.policy, name="policy"),
    path("reviews/<uuid:submission_id>/", views.review, name="review"),
    path("reviews/<uuid:submission_id>/row/", views.queue_row, name="row"),
    path("reviews/<uuid:submission_id>/reading/", views.edit_reading, name="edit-reading"),
    path(
        "reviews/<uuid:submission_id>/<str:action>/",
        views.decide,
        name="decide",
    ),
    path("api/v1/submissions/", api.submission_submit, name="api-submit"),
    path("api/v1/submissions/<uuid:submission_id>/", api.submission_status, name="api-status"),
    path("api/v1/submissions/<uuid:submission_id>/wait/", api.submission_wait, name="api-wait"),
    path(
        "api/v1/submissions/<uuid:submission_id>/withdraw/",
        api.submission_withdraw,
        name="api-withdraw",
    ),
    path(
        "api/v1/submissions/<uuid:submission_id>/cancel/", api.submission_cancel, name="api-cancel"
    ),
    path(
        "api/v1/submissions/<uuid:submission_id>/events/", api.submission_events, name="api-events"
    ),
    path("api/v1/webhook/", api.webhook, name="api-webhook"),
]
