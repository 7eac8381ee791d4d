"""Put a tool back to an earlier version, as a new version."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from jazzmine.scripttools import ScriptTool, ScriptToolError

from ..models import Tool, ToolKind, ToolVersion
from .script_tools import script_tool_save
from .tools import PROMPT_FIELDS, ToolChange, tool_update


def tool_rollback(
    *,
    tool: Tool,
    version: ToolVersion,
    author: AbstractBaseUser | None = None,
    actor: AbstractBaseUser | None = None,
) -> ToolChange:
    """Put a tool back to an earlier version (as a new version): code, dependencies, the
    prompt (name, description, parameters), and the secrets and always_allow the version
    recorded (admin-only when they differ). What a version did not record is kept as it is."""
    if version.tool_id != tool.pk:
        raise ValidationError(f"Version {version.pk} is not a version of tool {tool.name!r}")
    if tool.kind == ToolKind.SCRIPT and version.tool_json:
        try:
            old = ScriptTool.from_json_dict(
                version.tool_json.get("tool.json"),
                source=version.source,
                runtime=version.tool_json.get("runtime", "python3"),
            )
        except ScriptToolError as exc:
            raise ValidationError(str(exc)) from exc
        told = _review_remarks(tool, version, old.always_allow, list(old.secrets))
        _, change = script_tool_save(
            sandbox=tool.sandbox,
            tool=old,
            existing=tool,
            author=author,
            note=f"Rolled back to v{version.number}",
            actor=actor,
        )
        return replace(change, remarks=change.remarks + told) if change.changed else change
    restored: dict[str, Any] = {
        "source": version.source,
        "dependencies": list(version.dependencies),
    }
    # Versions recorded before these fields existed say nothing about them: keep today's.
    if version.always_allow is not None:
        restored["always_allow"] = version.always_allow
    if version.secrets is not None:
        restored["secrets"] = list(version.secrets)
    remarks = _review_remarks(tool, version, version.always_allow, version.secrets)
    if version.interface is not None:
        restored.update({k: version.interface[k] for k in PROMPT_FIELDS if k in version.interface})
    else:
        remarks += (
            f"v{version.number} was recorded before prompts were versioned: the name, "
            "description and parameters were kept as they are",
        )
    change = tool_update(
        tool=tool,
        author=author,
        note=f"Rolled back to v{version.number}",
        actor=actor,
        **restored,
    )
    return replace(change, remarks=remarks) if remarks else change


def _review_remarks(
    tool: Tool, version: ToolVersion, always_allow: bool | None, secrets: list[str] | None
) -> tuple[str, ...]:
    """Say what of review and secrets a rollback puts back: more than code and prompt."""
    said: list[str] = []
    if always_allow is not None and always_allow != tool.always_allow:
        said.append(
            f"always-allow is {'on' if always_allow else 'off'} again, as v{version.number} "
            f"had it: {'scripts call' if always_allow else 'a script calling'} {tool.name} "
            f"{'without review' if always_allow else 'it waits for review'}"
        )
    if secrets is not None and sorted(secrets) != sorted(tool.secrets):
        names = ", ".join(sorted(secrets)) or "none"
        said.append(f"its secrets are as v{version.number} had them again: {names}")
    return tuple(said)
