"""The core's `ScriptTool` of a catalog row: read by the models' code digest and the services.

Apart from both, and reading no model: the models compute a row's `code_digest` from it, and
the services (which import the models) build registries, images and exports with it.
"""

from __future__ import annotations

import logging
from typing import Any

from jazzmine.scripttools import ScriptTool, ScriptToolError
from jazzmine.scripttools.model import DEFAULT_TIMEOUT

logger = logging.getLogger(__name__)

SCRIPT_KIND = "script"  # `ToolKind.SCRIPT`, whose module imports this one


def script_tool_from_row(row: Any) -> ScriptTool | None:
    """Return the script tool a catalog row holds (None for a row that is not a whole one).

    Takes any row with the Tool's columns (a migration's too).
    """
    if row.kind != SCRIPT_KIND or not row.runtime:
        return None
    try:
        return ScriptTool(
            name=row.name,
            description=row.description,
            source=row.source,
            parameters=dict(row.schema or {"type": "object", "properties": {}}),
            runtime=row.runtime,
            always_allow=row.always_allow,
            timeout=float(row.timeout_seconds or DEFAULT_TIMEOUT),
            # Once each: a row stored before tool.json refused a name given twice still loads.
            secrets=list(dict.fromkeys(row.secrets)),
            dependencies=list(row.dependencies),
            extra=dict(row.extra or {}),
        )
    except ScriptToolError:
        # A bad row must not take every page of its sandbox down with it.
        logger.warning("script tool row %s is not a valid script tool", row.pk)
        return None
