from __future__ import annotations

from django.apps import AppConfig


class StudioConfig(AppConfig):
    """The shell of the IDE: home page, layout, highlighting, demo data."""

    name = "jazzmine_web.studio"
    label = "studio"
