from __future__ import annotations

from django.apps import AppConfig


class ScriptToolsConfig(AppConfig):
    """Script tools in the catalog: lint, trial runs, the publish gate and the run keychain."""

    name = "jazzmine_web.scripttools"
    label = "scripttools"
