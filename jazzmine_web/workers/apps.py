from __future__ import annotations

from django.apps import AppConfig


class WorkersConfig(AppConfig):
    """The worker processes: who they are, that they are alive, and what each one holds."""

    name = "jazzmine_web.workers"
    label = "workers"
