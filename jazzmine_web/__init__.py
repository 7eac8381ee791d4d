"""Jazzmine Studio's Django project."""

from __future__ import annotations

# Loaded with Django, so that `task.delay()` in any process uses this app's broker settings.
from .celery import app as celery_app

__all__ = ["celery_app"]
