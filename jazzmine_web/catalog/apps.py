from __future__ import annotations

from django.apps import AppConfig


class CatalogConfig(AppConfig):
    """The team tool catalog: sandboxes, tools, versions, secrets and image builds."""

    name = "jazzmine_web.catalog"
    label = "catalog"
