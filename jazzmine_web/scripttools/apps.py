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
        from ..runs.credentials import run_credentials_register
        from .services import (
            keychain_environment_per_tool,
            keychain_token_tool,
            keychain_tokens_revoke,
        )
        from .views import panel_context

        tool_panel_register(kind=ToolKind.SCRIPT, panel=panel_context)
        # Each run of a network-enabled sandbox gets one keychain token per script tool.
        run_credentials_register(
            "keychain",
            issue=lambda *, run, lifetime, tool_allowed: keychain_environment_per_tool(
                sandbox=run.sandbox, lifetime=lifetime, run=run, tool_allowed=tool_allowed
            ),
            revoke=keychain_tokens_revoke,
            tool_of=keychain_token_tool,
        )
