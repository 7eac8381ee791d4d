from __future__ import annotations

from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of scripts in sandboxes: their events, the worker that executes them, live streams."""

    name = "jazzmine_web.runs"
    label = "runs"
