from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of scripts in sandboxes: their events, the worker that executes them, live streams."""

    name = "jazzmine_web.runs"
    label = "runs"

    def ready(self) -> None:
        # Here, not at the top: the receivers import models, loaded once the registry is ready.
        from .receivers import receivers_connect

        receivers_connect()
