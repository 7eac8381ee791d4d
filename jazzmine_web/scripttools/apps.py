from __future__ import annotations

from django.apps import AppConfig


class ScriptToolsConfig(AppConfig):
    """Script tools in the catalog: lint, trial runs, the publish gate and the run keychain."""

    name = "jazzmine_web.scripttools"
    label = "scripttools"

    def ready(self) -> None:
        # Here, not at the top: models and views load only once the app registry is ready.
        from ..catalog.models import ToolKind
        from ..catalog.panels import tool_panel_register
        from .views import panel_context

        tool_panel_register(kind=ToolKind.SCRIPT, panel=panel_context)
