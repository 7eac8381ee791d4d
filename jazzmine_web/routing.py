"""Websocket routes of every app."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from .catalog.consumers import BuildLogConsumer
from .playground.consumers import PlaygroundConsumer
from .reviews.consumers import ReviewQueueConsumer
from .runs.consumers import RunConsumer

websocket_urlpatterns: list[URLPattern | URLResolver] = [
    path("ws/builds/<int:build_id>/", BuildLogConsumer.as_asgi()),
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi()),
    path("ws/playground/", PlaygroundConsumer.as_asgi()),
]
websocket_urlpatterns += [path("ws/reviews/queue/", ReviewQueueConsumer.as_asgi())]
