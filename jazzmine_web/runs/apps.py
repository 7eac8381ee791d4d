from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of scripts in sandboxes: their events, the worker that executes them, live streams."""

    name = "jazzmine_web.runs"
    label = "runs"

    def ready(self) -> None:
        # Imported now so that the executor's notion of "this process started" predates
        # every run this process creates (older unfinished runs were interrupted).
        from . import executor  # noqa: F401
