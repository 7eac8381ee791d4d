"""Regions of the tool page that apps above the catalog add for their own kinds of tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .models import Tool

ToolPanel = Callable[[Tool], dict[str, Any]]

# {tool kind: what its regions of the tool page show}. Each app registers its own in its
# `ready()`, so the catalog, below them, names none of them.
TOOL_PANELS: dict[str, ToolPanel] = {}


def tool_panel_register(*, kind: str, panel: ToolPanel) -> None:
    """Say what the tool page shows of tools of one kind: `panel(tool)` gives the context."""
    TOOL_PANELS[kind] = panel
