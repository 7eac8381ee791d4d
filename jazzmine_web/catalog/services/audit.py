"""What the audit trail hears of catalog changes: who changed what, before → after."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from ..models import Sandbox, Tool, ToolVersion
from ..signals import catalog_changed


def _shown(value: Any) -> Any:
    """Return a value as the audit keeps it: short text, JSON-safe."""
    if isinstance(value, str) and len(value) > 120:
        return value[:117] + "..."
    if isinstance(value, (dict, list)) and len(json.dumps(value, default=str)) > 300:
        return "(changed)"
    return value


def catalog_change_announce(
    *,
    sandbox: Sandbox,
    actor: AbstractBaseUser | None,
    action: str,
    target: str,
    changes: dict[str, tuple[Any, Any]] | None = None,
    note: str = "",
    sha256: str = "",
) -> None:
    """Tell listeners (the audit trail) what changed, by whom, before → after."""
    kept = {k: [_shown(before), _shown(after)] for k, (before, after) in (changes or {}).items()}
    if not note:
        parts = [f"{k}: {json.dumps(b, default=str)} → {json.dumps(a, default=str)}"
                 for k, (b, a) in kept.items()]  # fmt: skip
        note = f"{target}: " + ("; ".join(parts) if parts else action.replace("_", " "))
    catalog_changed.send(
        sender=Sandbox,
        sandbox=sandbox,
        actor=actor if actor is not None and actor.is_authenticated else None,
        action=action,
        target=target,
        changes=kept,
        note=note,
        sha256=sha256,
    )


def tool_audit_state(tool: Tool) -> dict[str, Any]:
    """Return what the audit compares of a tool: its fields, its code and its effective flag.

    The code by its checksum (the short name pages show) and by its whole digest: 16 hex
    chars collide after some 2^32 tries, and the trail must tell two such versions apart.
    """
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": list(tool.parameters),
        "dependencies": list(tool.dependencies),
        "secrets": list(tool.secrets),
        "always_allow": tool.always_allow,
        "always_allowed_in_effect": tool.is_always_allowed,
        "code_checksum": tool.checksum,
        "code_digest": tool.code_digest,
        "tags": list(tool.tags),
        "published": tool.published,
    }


def tool_change_announce(
    *,
    tool: Tool,
    actor: AbstractBaseUser | None,
    action: str,
    before: dict[str, Any],
    version: ToolVersion | None = None,
    note: str = "",
) -> None:
    """Tell the audit trail how a tool changed (the version it made, a pending acceptance)."""
    after = tool_audit_state(tool) if action != "tool_deleted" else {}
    keys = list(dict.fromkeys([*before, *after]))
    changes = {k: (before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)}
    target = f"tool {tool.name}" + (f" v{version.number}" if version is not None else "")
    if not note and tool.always_allow_pending and action != "tool_deleted":
        note = ""  # the generic before → after line, plus the pending remark below
        changes["always_allow_pending"] = (None, "waits for an admin to accept this code")
    catalog_change_announce(
        sandbox=tool.sandbox,
        actor=actor,
        action=action,
        target=target,
        changes=changes,
        note=note,
        sha256=tool.code_digest,
    )
