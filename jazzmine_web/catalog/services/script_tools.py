"""Writes of script tools (tool.json + script) as catalog rows: check them and save them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from jazzmine.core.tools import RegisteredTool, SandboxConfig, ToolRegistry
from jazzmine.scripttools import ScriptTool, ScriptToolError, register_script_tool
from jazzmine.scripttools.layout import files_size_check
from jazzmine.scripttools.model import MAX_JSON_DEPTH

from ...studio.db import holds_row
from ...studio.untrusted import nul_field, nul_message
from ..limits import bound
from ..models import Sandbox, Tool, ToolKind
from .audit import tool_audit_state, tool_change_announce
from .rules import (
    ADMIN_TOOL_FIELDS,
    admin_check,
    admin_fields_of_new,
    code_legibility_checked,
    description_checked,
    parameter_names_checked,
    prompt_text_checked,
    requirements_checked,
    secret_names_checked,
    tool_name_checked,
    tool_name_free,
    tool_room_check,
)
from .tools import (
    ACCEPTING_FIELDS,
    ToolChange,
    tags_clean,
    tool_accept_if_admin,
    tool_prompt,
    tool_version_create,
)


def script_tool_check(*, tool: ScriptTool, sandbox_name: str = "default") -> RegisteredTool:
    """Register a script tool in a scratch registry; raise ValidationError on any problem."""
    # Before anything copies the schema (each copy recurses, two frames a level): a form's
    # schema reaches here unbounded, a zip's was bounded as it was read.
    if tool.json_depth > MAX_JSON_DEPTH:
        raise ValidationError(f"tool.json is nested more than {MAX_JSON_DEPTH} levels deep")
    # What is stored is exported as a zip: it must be one the zip import takes back.
    try:
        files_size_check(tool)
    except ScriptToolError as exc:
        raise ValidationError(str(exc)) from None
    # First: the catalog can neither store nor look up text with a NUL (tool.json may spell
    # one `\u0000`, a script may hold the byte), and no tool needs one.
    field = nul_field({**tool.to_json_dict(), tool.script_filename: tool.source})
    if field is not None:
        raise ValidationError(nul_message(field))
    code_legibility_checked(
        tool.source, what=tool.script_filename, python=tool.script_filename.endswith(".py")
    )
    tool_name_checked(tool.name)
    description_checked(tool.description)
    requirements_checked(tool.dependencies)
    secret_names_checked(tool.secrets)
    parameter_names_checked(tool.properties)
    problem = bound("script_timeout_seconds").problem("timeout", tool.timeout)
    if problem:
        raise ValidationError(problem)
    scratch = ToolRegistry()
    if sandbox_name != "default":
        scratch.register_sandbox(SandboxConfig(name=sandbox_name))
    try:
        registered = register_script_tool(scratch, tool, sandbox=sandbox_name)
    except (TypeError, ValueError) as exc:
        raise ValidationError(str(exc)) from exc
    prompt_text_checked(registered.tool, tool_json=tool.to_json_dict())
    return registered


def _script_row_values(tool: ScriptTool, registered: RegisteredTool) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": [p.to_dict() for p in registered.tool.parameters],
        "dependencies": list(tool.dependencies),
        "secrets": list(tool.secrets),
        "source": tool.source,
        "always_allow": tool.always_allow,
        "runtime": tool.runtime,
        "schema": dict(tool.parameters),
        "timeout_seconds": float(tool.timeout),
        "extra": dict(tool.extra),
    }


@holds_row("existing")
def script_tool_save(
    *,
    sandbox: Sandbox,
    tool: ScriptTool,
    existing: Tool | None = None,
    author: AbstractBaseUser | None = None,
    note: str = "",
    tags: list[str] | None = None,
    actor: AbstractBaseUser | None = None,
) -> tuple[Tool, ToolChange]:
    """Create or change a script tool row; new code makes a new version and unpublishes it.

    A script tool is published only after a trial run of its current code passes, so any
    change of code, runtime, timeout or dependencies takes it out of the LLM's reach again.
    `always_allow` and `secrets` are admin-only (`actor`); changing them makes a version too.
    """
    if existing is None:
        tool_room_check(sandbox=sandbox)
    registered = script_tool_check(tool=tool, sandbox_name=sandbox.name)
    values = _script_row_values(tool, registered)
    cleaned_tags = tags_clean(tags) if tags is not None else None  # before anything is written
    tool_name_free(sandbox=sandbox, name=tool.name, other_than=existing and existing.pk)
    with transaction.atomic():
        if existing is None:
            admin_check(actor=actor, team=sandbox.team, fields=admin_fields_of_new(values))
            row = Tool(
                sandbox=sandbox,
                kind=ToolKind.SCRIPT,
                function_name=registered.function_name,
                is_async=registered.is_async,
                checksum=registered.checksum,
                tags=cleaned_tags or [],
                published=False,
                **values,
            )
            tool_accept_if_admin(tool=row, actor=actor)
            row.save()
            version = tool_version_create(tool=row, author=author, note=note or "Created")
            tool_change_announce(
                tool=row, actor=actor, action="tool_created", before={}, version=version
            )
            return row, ToolChange(changed=True, new_version=version)
        if cleaned_tags is not None:
            values["tags"] = cleaned_tags
        changed = {k: v for k, v in values.items() if getattr(existing, k) != v}
        code_changed = registered.checksum != existing.checksum
        if not changed and not code_changed:
            return existing, ToolChange(changed=False)
        prompt_changed = tool_prompt(existing) != registered.tool.build_prompt()
        admin_check(actor=actor, team=sandbox.team, fields=set(changed) & set(ADMIN_TOOL_FIELDS))
        before = tool_audit_state(existing)
        digest_before = existing.code_digest
        for key, value in changed.items():
            setattr(existing, key, value)
        # By what the checksum reads, not by the checksum alone: two codes can share 16 hex.
        code_changed = code_changed or existing.code_digest != digest_before
        existing.kind = ToolKind.SCRIPT
        existing.function_name = registered.function_name
        existing.checksum = registered.checksum
        if code_changed:
            existing.published = False
            existing.published_at = None
        if code_changed or set(changed) & ACCEPTING_FIELDS:
            tool_accept_if_admin(tool=existing, actor=actor)
        existing.save()
        # tool.json is versioned whole (`tool_json`): any change of it is a version, the
        # prompt's fields included; tags alone are not.
        version = (
            tool_version_create(tool=existing, author=author, note=note or "Edited")
            if code_changed or prompt_changed or set(changed) - {"tags"}
            else None
        )
        tool_change_announce(
            tool=existing, actor=actor, action="tool_changed", before=before, version=version
        )
    return existing, ToolChange(
        changed=True,
        new_version=version,
        code_changed=code_changed,
        prompt_changed=prompt_changed,
    )
